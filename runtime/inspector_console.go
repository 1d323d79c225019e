package chronos

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// This file adds the reads an operator console needs beyond the CLI's:
// which queues and kinds exist, the tasks waiting in a queue, a task found
// by ID wherever it is, dead letters by queue and kind, recent throughput,
// and what a backfill would fire before it is asked for. All of them only
// read; they are bounded so that a console polling them cannot block Redis.

// TaskState says where a stored task is.
type TaskState string

// The states of a stored task.
const (
	TaskReady   TaskState = "ready"   // in its queue's stream, waiting for a worker
	TaskRunning TaskState = "running" // taken by a worker and not finished (or awaiting recovery)
	TaskDelayed TaskState = "delayed" // waiting for its time: a delayed enqueue or a retry
	TaskDead    TaskState = "dead"    // in the dead letters
)

// MaxBackfill is the most firings one BackfillSchedule request makes; the
// leader drops the fire times of the range beyond it.
const MaxBackfill = maxBackfill

// maxTaskScan bounds the entries that one filtered listing or one search
// by ID examines per queue (or in the dead letters, or per run kind).
const maxTaskScan = 10_000

// StoredTask is a task as Redis holds it, in any state.
type StoredTask struct {
	ID       string
	Kind     string
	Queue    string
	State    TaskState
	Args     json.RawMessage // as enqueued
	MaxRetry int
	Attempts int // runs made
	// EnqueuedAt is when the task was first enqueued.
	EnqueuedAt time.Time
	// Due is when a delayed task falls due; for a ready or running task,
	// when it entered its queue's stream.
	Due         time.Time
	ScheduleID  string
	TriggerTime time.Time
	History     []AttemptRecord // failed runs, oldest first; at most the last 20
	// DiedAt and Reason are set for dead tasks only.
	DiedAt time.Time
	Reason string
}

// TaskFilter narrows a task listing. The zero value lists the first 100
// tasks of every kind.
type TaskFilter struct {
	Kind   string // only tasks of this kind; "" for every kind
	Offset int    // matching tasks to skip
	Limit  int    // most tasks returned; default 100
}

func (f TaskFilter) limit() int {
	if f.Limit <= 0 {
		return 100
	}
	return f.Limit
}

func (f TaskFilter) match(kind string) bool { return f.Kind == "" || f.Kind == kind }

// Queues returns the names of the namespace's queues, sorted: every queue
// with a stream (created by the first server that serves it or the first
// requeue), delayed tasks or a pause. A queue that was never used has no
// keys and is not listed. It costs a SCAN of the keyspace.
func (i *Inspector) Queues(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	for _, p := range []struct {
		pattern string
		cut     func(string) (string, bool)
	}{
		{i.queue.K.StreamPattern(), i.queue.K.StreamQueue},
		{i.queue.K.DelayedPattern(), i.queue.K.DelayedQueue},
	} {
		keys, err := i.queue.ScanKeys(ctx, p.pattern, maxTaskScan)
		if err != nil {
			return nil, fmt.Errorf("chronos: list queues: %w", err)
		}
		for _, k := range keys {
			if q, ok := p.cut(k); ok {
				seen[q] = true
			}
		}
	}
	paused, err := i.queue.C.SMembers(ctx, i.queue.K.Paused()).Result()
	if err != nil {
		return nil, fmt.Errorf("chronos: list queues: %w", err)
	}
	for _, q := range paused {
		seen[q] = true
	}
	return sortedNames(seen), nil
}

// RunKinds returns the task kinds that have run records, sorted. It costs a
// SCAN of the keyspace.
func (i *Inspector) RunKinds(ctx context.Context) ([]string, error) {
	keys, err := i.queue.ScanKeys(ctx, i.queue.K.RunsPattern(), maxTaskScan)
	if err != nil {
		return nil, fmt.Errorf("chronos: list run kinds: %w", err)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if kind, ok := i.queue.K.RunsKind(k); ok {
			seen[kind] = true
		}
	}
	return sortedNames(seen), nil
}

// ListTasks returns the tasks of queue in state TaskReady, TaskRunning or
// TaskDelayed that match f: ready and running tasks oldest first, delayed
// tasks earliest due first. At most 10,000 tasks are examined per call, so
// a filter over a larger queue may miss matches further down.
func (i *Inspector) ListTasks(ctx context.Context, queue string, state TaskState, f TaskFilter) ([]*StoredTask, error) {
	var (
		out []*StoredTask
		err error
	)
	switch state {
	case TaskReady, TaskRunning:
		out, err = i.listStream(ctx, queue, state, f)
	case TaskDelayed:
		out, err = i.listDelayed(ctx, queue, f)
	default:
		return nil, fmt.Errorf("chronos: list tasks of %q: state %q: want ready, running or delayed", queue, state)
	}
	if err != nil {
		return nil, fmt.Errorf("chronos: list %s tasks of %q: %w", state, queue, err)
	}
	return out, nil
}

