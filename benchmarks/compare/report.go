package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// metric is one row of the report.
type metric int

// The metrics, in report order.
const (
	mEnqSerial metric = iota
	mEnqConc
	mProc
	mE2E
	mE2EEnqueue
	mLatP50
	mLatP99
	mLatMax
	mEnqAllocs
	mProcAllocs
	mEnqBytes
	mProcBytes
	mEnqTrips
	mProcTrips
	mE2ETrips
	mEnqCPU
	mProcCPU
	mE2ECPU
	mEnqRedisCPU
	mProcRedisCPU
	mE2ERedisCPU
	mE2ETotalCPU
	mProcRedisWait
	mE2ERedisWait
	mProcDups
	mE2EDups
	numMetrics
)

// label returns the row label of m, with the sizes of this run.
func (m metric) label(cfg *config) string {
	switch m {
	case mEnqSerial:
		return "enqueue, 1 client (tasks/s)"
	case mEnqConc:
		return fmt.Sprintf("enqueue, %d clients (tasks/s)", cfg.clients)
	case mProc:
		return fmt.Sprintf("process %d pre-filled, %d handlers (tasks/s)", cfg.tasks, cfg.concurrency)
	case mE2E:
		return fmt.Sprintf("end-to-end %d tasks (tasks/s)", cfg.tasks)
	case mE2EEnqueue:
		return "end-to-end, its enqueueing alone (tasks/s)"
	case mLatP50:
		return fmt.Sprintf("latency p50 at %d/s (ms)", cfg.rate)
	case mLatP99:
		return fmt.Sprintf("latency p99 at %d/s (ms)", cfg.rate)
	case mLatMax:
		return fmt.Sprintf("latency max at %d/s (ms)", cfg.rate)
	case mEnqAllocs:
		return "allocs/task, enqueue"
	case mProcAllocs:
		return "allocs/task, process"
	case mEnqBytes:
		return "bytes allocated/task, enqueue"
	case mProcBytes:
		return "bytes allocated/task, process"
	case mEnqTrips:
		return "Redis round trips/task, enqueue"
	case mProcTrips:
		return "Redis round trips/task, process"
	case mE2ETrips:
		return "Redis round trips/task, end-to-end"
	case mEnqCPU:
		return "benchmark process CPU µs/task, enqueue"
	case mProcCPU:
		return "benchmark process CPU µs/task, process"
	case mE2ECPU:
		return "benchmark process CPU µs/task, end-to-end"
	case mEnqRedisCPU:
		return "redis-server CPU µs/task, enqueue"
	case mProcRedisCPU:
		return "redis-server CPU µs/task, process"
	case mE2ERedisCPU:
		return "redis-server CPU µs/task, end-to-end"
	case mE2ETotalCPU:
		return "both together, CPU µs/task, end-to-end"
	case mProcRedisWait:
		return "redis-server waiting for a CPU, process (% of time)"
	case mE2ERedisWait:
		return "redis-server waiting for a CPU, end-to-end (% of time)"
	case mProcDups:
		return "duplicate runs, process"
	case mE2EDups:
		return "duplicate runs, end-to-end"
	}
	return "metric " + strconv.Itoa(int(m))
}

// higherIsBetter reports whether a larger value of m is better.
func (m metric) higherIsBetter() bool { return m <= mE2EEnqueue }

// results collects every round's value of every metric for every variant.
type results struct {
	v [numMetrics]map[string][]float64
}

func (r *results) add(variant string, vs values) {
	for m, x := range vs {
		if r.v[m] == nil {
			r.v[m] = make(map[string][]float64)
		}
		r.v[m][variant] = append(r.v[m][variant], x)
	}
}

// median returns the median of variant's values of m and whether there are
// any.
func (r *results) median(m metric, variant string) (float64, bool) {
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
func (r *results) spread(m metric, variant string) string {
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
	for i, v := range variants {
		fmt.Fprintf(tw, "%s\t", v.label)
		if i > 0 {
			fmt.Fprintf(tw, "chronos/%s\t", v.short)
		}
	}
	fmt.Fprint(tw, "better\t\n")
	for m := range numMetrics {
		if r.v[m] == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t", m.label(cfg))
		base, haveBase := r.median(m, variants[0].label)
		for i, v := range variants {
			x, ok := r.median(m, v.label)
			switch {
			case !ok:
				fmt.Fprint(tw, "-\t")
			default:
				fmt.Fprintf(tw, "%s\t", format(x))
			}
			if i == 0 {
				continue
			}
			if ok && haveBase && x != 0 {
				fmt.Fprintf(tw, "%.3g\t", base/x)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		if m.higherIsBetter() {
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
	for _, m := range []metric{mEnqSerial, mEnqConc, mProc, mE2E, mLatP50, mLatP99} {
		if r.v[m] == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t", m.label(cfg))
		for _, v := range variants {
			s := r.spread(m, v.label)
			if s == "" {
				s = "-"
			}
			fmt.Fprintf(tw, "%s\t", s)
		}
		fmt.Fprint(tw, "\n")
	}
	tw.Flush()
}

// printTargets says whether the medians meet the targets set for chronos:
// end-to-end throughput at least twice asynq's (as configured by default),
// and p99 latency under 10 ms at a light load.
func (r *results) printTargets(w io.Writer, cfg *config) {
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	var lines []string
	c, okC := r.median(mE2E, "chronos")
	if a, okA := r.median(mE2E, "asynq (default)"); okC && okA && a > 0 {
		lines = append(lines, fmt.Sprintf("end-to-end >= 2x asynq: %.2fx, %s", c/a, verdict(c >= 2*a)))
	}
	if p99, ok := r.median(mLatP99, "chronos"); ok {
		lines = append(lines, fmt.Sprintf("latency p99 < 10 ms at %d/s: %s ms, %s", cfg.rate, format(p99), verdict(p99 < 10)))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\ntargets for chronos (medians): %s\n", strings.Join(lines, "; "))
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
