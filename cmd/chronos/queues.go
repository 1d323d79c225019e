package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// rateWindow is the window of the DONE column of "chronos queues".
const rateWindow = time.Minute

func queueCommands() []command {
	return []command{
		{name: "queues", synopsis: "", run: runQueues,
			summary: "List the queues: ready, running, delayed and dead tasks, pause, and the runs of the last minute."},
		{name: "queue", synopsis: "pause|resume QUEUE [-force]", run: runQueue,
			summary: "Pause a queue (servers stop taking its tasks; enqueues go on) or resume it, cluster-wide."},
	}
}

// queueView is a queue as "chronos queues" shows it.
type queueView struct {
	Queue              string    `json:"queue"`
	Ready              int64     `json:"ready"`
	Running            int64     `json:"running"`
	Delayed            int64     `json:"delayed"`
	Dead               int       `json:"dead"`
	Paused             bool      `json:"paused"`
	OldestRunningSince time.Time `json:"oldest_running_since,omitzero"`
	Succeeded          int       `json:"succeeded_1m"`
	Retried            int       `json:"retried_1m"`
	Failed             int       `json:"dead_1m"`
}

func runQueues(ctx context.Context, c *cli, args []string) error {
	if _, err := c.parse(c.flagSet("queues"), args); err != nil {
		return err
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	list, err := queueViews(ctx, insp)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		if err := c.requireNamespace(ctx); err != nil {
			return err
		}
	}
	if c.json {
		return c.printJSON(list)
	}
	t := newTable(c.stdout, "QUEUE", "READY", "RUNNING", "DELAYED", "DEAD", "PAUSED", "OLDEST RUNNING", "DONE/1M")
	for _, q := range list {
		done := ""
		if q.Succeeded+q.Retried+q.Failed > 0 {
			done = fmt.Sprintf("%d ok, %d retry, %d dead", q.Succeeded, q.Retried, q.Failed)
		}
		t.row(q.Queue, itoa(q.Ready), itoa(q.Running), itoa(q.Delayed), strconv.Itoa(q.Dead), yesNo(q.Paused),
			fmtTime(q.OldestRunningSince), done)
	}
	return t.flush()
}

// queueViews describes every queue that has keys, dead letters or recent
// runs, sorted by name.
func queueViews(ctx context.Context, insp *chronos.Inspector) ([]queueView, error) {
	names, err := insp.Queues(ctx)
	if err != nil {
		return nil, err
	}
	dead, err := insp.DeadCountsByQueue(ctx)
	if err != nil {
		return nil, err
	}
	rates, err := insp.QueueRates(ctx, rateWindow)
	if err != nil {
		return nil, err
	}
	for q := range dead {
		names = append(names, q)
	}
	for q := range rates {
		names = append(names, q)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := []queueView{}
	for _, q := range names {
		info, err := insp.QueueInfo(ctx, q)
		if err != nil {
			return nil, err
		}
		v := queueView{Queue: q, Ready: info.Ready, Running: info.Running, Delayed: info.Delayed, Dead: dead[q],
			Paused: info.Paused, OldestRunningSince: utc(info.OldestRunningSince)}
		if r := rates[q]; r != nil {
			v.Succeeded, v.Retried, v.Failed = r.Succeeded, r.Retried, r.Dead
		}
		out = append(out, v)
	}
	return out, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func runQueue(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("queue")
	force := fs.Bool("force", false, "pause a queue that has no tasks, runs or schedules yet")
	pos, err := c.parse(fs, args, "pause|resume", "QUEUE")
	if err != nil {
		return err
	}
	verb, q := pos[0], pos[1]
	if verb != "pause" && verb != "resume" {
		return usagef("unknown verb %q: want pause or resume", verb)
	}
	if q == chronos.LocalQueue {
		// Not a queue in Redis: the tasks of isolated schedules run in
		// the instance that fires them.
		return usagef("queue %s is where isolated schedules run their tasks, in process: pause the schedule instead", q)
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	info, err := insp.QueueInfo(ctx, q)
	if err != nil {
		return err
	}
	if verb == "resume" {
		if info.Paused {
			if err := insp.ResumeQueue(ctx, q); err != nil {
				return err
			}
		}
		return c.printQueueState(q, false, info.Paused, "resumed queue %s\n", "queue %s was not paused\n")
	}
	if !info.Paused && !*force {
		if err := checkQueue(ctx, insp, q); err != nil {
			return err
		}
	}
	if !info.Paused {
		if err := insp.PauseQueue(ctx, q); err != nil {
			return err
		}
	}
	return c.printQueueState(q, true, !info.Paused,
		"paused queue %s: servers stop taking its tasks within about a second; enqueues go on\n", "queue %s was paused already\n")
}

// printQueueState reports a pause or resume: done or, when changed is
// false, that it was so already.
func (c *cli) printQueueState(q string, paused, changed bool, doneMsg, sameMsg string) error {
	if c.json {
		return c.printJSON(struct {
			Queue   string `json:"queue"`
			Paused  bool   `json:"paused"`
			Changed bool   `json:"changed"`
		}{q, paused, changed})
	}
	if changed {
		fmt.Fprintf(c.stdout, doneMsg, q)
	} else {
		fmt.Fprintf(c.stdout, sameMsg, q)
	}
	return nil
}

// checkQueue returns a notFoundError unless queue q is known: it has keys,
// dead letters or recent runs, or a job of a schedule enqueues to it. A
// mistyped name would otherwise pause nothing and say it did.
func checkQueue(ctx context.Context, insp *chronos.Inspector, q string) error {
	list, err := queueViews(ctx, insp)
	if err != nil {
		return err
	}
	var names []string
	for _, v := range list {
		if v.Queue == q {
			return nil
		}
		names = append(names, v.Queue)
	}
	scheds, err := insp.Schedules(ctx)
	if err != nil {
		return err
	}
	for _, s := range scheds {
		for _, j := range s.Jobs {
			if j.Queue == q {
				return nil
			}
		}
	}
	hint := fmt.Sprintf(" (its queues: %s; -force pauses it anyway)", orNone(strings.Join(names, ", ")))
	return &notFoundError{what: "queue", id: q, hint: hint, err: chronos.ErrTaskNotFound}
}