func (i *Inspector) listStream(ctx context.Context, queue string, state TaskState, f TaskFilter) ([]*StoredTask, error) {
	last, err := i.queue.LastDelivered(ctx, queue)
	if err != nil {
		return nil, err
	}
	start, end := "-", last
	if state == TaskReady {
		start, end = "("+last, "+"
		if last == "0-0" {
			start = "-"
		}
	} else if last == "0-0" {
		return nil, nil
	}
	skip, out := f.Offset, []*StoredTask{}
	for scanned := 0; scanned < maxTaskScan; {
		es, err := i.queue.StreamRange(ctx, queue, start, end, 500)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			m, err := rdb.Decode([]byte(e.Msg))
			if err != nil || !f.match(m.Kind) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			out = append(out, newStoredTask(m, state, entryAddedAt(e.ID)))
			if len(out) == f.limit() {
				return out, nil
			}
		}
		scanned += len(es)
		if len(es) < 500 {
			break
		}
		start = "(" + es[len(es)-1].ID
	}
	return out, nil
}

func (i *Inspector) listDelayed(ctx context.Context, queue string, f TaskFilter) ([]*StoredTask, error) {
	// Without a kind to match, Redis skips the offset; with one, only the
	// matches count towards it.
	off, skip, out := 0, max(f.Offset, 0), []*StoredTask{}
	if f.Kind == "" {
		off, skip = skip, 0
	}
	for scanned := 0; scanned < maxTaskScan; {
		ds, err := i.queue.DelayedRange(ctx, queue, off, 500)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			m, err := rdb.Decode([]byte(d.Msg))
			if err != nil || !f.match(m.Kind) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			out = append(out, newStoredTask(m, TaskDelayed, d.Due))
			if len(out) == f.limit() {
				return out, nil
			}
		}
		scanned += len(ds)
		off += len(ds)
		if len(ds) < 500 {
			break
		}
	}
	return out, nil
}

// SearchDead returns the dead letters of queue ("" for every queue) that
// match f, most recent death first. At most 10,000 dead letters are
// examined per call.
func (i *Inspector) SearchDead(ctx context.Context, queue string, f TaskFilter) ([]*DeadTask, error) {
	skip, out := f.Offset, []*DeadTask{}
	for off := 0; off < maxTaskScan; off += 500 {
		ms, err := i.queue.ListDead(ctx, off, 500)
		if err != nil {
			return nil, fmt.Errorf("chronos: search dead tasks: %w", err)
		}
		for _, m := range ms {
			if (queue != "" && m.Queue != queue) || !f.match(m.Kind) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			out = append(out, deadTask(m))
			if len(out) == f.limit() {
				return out, nil
			}
		}
		if len(ms) < 500 {
			break
		}
	}
	return out, nil
}

// DeadCountsByQueue returns the number of dead letters of each queue that
// has any. It reads every dead letter once (at most
// ServerConfig.DeadRetention), so poll it sparingly.
func (i *Inspector) DeadCountsByQueue(ctx context.Context) (map[string]int, error) {
	n, err := i.queue.DeadCountsByQueue(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: count dead tasks by queue: %w", err)
	}
	return n, nil
}

// GetTask finds task id wherever it is: in the dead letters, or ready,
// running or delayed in one of queues (every queue Queues lists when none
// is given). It returns an error wrapping ErrTaskNotFound when the task is
// in none of them: it never existed, or it finished (see TaskRuns) or was
// deleted. For an ID made by this package the search of a stream starts
// shortly before the ID's creation time; otherwise at most the first
// 10,000 entries of each queue are examined.
func (i *Inspector) GetTask(ctx context.Context, id string, queues ...string) (*StoredTask, error) {
	if m, err := i.queue.GetDead(ctx, id); err == nil {
		t := newStoredTask(m, TaskDead, time.Time{})
		if m.DiedAt != 0 {
			t.DiedAt = time.UnixMilli(m.DiedAt)
		}
		t.Reason = m.Reason
		return t, nil
	} else if !errors.Is(err, rdb.ErrNotFound) {
		return nil, fmt.Errorf("chronos: get task %s: %w", id, err)
	}
	if len(queues) == 0 {
		var err error
		if queues, err = i.Queues(ctx); err != nil {
			return nil, fmt.Errorf("chronos: get task %s: %w", id, err)
		}
	}
	for _, q := range queues {
		t, err := i.findInStream(ctx, q, id)
		if err != nil {
			return nil, fmt.Errorf("chronos: get task %s: %w", id, err)
		}
		if t != nil {
			return t, nil
		}
		d, err := i.queue.FindDelayed(ctx, q, id)
		if err == nil {
			if m, err := rdb.Decode([]byte(d.Msg)); err == nil {
				return newStoredTask(m, TaskDelayed, d.Due), nil
			}
		} else if !errors.Is(err, rdb.ErrNotFound) {
			return nil, fmt.Errorf("chronos: get task %s: %w", id, err)
		}
	}
	return nil, fmt.Errorf("chronos: get task %s: %w", id, ErrTaskNotFound)
}

