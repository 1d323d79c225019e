package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// defaultListLimit is the default of -n for listings.
const defaultListLimit = 20

func taskCommands() []command {
	return []command{
		{name: "dead", synopsis: "[-n N]", run: runDead,
			summary: "List dead tasks (retries exhausted or skipped), most recent death first."},
		{name: "requeue", synopsis: "TASK_ID", run: runRequeue,
			summary: "Move a dead task back to its queue, ready at once, with its retry count reset."},
		{name: "delete", synopsis: "TASK_ID -yes", run: runDelete,
			summary: "Delete a dead task for good; without -yes, name it and delete nothing."},
		{name: "runs", synopsis: "ID|KIND [-n N] [-kind]", run: runRuns,
			summary: "List the run records of the tasks a schedule fired, or of a task kind, most recent first."},
	}
}

func limitFlag(fs *flag.FlagSet) *int {
	return fs.Int("n", defaultListLimit, "list at most `N` entries")
}

func checkLimit(n int) error {
	if n <= 0 {
		return usagef("-n %d: want a positive number", n)
	}
	return nil
}

func runDead(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("dead")
	n := limitFlag(fs)
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	if err := checkLimit(*n); err != nil {
		return err
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	list, err := insp.ListDead(ctx, chronos.ListOptions{Limit: *n})
	if err != nil {
		return err
	}
	total, err := insp.CountDead(ctx)
	if err != nil {
		return err
	}
	if total == 0 {
		if err := c.requireNamespace(ctx); err != nil {
			return err
		}
	}
	if c.json {
		type attemptView struct {
			Start    time.Time `json:"start"`
			Duration string    `json:"duration"`
			Error    string    `json:"error"`
		}
		type deadView struct {
			ID          string          `json:"id"`
			Kind        string          `json:"kind"`
			Queue       string          `json:"queue"`
			Args        json.RawMessage `json:"args,omitempty"`
			MaxRetry    int             `json:"max_retry"`
			Attempts    int             `json:"attempts"`
			EnqueuedAt  time.Time       `json:"enqueued_at,omitzero"`
			DiedAt      time.Time       `json:"died_at,omitzero"`
			Reason      string          `json:"reason"`
			ScheduleID  string          `json:"schedule_id,omitempty"`
			TriggerTime time.Time       `json:"trigger_time,omitzero"`
			History     []attemptView   `json:"history"`
		}
		out := []deadView{}
		for _, d := range list {
			v := deadView{ID: d.ID, Kind: d.Kind, Queue: d.Queue, Args: d.Args, MaxRetry: d.MaxRetry, Attempts: d.Attempts,
				EnqueuedAt: utc(d.EnqueuedAt), DiedAt: utc(d.DiedAt), Reason: d.Reason, ScheduleID: d.ScheduleID,
				TriggerTime: utc(d.TriggerTime), History: []attemptView{}}
			if !json.Valid(v.Args) {
				v.Args = nil
			}
			for _, a := range d.History {
				v.History = append(v.History, attemptView{utc(a.Start), a.Duration.String(), a.Error})
			}
			out = append(out, v)
		}
		return c.printJSON(out)
	}
	t := newTable(c.stdout, "ID", "KIND", "QUEUE", "ATTEMPTS", "DIED", "SCHEDULE", "REASON")
	for _, d := range list {
		t.row(d.ID, d.Kind, d.Queue, strconv.Itoa(d.Attempts), fmtTime(d.DiedAt), d.ScheduleID, truncate(d.Reason, 60))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if total > len(list) {
		fmt.Fprintf(c.stdout, "(%d of %d dead tasks; -n shows more)\n", len(list), total)
	}
	return nil
}

func runRequeue(ctx context.Context, c *cli, args []string) error {
	pos, err := c.parse(c.flagSet("requeue"), args, "TASK_ID")
	if err != nil {
		return err
	}
	id := pos[0]
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	info, err := insp.RequeueDead(ctx, id)
	if err != nil {
		return checkFound(err, "dead task", id)
	}
	if c.json {
		return c.printJSON(struct {
			ID    string `json:"id"`
			Kind  string `json:"kind"`
			Queue string `json:"queue"`
		}{info.ID, info.Kind, info.Queue})
	}
	fmt.Fprintf(c.stdout, "requeued %s (%s) to queue %s\n", info.ID, info.Kind, info.Queue)
	return nil
}

// runScanLimit bounds the run records of each kind that "chronos runs ID"
// reads to find a schedule's: more than ServerConfig.RunRetention keeps
// by default.
const runScanLimit = 10_000

func runDelete(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("delete")
	yes := fs.Bool("yes", false, "delete it: a deleted task cannot be requeued")
	pos, err := c.parse(fs, args, "TASK_ID")
	if err != nil {
		return err
	}
	id := pos[0]
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	d, err := insp.GetDead(ctx, id)
	if err != nil {
		return checkFound(err, "dead task", id)
	}
	what := fmt.Sprintf("dead task %s (%s, queue %s, died %s)", d.ID, d.Kind, d.Queue, fmtTime(d.DiedAt))
	if !*yes {
		return fmt.Errorf("%s not deleted: deleting is final, so add -yes (or requeue it: chronos requeue %s)", what, id)
	}
	if err := insp.DeleteDead(ctx, id); err != nil {
		return checkFound(err, "dead task", id)
	}
	if c.json {
		return c.printJSON(struct {
			ID      string `json:"id"`
			Kind    string `json:"kind"`
			Queue   string `json:"queue"`
			Deleted bool   `json:"deleted"`
		}{d.ID, d.Kind, d.Queue, true})
	}
	fmt.Fprintf(c.stdout, "deleted %s\n", what)
	return nil
}

func runRuns(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("runs")
	n := limitFlag(fs)
	asKind := fs.Bool("kind", false, "read the argument as a task kind even if a schedule has that ID")
	pos, err := c.parse(fs, args, "ID|KIND")
	if err != nil {
		return err
	}
	if err := checkLimit(*n); err != nil {
		return err
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	arg := pos[0]
	var list []*chronos.RunRecord
	s, err := insp.Schedule(ctx, arg)
	switch {
	case err == nil && !*asKind:
		list, err = runsOfSchedule(ctx, insp, s, *n)
	case err == nil || errors.Is(err, chronos.ErrScheduleNotFound):
		if list, err = insp.ListRuns(ctx, arg, *n); err == nil && len(list) == 0 {
			err = checkKind(ctx, insp, arg)
		}
	}
	if err != nil {
		return err
	}
	if c.json {
		type runView struct {
			TaskID      string          `json:"task_id"`
			Kind        string          `json:"kind"`
			Queue       string          `json:"queue"`
			Status      string          `json:"status"`
			Attempt     int             `json:"attempt"`
			Start       time.Time       `json:"start,omitzero"`
			Duration    string          `json:"duration"`
			Result      json.RawMessage `json:"result,omitempty"`
			Error       string          `json:"error,omitempty"`
			ScheduleID  string          `json:"schedule_id,omitempty"`
			TriggerTime time.Time       `json:"trigger_time,omitzero"`
			Instance    string          `json:"instance,omitempty"`
		}
		out := []runView{}
		for _, r := range list {
			v := runView{r.TaskID, r.Kind, r.Queue, r.Status, r.Attempt, utc(r.Start), r.Duration.String(),
				r.Result, r.Error, r.ScheduleID, utc(r.TriggerTime), r.Instance}
			if !json.Valid(v.Result) {
				v.Result = nil
			}
			out = append(out, v)
		}
		return c.printJSON(out)
	}
	t := newTable(c.stdout, "TASK", "KIND", "STATUS", "ATTEMPT", "START", "DURATION", "SCHEDULE", "TRIGGER", "ERROR/RESULT")
	for _, r := range list {
		detail := r.Error
		if detail == "" {
			detail = string(r.Result)
		}
		t.row(r.TaskID, r.Kind, r.Status, strconv.Itoa(r.Attempt), fmtTime(r.Start), fmtDuration(r.Duration), r.ScheduleID,
			fmtTime(r.TriggerTime), truncate(detail, 60))
	}
	return t.flush()
}

// runsOfSchedule returns the newest n run records of the tasks schedule s
// fired: the records of its jobs' kinds that name it.
func runsOfSchedule(ctx context.Context, insp *chronos.Inspector, s *chronos.ScheduleInfo, n int) ([]*chronos.RunRecord, error) {
	var kinds []string
	for _, j := range s.Jobs {
		if !slices.Contains(kinds, j.Kind) {
			kinds = append(kinds, j.Kind)
		}
	}
	var out []*chronos.RunRecord
	for _, k := range kinds {
		recs, err := insp.ListRuns(ctx, k, runScanLimit)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if r.ScheduleID == s.ID {
				out = append(out, r)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *chronos.RunRecord) int { return b.Start.Compare(a.Start) })
	return out[:min(n, len(out))], nil
}

// checkKind returns a notFoundError unless kind has run records or is the
// kind of a job of some schedule (whose tasks have not run yet).
func checkKind(ctx context.Context, insp *chronos.Inspector, kind string) error {
	kinds, err := insp.RunKinds(ctx)
	if err != nil || slices.Contains(kinds, kind) {
		return err
	}
	list, err := insp.Schedules(ctx)
	if err != nil {
		return err
	}
	for _, s := range list {
		for _, j := range s.Jobs {
			if j.Kind == kind {
				return nil
			}
		}
	}
	hint := " (kinds with run records: " + orNone(strings.Join(kinds, ", ")) + ")"
	return &notFoundError{what: "schedule or task kind", id: kind, hint: hint, err: chronos.ErrTaskNotFound}
}
