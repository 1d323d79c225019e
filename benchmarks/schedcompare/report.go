package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// column is one system's results, a result per round.
type column struct {
	name   string
	rounds []*result
}

// metric is one row of the report.
type metric struct {
	name   string
	format string
	get    func(*result) float64 // NaN: not measured for this system
	spread bool                  // also listed in the min–max table
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// metrics are the report's rows, in order.
var metrics = []metric{
	{"fires in window", "%.0f", func(r *result) float64 { return float64(r.fires) }, false},
	{"fires/s", "%.0f", func(r *result) float64 { return float64(r.fires) / r.window.Seconds() }, false},
	{"heap B/schedule", "%.0f", func(r *result) float64 { return r.heapPerSched }, true},
	{"heap B/schedule at first firing", "%.0f", func(r *result) float64 {
		if r.heapAtStartup == 0 {
			return math.NaN()
		}
		return r.heapAtStartup
	}, false},
	{"CPU µs/fire (process)", "%.1f", func(r *result) float64 { return us(r.cpuPerFire) }, true},
	{"redis CPU µs/fire", "%.1f", func(r *result) float64 { return us(r.redisCPUFire) }, true},
	{"last of burst lag p50 ms", "%.1f", func(r *result) float64 { return ms(r.lastP50) }, true},
	{"last of burst lag p99 ms", "%.1f", func(r *result) float64 { return ms(r.lastP99) }, true},
	{"last of burst lag max ms", "%.1f", func(r *result) float64 { return ms(r.lastMax) }, false},
	{"bursts", "%.0f", func(r *result) float64 { return float64(r.bursts) }, false},
	{"lag p50 ms (per trigger)", "%.1f", func(r *result) float64 { return ms(r.lagP50) }, false},
	{"lag p99 ms (per trigger)", "%.1f", func(r *result) float64 { return ms(r.lagP99) }, true},
	{"lag max ms (per trigger)", "%.1f", func(r *result) float64 { return ms(r.lagMax) }, false},
	{"not forwarded when read", "%.0f", func(r *result) float64 {
		if r.name != "chronos" {
			return math.NaN()
		}
		return float64(r.unforwarded)
	}, false},
	{"round trips in window", "%.0f", func(r *result) float64 { return float64(r.rtt) }, false},
	{"round trips/fire (hook)", "%.3f", func(r *result) float64 { return r.rttPerFire }, false},
	{"client commands/fire (hook)", "%.2f", func(r *result) float64 { return r.sentPerFire }, false},
	{"EVALSHA/fire (hook)", "%.3f", func(r *result) float64 { return r.scriptPerFire }, false},
	{"redis commands/fire (INFO)", "%.2f", func(r *result) float64 { return r.cmdsPerFire }, false},
	{"setup s (register + leader)", "%.1f", func(r *result) float64 { return r.registerTime.Seconds() }, false},
	{"start-up s (to first firing)", "%.2f", func(r *result) float64 {
		if r.startup == 0 {
			return math.NaN()
		}
		return r.startup.Seconds()
	}, true},
}

// median returns the median of m over c's rounds (the mean of the middle
// two for an even count), ignoring rounds that did not measure it.
func (c column) median(m metric) float64 {
	var xs []float64
	for _, r := range c.rounds {
		if v := m.get(r); !math.IsNaN(v) {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// minMax returns the smallest and largest value of m over c's rounds.
func (c column) minMax(m metric) (lo, hi float64) {
	lo, hi = math.NaN(), math.NaN()
	for _, r := range c.rounds {
		v := m.get(r)
		if math.IsNaN(v) {
			continue
		}
		if math.IsNaN(lo) || v < lo {
			lo = v
		}
		if math.IsNaN(hi) || v > hi {
			hi = v
		}
	}
	return lo, hi
}

// progress is one line for a finished measurement.
func progress(r *result) string {
	s := fmt.Sprintf("%s: %d fires, last of burst lag p50/p99 %.1f/%.1f ms, per trigger p99 %.1f ms, CPU %.1f µs/fire, redis %.1f µs/fire, heap %.0f B/schedule",
		r.name, r.fires, ms(r.lastP50), ms(r.lastP99), ms(r.lagP99), us(r.cpuPerFire), us(r.redisCPUFire), r.heapPerSched)
	if r.startup > 0 {
		s += fmt.Sprintf(", start-up %.2f s", r.startup.Seconds())
	}
	return s
}

// report prints one table: a row per metric, a column per system with the
// median over its rounds, and the ratio asynq / chronos of the medians when
// both ran; with more than one round, a second table of the min–max of the
// headline metrics.
func report(out io.Writer, cols []column) {
	rounds := 0
	for _, c := range cols {
		rounds = max(rounds, len(c.rounds))
	}
	if rounds > 1 {
		fmt.Fprintf(out, "medians of %d rounds:\n", rounds)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "metric\t")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t", c.name)
	}
	both := len(cols) == 2 && cols[0].name == "chronos" && cols[1].name == "asynq"
	if both {
		fmt.Fprint(tw, "asynq/chronos\t")
	}
	fmt.Fprintln(tw)
	for _, m := range metrics {
		fmt.Fprintf(tw, "%s\t", m.name)
		for _, c := range cols {
			fmt.Fprint(tw, cell(m.format, c.median(m))+"\t")
		}
		if both {
			if a, c := cols[1].median(m), cols[0].median(m); c != 0 && !math.IsNaN(a) && !math.IsNaN(c) {
				fmt.Fprintf(tw, "%.2f\t", a/c)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if rounds > 1 {
		fmt.Fprintln(out, "min–max over rounds:")
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "metric\t")
		for _, c := range cols {
			fmt.Fprintf(tw, "%s\t", c.name)
		}
		fmt.Fprintln(tw)
		for _, m := range metrics {
			if !m.spread {
				continue
			}
			fmt.Fprintf(tw, "%s\t", m.name)
			for _, c := range cols {
				lo, hi := c.minMax(m)
				fmt.Fprint(tw, cell(m.format, lo)+" – "+cell(m.format, hi)+"\t")
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	var notes []string
	for _, c := range cols {
		for k, r := range c.rounds {
			for _, n := range r.notes {
				if rounds > 1 {
					n = fmt.Sprintf("round %d: %s", k+1, n)
				}
				notes = append(notes, n)
			}
		}
	}
	for _, n := range notes {
		fmt.Fprintln(out, "note:", n)
	}
	fmt.Fprintln(out, "note: one instance of each. asynq's Scheduler has no leader election: N replicas enqueue N copies of")
	fmt.Fprintln(out, "      every trigger; chronos's leader enqueues each trigger once, however many replicas run.")
}

// cell formats v for the table; "-" when not measured.
func cell(format string, v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strings.TrimSpace(fmt.Sprintf(format, v))
}