// taskIDClockSlack is how long before its ID's creation time a task's stream
// entry may appear: stream IDs come from the Redis server's clock, task
// IDs from the enqueuer's.
const taskIDClockSlack = 10 * time.Minute

func (i *Inspector) findInStream(ctx context.Context, queue, id string) (*StoredTask, error) {
	start := "-"
	if at, ok := rdb.IDTime(id); ok {
		start = strconv.FormatInt(max(at.Add(-taskIDClockSlack).UnixMilli(), 0), 10)
	}
	needle := `"id":"` + id + `"`
	for scanned := 0; scanned < maxTaskScan; {
		es, err := i.queue.StreamRange(ctx, queue, start, "+", 500)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if !strings.Contains(e.Msg, needle) {
				continue
			}
			m, err := rdb.Decode([]byte(e.Msg))
			if err != nil || m.ID != id {
				continue
			}
			last, err := i.queue.LastDelivered(ctx, queue)
			if err != nil {
				return nil, err
			}
			state := TaskReady
			if !streamEntryAfter(e.ID, last) {
				state = TaskRunning
			}
			return newStoredTask(m, state, entryAddedAt(e.ID)), nil
		}
		scanned += len(es)
		if len(es) < 500 {
			break
		}
		start = "(" + es[len(es)-1].ID
	}
	return nil, nil
}

