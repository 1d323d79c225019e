package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// metric is one row of the report: a key that measurements store their
// values under, the row label, and which way is better.
type metric struct {
	key    string
	label  string
	higher bool // a larger value is better
}

// Fixed metric keys. The enqueue rates have one key per producer count
// (enqKey).
const (
	mProc          = "proc"
	mE2E           = "e2e"
	mE2EEnqueue    = "e2e-enqueue"
	mLatP50        = "lat-p50"
	mLatP99        = "lat-p99"
	mLatMax        = "lat-max"
	mEnqAllocs1    = "enq-allocs-1"
	mEnqAllocsN    = "enq-allocs-n"
	mProcAllocs    = "proc-allocs"
	mE2EAllocs     = "e2e-allocs"
	mEnqBytes1     = "enq-bytes-1"
	mProcBytes     = "proc-bytes"
	mE2EBytes      = "e2e-bytes"
	mEnqTrips1     = "enq-trips-1"
	mEnqTripsN     = "enq-trips-n"
	mProcTrips     = "proc-trips"
	mE2ETrips      = "e2e-trips"
	mEnqCPU1       = "enq-cpu-1"
	mEnqCPUN       = "enq-cpu-n"
	mProcCPU       = "proc-cpu"
	mE2ECPU        = "e2e-cpu"
	mEnqRedisCPU1  = "enq-redis-1"
	mEnqRedisCPUN  = "enq-redis-n"
	mProcRedisCPU  = "proc-redis"
	mE2ERedisCPU   = "e2e-redis"
	mE2ETotalCPU   = "e2e-total-cpu"
	mProcRedisWait = "proc-wait"
	mE2ERedisWait  = "e2e-wait"
	mProcDups      = "proc-dups"
	mE2EDups       = "e2e-dups"
)

// enqKey is the key of the enqueue rate with n producers.
func enqKey(n int) string { return "enq-" + strconv.Itoa(n) }

// metrics returns the rows of the report for cfg, in order.
func metrics(cfg *config) []metric {
	var ms []metric
	for _, n := range cfg.enqueueClients {
		ms = append(ms, metric{enqKey(n), fmt.Sprintf("enqueue, %s (tasks/s)", producers(n)), true})
	}
	maxP := producers(slices.Max(cfg.enqueueClients))
	ms = append(ms,
		metric{mProc, fmt.Sprintf("process %d pre-filled, %d handlers (tasks/s)", cfg.tasks, cfg.concurrency), true},
		metric{mE2E, fmt.Sprintf("end-to-end %d tasks, %s (tasks/s)", cfg.tasks, producers(cfg.clients)), true},
		metric{mE2EEnqueue, "end-to-end, its enqueueing alone (tasks/s)", true},
		metric{mLatP50, fmt.Sprintf("latency p50 at %d/s (ms)", cfg.rate), false},
		metric{mLatP99, fmt.Sprintf("latency p99 at %d/s (ms)", cfg.rate), false},
		metric{mLatMax, fmt.Sprintf("latency max at %d/s (ms)", cfg.rate), false},
		metric{mEnqAllocs1, "allocs/task, enqueue, 1 producer", false},
		metric{mEnqAllocsN, "allocs/task, enqueue, " + maxP, false},
		metric{mProcAllocs, "allocs/task, process", false},
		metric{mE2EAllocs, "allocs/task, end-to-end", false},
		metric{mEnqBytes1, "bytes allocated/task, enqueue, 1 producer", false},
		metric{mProcBytes, "bytes allocated/task, process", false},
		metric{mE2EBytes, "bytes allocated/task, end-to-end", false},
		metric{mEnqTrips1, "Redis round trips/task, enqueue, 1 producer", false},
		metric{mEnqTripsN, "Redis round trips/task, enqueue, " + maxP, false},
		metric{mProcTrips, "Redis round trips/task, process", false},
		metric{mE2ETrips, "Redis round trips/task, end-to-end", false},
		metric{mEnqCPU1, "benchmark process CPU µs/task, enqueue, 1 producer", false},
		metric{mEnqCPUN, "benchmark process CPU µs/task, enqueue, " + maxP, false},
		metric{mProcCPU, "benchmark process CPU µs/task, process", false},
		metric{mE2ECPU, "benchmark process CPU µs/task, end-to-end", false},
		metric{mEnqRedisCPU1, "redis-server CPU µs/task, enqueue, 1 producer", false},
		metric{mEnqRedisCPUN, "redis-server CPU µs/task, enqueue, " + maxP, false},
		metric{mProcRedisCPU, "redis-server CPU µs/task, process", false},
		metric{mE2ERedisCPU, "redis-server CPU µs/task, end-to-end", false},
		metric{mE2ETotalCPU, "both together, CPU µs/task, end-to-end", false},
		metric{mProcRedisWait, "redis-server waiting for a CPU, process (% of time)", false},
		metric{mE2ERedisWait, "redis-server waiting for a CPU, end-to-end (% of time)", false},
		metric{mProcDups, "duplicate runs, process", false},
		metric{mE2EDups, "duplicate runs, end-to-end", false},
	)
	return ms
}

// producers is "1 producer" or "n producers".
func producers(n int) string {
	if n == 1 {
		return "1 producer"
	}
	return fmt.Sprintf("%d producers", n)
}

// results collects every round's value of every metric for every variant.
type results struct {
	v map[string]map[string][]float64 // metric key → variant label → values
}

