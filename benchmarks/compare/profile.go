package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"runtime/pprof"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/google/pprof/profile"
)

// profiles holds one profiler per variant and profiled phase, in the order
// they were first asked for.
type profiles struct {
	byKey map[string]*profiler
	order []*profiler
}

func newProfiles() *profiles { return &profiles{byKey: make(map[string]*profiler)} }

// get returns the profiler of variant's phase, creating it.
func (ps *profiles) get(variant, phase string) *profiler {
	k := variant + "\x00" + phase
	if p := ps.byKey[k]; p != nil {
		return p
	}
	p := &profiler{variant: variant, phase: phase, flat: map[string]int64{}, cum: map[string]int64{}, cmds: map[string]cmdStat{}}
	ps.byKey[k] = p
	ps.order = append(ps.order, p)
	return p
}

// profiler accumulates the CPU profiles of one variant's measured parts of
// one phase over the rounds, and the Redis command statistics of the same
// parts, so that the report can say where each system spends its time per
// task. The Go profile covers the whole benchmark process (producers,
// server and handlers), as the CPU figures do.
type profiler struct {
	variant, phase string

	running bool
	buf     bytes.Buffer
	err     error

	tasks   int
	samples int64
	total   int64            // CPU ns in all samples
	flat    map[string]int64 // function → CPU ns with it as the leaf
	cum     map[string]int64 // function → CPU ns with it on the stack
	cmds    map[string]cmdStat
}

func (p *profiler) start() error {
	p.buf.Reset()
	if err := pprof.StartCPUProfile(&p.buf); err != nil {
		return fmt.Errorf("CPU profile: %w", err)
	}
	p.running = true
	return nil
}

func (p *profiler) stop() {
	pprof.StopCPUProfile()
	p.running = false
}

// add takes in the profile just stopped and the command statistics between
// s0 and s1, for a part that handled n tasks.
func (p *profiler) add(n int, s0, s1 sample) {
	p.tasks += n
	for name, b := range s1.commands {
		a := s0.commands[name]
		d := p.cmds[name]
		d.calls += b.calls - a.calls
		d.usec += b.usec - a.usec
		p.cmds[name] = d
	}
	prof, err := profile.Parse(&p.buf)
	if err != nil {
		p.err = err
		return
	}
	vi := len(prof.SampleType) - 1 // cpu/nanoseconds is the last
	for _, s := range prof.Sample {
		v := s.Value[vi]
		p.samples++
		p.total += v
		seen := map[string]bool{}
		for li, loc := range s.Location {
			for k, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				name := line.Function.Name
				if li == 0 && k == 0 {
					p.flat[name] += v
				}
				if !seen[name] {
					seen[name] = true
					p.cum[name] += v
				}
			}
		}
	}
}

// print writes each profiler's top five functions by flat and by
// cumulative CPU per task, and the top five Redis commands by Redis time
// per task.
func (ps *profiles) print(w io.Writer) {
	for _, p := range ps.order {
		if p.tasks == 0 {
			continue
		}
		fmt.Fprintf(w, "\nCPU profile, %s, %s: %d tasks, %d samples, %.1f µs/task sampled in the Go process\n",
			p.phase, p.variant, p.tasks, p.samples, perTask(p.total, p.tasks))
		if p.err != nil {
			fmt.Fprintf(w, "  (profile unreadable: %v)\n", p.err)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "  top 5 flat\tµs/task\t%\ttop 5 cumulative, in the queue's own code\tµs/task\t%\n")
		flat := top(p.flat, 5, func(string) bool { return true })
		cum := top(p.cum, 5, ownCode)
		for i := range 5 {
			cell := func(xs []kv) string {
				if i >= len(xs) {
					return "\t\t"
				}
				return fmt.Sprintf("%s\t%.2f\t%.1f", shortName(xs[i].k), perTask(xs[i].v, p.tasks), pct(xs[i].v, p.total))
			}
			fmt.Fprintf(tw, "  %s\t%s\n", cell(flat), cell(cum))
		}
		tw.Flush()
		if len(p.cmds) == 0 {
			continue
		}
		cmds := make(map[string]int64, len(p.cmds))
		for name, c := range p.cmds {
			cmds[name] = c.usec
		}
		fmt.Fprint(w, "  Redis commands by time, INFO commandstats (a script's time includes the commands it calls, which are listed too):\n")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "  command\tcalls/task\tµs/task\tµs/call\n")
		for _, c := range top(cmds, 5, func(string) bool { return true }) {
			st := p.cmds[c.k]
			fmt.Fprintf(tw, "  %s\t%.3f\t%.2f\t%.2f\n", c.k, float64(st.calls)/float64(p.tasks),
				float64(st.usec)/float64(p.tasks), float64(st.usec)/float64(max(st.calls, 1)))
		}
		tw.Flush()
	}
}

type kv struct {
	k string
	v int64
}

// top returns the n largest entries of m that keep accepts, largest first.
func top(m map[string]int64, n int, keep func(string) bool) []kv {
	var xs []kv
	for k, v := range m {
		if keep(k) {
			xs = append(xs, kv{k, v})
		}
	}
	slices.SortFunc(xs, func(a, b kv) int { return cmp.Or(cmp.Compare(b.v, a.v), strings.Compare(a.k, b.k)) })
	return xs[:min(n, len(xs))]
}

// ownCode reports whether fn belongs to one of the queues under test: the
// cumulative list names the parts of each queue (client, fetcher,
// workers, finish) and how much of the CPU each takes, with the runtime,
// go-redis and encoding/json work they cause included.
func ownCode(fn string) bool {
	return strings.HasPrefix(fn, "github.com/chronos-go/chronos/runtime") || strings.HasPrefix(fn, "github.com/hibiken/asynq")
}

// shortName trims the module paths off a function name.
func shortName(fn string) string {
	for _, r := range [][2]string{
		{"github.com/chronos-go/chronos/runtime/internal/", ""},
		{"github.com/chronos-go/chronos/runtime.", "chronos."},
		{"github.com/hibiken/", ""},
		{"github.com/redis/go-redis/v9.", "redis."},
		{"github.com/redis/go-redis/v9/", "redis/"},
	} {
		fn = strings.ReplaceAll(fn, r[0], r[1])
	}
	if len(fn) > 60 {
		fn = fn[:57] + "..."
	}
	return fn
}

func perTask(ns int64, tasks int) float64 { return float64(ns) / 1e3 / float64(max(tasks, 1)) }

func pct(v, total int64) float64 { return 100 * float64(v) / float64(max(total, 1)) }
