package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// report prints one table: a row per metric, a column per system, and the
// ratio asynq / chronos when both ran.
func report(out io.Writer, rs []*result) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "metric\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t", r.name)
	}
	both := len(rs) == 2
	if both {
		fmt.Fprint(tw, "asynq/chronos\t")
	}
	fmt.Fprintln(tw)
	row := func(name string, v func(*result) float64, format string) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, r := range rs {
			fmt.Fprintf(tw, format+"\t", v(r))
		}
		if both {
			if a, c := v(rs[1]), v(rs[0]); c != 0 {
				fmt.Fprintf(tw, "%.2f\t", a/c)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	row("fires in window", func(r *result) float64 { return float64(r.fires) }, "%.0f")
	row("fires/s", func(r *result) float64 { return float64(r.fires) / r.window.Seconds() }, "%.0f")
	row("heap B/schedule", func(r *result) float64 { return r.heapPerSched }, "%.0f")
	row("CPU µs/fire (process)", func(r *result) float64 { return us(r.cpuPerFire) }, "%.1f")
	row("redis CPU µs/fire", func(r *result) float64 { return us(r.redisCPUFire) }, "%.1f")
	row("lag p50 ms", func(r *result) float64 { return ms(r.lagP50) }, "%.1f")
	row("lag p99 ms", func(r *result) float64 { return ms(r.lagP99) }, "%.1f")
	row("lag max ms", func(r *result) float64 { return ms(r.lagMax) }, "%.1f")
	row("round trips in window", func(r *result) float64 { return float64(r.rtt) }, "%.0f")
	row("round trips/fire (hook)", func(r *result) float64 { return r.rttPerFire }, "%.3f")
	row("client commands/fire (hook)", func(r *result) float64 { return r.sentPerFire }, "%.2f")
	row("redis commands/fire (INFO)", func(r *result) float64 { return r.cmdsPerFire }, "%.2f")
	row("setup s (register+ready)", func(r *result) float64 { return r.registerTime.Seconds() }, "%.1f")
	tw.Flush()
	for _, r := range rs {
		for _, n := range r.notes {
			fmt.Fprintln(out, "note:", n)
		}
	}
	fmt.Fprintln(out, "note: one instance of each. asynq's Scheduler has no leader election: N replicas enqueue N copies of")
	fmt.Fprintln(out, "      every trigger; chronos's leader enqueues each trigger once, however many replicas run.")
}
