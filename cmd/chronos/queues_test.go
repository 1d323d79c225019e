package main

import (
	"context"
	"strings"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// queue returns the queue named q as "chronos queues -json" shows it.
func (c *cluster) queue(q string) queueView {
	c.t.Helper()
	var list []queueView
	c.okJSON(&list, "queues")
	for _, v := range list {
		if v.Queue == q {
			return v
		}
	}
	c.t.Fatalf("no queue %q in %+v", q, list)
	return queueView{}
}

func TestQueuesShowTheirTasksAndRecentRuns(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	client := chronos.NewClient(c.rdb)
	_, err := client.Enqueue(ctx, doomed{})
	must(t, err)
	_, err = client.Enqueue(ctx, report{Format: "later"}, chronos.WithProcessIn(time.Hour))
	must(t, err)
	var q queueView
	eventually(t, "the doomed task to die", func() bool {
		q = c.queue("default")
		return q.Dead == 1
	})
	if q.Delayed != 1 || q.Ready != 0 || q.Running != 0 || q.Paused || q.Failed != 1 {
		t.Fatalf("default = %+v, want one delayed, one dead, a dead run in the last minute", q)
	}
	out := c.ok("queues")
	if header := strings.Fields(strings.SplitN(out, "\n", 2)[0]); strings.Join(header, " ") !=
		"QUEUE READY RUNNING DELAYED DEAD PAUSED OLDEST RUNNING DONE/1M" {
		t.Fatalf("header %q", header)
	}
	if row := lineOf(t, out, "default"); !hasFields(row, "default 0 0 1 1 no - 0 ok, 0 retry, 1 dead") {
		t.Fatalf("row %q", row)
	}
}

// A paused queue keeps taking enqueues and no server takes its tasks,
// until it is resumed.
func TestQueuePauseAndResume(t *testing.T) {
	c := startCluster(t)
	if out := c.ok("queue", "pause", "default"); out !=
		"paused queue default: servers stop taking its tasks within about a second; enqueues go on\n" {
		t.Fatalf("pause printed %q", out)
	}
	if out := c.ok("queue", "pause", "default"); out != "queue default was paused already\n" {
		t.Fatalf("second pause printed %q", out)
	}
	time.Sleep(1500 * time.Millisecond) // the servers notice within about a second
	_, err := chronos.NewClient(c.rdb).Enqueue(context.Background(), report{Format: "held"})
	must(t, err)
	time.Sleep(500 * time.Millisecond)
	if q := c.queue("default"); !q.Paused || q.Ready != 1 {
		t.Fatalf("paused default = %+v, want the task held ready", q)
	}
	if row := lineOf(t, c.ok("queues"), "default"); !hasFields(row, "default 1 0 0 0 yes") {
		t.Fatalf("row %q", row)
	}
	if out := c.ok("queue", "resume", "default"); out != "resumed queue default\n" {
		t.Fatalf("resume printed %q", out)
	}
	eventually(t, "the held task to run", func() bool { return c.queue("default").Ready == 0 })
	var st struct {
		Queue   string `json:"queue"`
		Paused  bool   `json:"paused"`
		Changed bool   `json:"changed"`
	}
	c.okJSON(&st, "queue", "resume", "default")
	if st.Queue != "default" || st.Paused || st.Changed {
		t.Fatalf("second resume = %+v, want unchanged", st)
	}
	if out := c.ok("queue", "resume", "default"); out != "queue default was not paused\n" {
		t.Fatalf("resume printed %q", out)
	}
}

// A queue nothing uses is most likely a typo: pausing it needs -force.
func TestQueuePauseOfAnUnknownQueueNeedsForce(t *testing.T) {
	c := startCluster(t)
	r := c.chronos("queue", "pause", "defualt")
	want := "chronos queue: no queue \"defualt\" in namespace \"chronos\" (its queues: default; -force pauses it anyway)\n"
	if r.code != exitFail || r.stderr != want {
		t.Fatalf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}
	c.ok("queue", "pause", "defualt", "-force")
	if q := c.queue("defualt"); !q.Paused {
		t.Fatalf("defualt = %+v, want paused", q)
	}
	// Isolated schedules run their tasks in process: "local" is no queue.
	for _, args := range [][]string{{"queue", "stop", "default"}, {"queue", "pause"}, {"queue", "pause", "local"}} {
		if r := c.chronos(args...); r.code != exitUsage || !strings.Contains(r.stderr, "usage: chronos queue pause|resume QUEUE") {
			t.Errorf("chronos %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}