func (r *results) add(variant string, vs values) {
	if r.v == nil {
		r.v = make(map[string]map[string][]float64)
	}
	for m, x := range vs {
		if r.v[m] == nil {
			r.v[m] = make(map[string][]float64)
		}
		r.v[m][variant] = append(r.v[m][variant], x)
	}
}

// median returns the median of variant's values of m and whether there are
// any.
func (r *results) median(m, variant string) (float64, bool) {
	xs := slices.Clone(r.v[m][variant])
	if len(xs) == 0 {
		return 0, false
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2], true
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2, true
}

// spread returns "min–max" of variant's values of m, or "" for one value.
func (r *results) spread(m, variant string) string {
	xs := r.v[m][variant]
	if len(xs) < 2 {
		return ""
	}
	return format(slices.Min(xs)) + "–" + format(slices.Max(xs))
}

// print writes the summary table: the median over the rounds of every
// metric, for chronos, asynq as configured by default, and asynq with a
// short TaskCheckInterval where that changes anything, with the ratios
// chronos/asynq.
func (r *results) print(w io.Writer, cfg *config, variants []variant) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "metric (median of rounds)\t")
	base := variants[0]
	for i, v := range variants {
		fmt.Fprintf(tw, "%s\t", v.label)
		if i > 0 && v.ratio {
			fmt.Fprintf(tw, "%s/%s\t", base.short, v.short)
		}
	}
	fmt.Fprint(tw, "better\t\n")
	ms := metrics(cfg)
	for _, m := range ms {
		if r.v[m.key] == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t", m.label)
		b, haveBase := r.median(m.key, base.label)
		for i, v := range variants {
			x, ok := r.median(m.key, v.label)
			switch {
			case !ok:
				fmt.Fprint(tw, "-\t")
			default:
				fmt.Fprintf(tw, "%s\t", format(x))
			}
			if i == 0 || !v.ratio {
				continue
			}
			if ok && haveBase && x != 0 {
				fmt.Fprintf(tw, "%.3g\t", b/x)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		if m.higher {
			fmt.Fprint(tw, "higher\t\n")
		} else {
			fmt.Fprint(tw, "lower\t\n")
		}
	}
	tw.Flush()
	r.printTargets(w, cfg)

	if cfg.rounds < 2 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "spread over rounds (min–max)\t")
	for _, v := range variants {
		fmt.Fprintf(tw, "%s\t", v.label)
	}
	fmt.Fprint(tw, "\n")
	for _, m := range ms {
		if !m.higher && m.key != mLatP50 && m.key != mLatP99 && m.key != mE2ETotalCPU {
			continue
		}
		if r.v[m.key] == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t", m.label)
		for _, v := range variants {
			s := r.spread(m.key, v.label)
			if s == "" {
				s = "-"
			}
			fmt.Fprintf(tw, "%s\t", s)
		}
		fmt.Fprint(tw, "\n")
	}
	tw.Flush()
}

// printTargets says whether the medians meet the targets set for chronos
// (benchmarks/README.md): end-to-end throughput at least 5× asynq's (as
// configured by default) with at most a third of its CPU per task, enqueue
// at least asynq's rate with every producer count and twice it with
// concurrent producers, and p99 latency at a light load of at most 2 ms.
func (r *results) printTargets(w io.Writer, cfg *config) {
	const c, a = "chronos", "asynq (default)"
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	var lines []string
	ratio := func(m string) (float64, bool) {
		x, okC := r.median(m, c)
		y, okA := r.median(m, a)
		if !okC || !okA || y == 0 {
			return 0, false
		}
		return x / y, true
	}
	if q, ok := ratio(mE2E); ok {
		lines = append(lines, fmt.Sprintf("end-to-end >= 5x asynq: %.2fx, %s", q, verdict(q >= 5)))
	}
	if q, ok := ratio(mE2ETotalCPU); ok {
		lines = append(lines, fmt.Sprintf("CPU/task end-to-end <= 1/3 of asynq's: %.2f, %s", q, verdict(q <= 1.0/3)))
	}
	for _, n := range cfg.enqueueClients {
		want := 1.0
		if n > 1 {
			want = 2 // concurrent Enqueue calls on one Client share round trips
		}
		if q, ok := ratio(enqKey(n)); ok {
			lines = append(lines, fmt.Sprintf("enqueue with %s >= %gx asynq: %.2fx, %s", producers(n), want, q, verdict(q >= want)))
		}
		x, okP := r.median(enqKey(n), perProducerLabel)
		y, okA := r.median(enqKey(n), a)
		if n > 1 && okP && okA && y > 0 {
			lines = append(lines, fmt.Sprintf("enqueue with %s, a Client each, >= 1x asynq: %.2fx, %s", producers(n), x/y, verdict(x >= y)))
		}
	}
	if p99, ok := r.median(mLatP99, c); ok {
		lines = append(lines, fmt.Sprintf("latency p99 <= 2 ms at %d/s: %s ms, %s", cfg.rate, format(p99), verdict(p99 <= 2)))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\ntargets for chronos (medians):\n  %s\n", strings.Join(lines, "\n  "))
}

// format prints x with about three significant digits, without exponent.
func format(x float64) string {
	switch {
	case x >= 1000:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case x >= 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case x >= 10:
		return strconv.FormatFloat(x, 'f', 2, 64)
	default:
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
}