// TaskRuns returns the run records of task id, newest first, from the
// records of kind (of every kind RunKinds lists when kind is ""). A task
// that finished is no longer in any queue; its run records remain for
// about ServerConfig.RunRetention runs of its kind.
func (i *Inspector) TaskRuns(ctx context.Context, id, kind string) ([]*RunRecord, error) {
	kinds := []string{kind}
	if kind == "" {
		var err error
		if kinds, err = i.RunKinds(ctx); err != nil {
			return nil, fmt.Errorf("chronos: runs of task %s: %w", id, err)
		}
	}
	var out []*RunRecord
	for _, k := range kinds {
		var (
			recs []rdb.RunRecord
			err  error
		)
		if at, ok := rdb.IDTime(id); ok {
			start := strconv.FormatInt(max(at.Add(-taskIDClockSlack).UnixMilli(), 0), 10)
			recs, err = i.queue.RunsRange(ctx, k, start, "+", maxTaskScan)
		} else {
			recs, err = i.queue.ListRuns(ctx, k, maxTaskScan)
		}
		if err != nil {
			return nil, fmt.Errorf("chronos: runs of task %s: %w", id, err)
		}
		for _, r := range recs {
			if r.TaskID == id {
				out = append(out, newRunRecord(k, r))
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *RunRecord) int { return b.Start.Compare(a.Start) })
	return out, nil
}

// QueueRate counts the runs of one queue that finished within a window,
// from the run records (so nothing is counted when ServerConfig.RunRetention
// is negative).
type QueueRate struct {
	Queue     string
	Window    time.Duration
	Succeeded int // runs that succeeded
	Retried   int // runs that failed and will be retried
	Dead      int // runs that failed for good
}

// QueueRates returns, for each queue with runs that finished in the last
// window (default one minute), how many succeeded, will be retried and
// died. It reads at most 10,000 recent records per kind.
func (i *Inspector) QueueRates(ctx context.Context, window time.Duration) (map[string]*QueueRate, error) {
	if window <= 0 {
		window = time.Minute
	}
	kinds, err := i.RunKinds(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: queue rates: %w", err)
	}
	runs, err := i.queue.RunsSince(ctx, kinds, time.Now().Add(-window), maxTaskScan)
	if err != nil {
		return nil, fmt.Errorf("chronos: queue rates: %w", err)
	}
	out := map[string]*QueueRate{}
	for _, recs := range runs {
		for _, x := range recs {
			q := cmp.Or(x.Queue, DefaultQueue)
			r := out[q]
			if r == nil {
				r = &QueueRate{Queue: q, Window: window}
				out[q] = r
			}
			switch x.Status {
			case rdb.RunSuccess:
				r.Succeeded++
			case rdb.RunRetry:
				r.Retried++
			case rdb.RunDead:
				r.Dead++
			}
		}
	}
	return out, nil
}

// BackfillPlan is what BackfillSchedule would fire for a range, computed
// without asking for it: a dry run.
type BackfillPlan struct {
	// Count is the number of firings the backfill would make: the fire
	// times in the range, at most MaxBackfill.
	Count int
	// More reports that the range holds more than MaxBackfill fire times;
	// the backfill fires only the first MaxBackfill.
	More bool
	// First and Last are the first and last fire times it would fire
	// (zero when Count is 0).
	First, Last time.Time
}

// PlanBackfill returns what BackfillSchedule(ctx, id, from, to, …) would
// fire under the definition in force now, computed as the leader computes
// it. It returns an error wrapping ErrScheduleNotFound for an unknown
// schedule.
func (i *Inspector) PlanBackfill(ctx context.Context, id string, from, to time.Time) (*BackfillPlan, error) {
	if to.Before(from) {
		return nil, fmt.Errorf("chronos: plan backfill of %q: the range ends (%v) before it starts (%v)", id, to, from)
	}
	sc, err := i.getSchedule(ctx, id)
	if err != nil {
		return nil, err
	}
	p, err := compile(sc.Definition, sc.Created)
	if err != nil {
		return nil, fmt.Errorf("chronos: plan backfill of %q: %w", id, err)
	}
	trig := p.trig
	if c, ok := trig.(trigger.Cron); ok && from.Before(c.Start) {
		c.Start = from
		trig = c
	}
	plan := &BackfillPlan{}
	t, ok := trig.FireTimeAfter(from.Add(-time.Millisecond))
	for ; ok && !t.After(to); t, ok = trig.FireTimeAfter(t) {
		if plan.Count == MaxBackfill {
			plan.More = true
			break
		}
		if plan.Count == 0 {
			plan.First = t
		}
		plan.Last = t
		plan.Count++
	}
	return plan, nil
}

func newStoredTask(m *rdb.Message, state TaskState, due time.Time) *StoredTask {
	t := &StoredTask{
		ID: m.ID, Kind: m.Kind, Queue: cmp.Or(m.Queue, DefaultQueue), State: state, Args: m.Args,
		MaxRetry: m.MaxRetry, Attempts: m.Attempt, Due: due, ScheduleID: m.ScheduleID,
	}
	if m.EnqueuedAt != 0 {
		t.EnqueuedAt = time.UnixMilli(m.EnqueuedAt)
	}
	if m.TriggerTime != 0 {
		t.TriggerTime = time.UnixMilli(m.TriggerTime)
	}
	for _, a := range m.History {
		t.History = append(t.History, AttemptRecord{
			Start: time.UnixMilli(a.At), Duration: time.Duration(a.Duration) * time.Millisecond, Error: a.Error,
		})
	}
	return t
}

// newRunRecord is the public form of a run record of kind, as ListRuns
// returns it.
func newRunRecord(kind string, r rdb.RunRecord) *RunRecord {
	out := &RunRecord{
		TaskID: r.TaskID, Kind: kind, Queue: r.Queue, Status: r.Status, Attempt: r.Attempt,
		Start: r.Start, Duration: r.Duration, Error: r.Error, ScheduleID: r.ScheduleID, TriggerTime: r.TriggerTime, Instance: r.Instance,
	}
	if r.Result != nil {
		out.Result = json.RawMessage(r.Result)
	}
	return out
}

// entryAddedAt is the time a stream entry was added, from its ID.
func entryAddedAt(id string) time.Time {
	t, _ := entryTime(id)
	return t
}

// streamEntryAfter reports whether stream entry ID a comes after b.
func streamEntryAfter(a, b string) bool {
	am, as := splitEntryID(a)
	bm, bs := splitEntryID(b)
	return am > bm || am == bm && as > bs
}

func splitEntryID(id string) (ms, seq uint64) {
	l, r, _ := strings.Cut(id, "-")
	ms, _ = strconv.ParseUint(l, 10, 64)
	seq, _ = strconv.ParseUint(r, 10, 64)
	return ms, seq
}

func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
