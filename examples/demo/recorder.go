package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/chronos-go/chronos/examples/healthcheck"
	chronos "github.com/chronos-go/chronos/runtime"
)

// recorder prints what happens in the cluster as it happens and keeps
// what the summary counts. It is safe for concurrent use: every instance's
// handlers report to it.
type recorder struct {
	out   io.Writer
	quiet bool
	start time.Time

	mu      sync.Mutex
	leader  string                        // current leader as last observed; "" for none
	cluster map[time.Time]map[string]bool // trigger → task IDs
	local   map[string]map[string]bool    // queue and trigger → task IDs
	runs    int
	changed chan struct{} // closed and replaced on every recorded run
}

func newRecorder(out io.Writer, quiet bool) *recorder {
	return &recorder{
		out:     &lockedWriter{w: out},
		quiet:   quiet,
		start:   time.Now(),
		cluster: map[time.Time]map[string]bool{},
		local:   map[string]map[string]bool{},
		changed: make(chan struct{}),
	}
}

// printf prints one event line, prefixed with the time since the start.
func (r *recorder) printf(format string, args ...any) {
	if r.quiet {
		return
	}
	fmt.Fprintf(r.out, "%5.1fs  %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
}

// say prints a line whatever -quiet says.
func (r *recorder) say(format string, args ...any) {
	fmt.Fprintf(r.out, format+"\n", args...)
}

// setLeader records the current leader; it reports whether it changed.
func (r *recorder) setLeader(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id == r.leader {
		return false
	}
	r.leader = id
	return true
}

// record is the healthcheck.Monitor.Report of every instance.
func (r *recorder) record(c healthcheck.Check) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs++
	trig := c.Trigger.Local().Format("15:04:05")
	if c.Queue == chronos.LocalQueue {
		key := c.Instance + " " + c.Trigger.String()
		if r.local[key] == nil {
			r.local[key] = map[string]bool{}
		}
		r.local[key][c.TaskID] = true
		r.printf("local    trigger %s  ran on its own instance %-7s %s%s", trig, c.Instance, c.Detail, errText(c.Err))
	} else {
		if r.cluster[c.Trigger] == nil {
			r.cluster[c.Trigger] = map[string]bool{}
		}
		r.cluster[c.Trigger][c.TaskID] = true
		dup := ""
		if n := len(r.cluster[c.Trigger]); n > 1 {
			dup = fmt.Sprintf("  DUPLICATE: %d tasks for this trigger", n)
		}
		retry := ""
		if c.Attempt > 1 {
			retry = fmt.Sprintf("  (attempt %d)", c.Attempt)
		}
		r.printf("cluster  trigger %s  leader %-9s ran on %-7s %s%s%s%s", trig, orNone(r.leader), c.Instance, c.Detail, errText(c.Err), retry, dup)
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// ran reports whether every trigger in want has run, and otherwise
// returns a channel closed at the next recorded run.
func (r *recorder) ran(want []time.Time) (bool, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range want {
		if r.cluster[t] == nil {
			return false, r.changed
		}
	}
	return true, nil
}

// lockedWriter serializes writes to w: the recorder's lines and the
// runtime's log records come from many goroutines, one Write per line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return "  ERROR: " + err.Error()
}

func orNone(id string) string {
	if id == "" {
		return "(none)"
	}
	return id
}
