package chronos

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
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
// requeue), delayed tasks or a pause, in any partition. A queue that was
// never used has no keys and is not listed. It costs a SCAN of the
// keyspace.
func (i *Inspector) Queues(ctx context.Context) ([]string, error) {
	st, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: list queues: %w", err)
	}
	qs, err := st.QueueNames(ctx, maxTaskScan)
	if err != nil {
		return nil, fmt.Errorf("chronos: list queues: %w", err)
	}
	return qs, nil
}

// RunKinds returns the task kinds that have run records, sorted. It costs a
// SCAN of the keyspace.
func (i *Inspector) RunKinds(ctx context.Context) ([]string, error) {
	st, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: list run kinds: %w", err)
	}
	kinds, err := st.RunKinds(ctx, maxTaskScan)
	if err != nil {
		return nil, fmt.Errorf("chronos: list run kinds: %w", err)
	}
	return kinds, nil
}

// ListTasks returns the tasks of queue in state TaskReady, TaskRunning or
// TaskDelayed that match f: ready and running tasks oldest first, delayed
// tasks earliest due first, over every partition. At most 10,000 tasks are
// examined per call, so a filter over a larger queue may miss matches
// further down.
func (i *Inspector) ListTasks(ctx context.Context, queue string, state TaskState, f TaskFilter) ([]*StoredTask, error) {
	var (
		out []*StoredTask
		err error
	)
	st, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: list %s tasks of %q: %w", state, queue, err)
	}
	switch state {
	case TaskReady, TaskRunning:
		out, err = listStream(ctx, st, queue, state, f)
	case TaskDelayed:
		out, err = listDelayed(ctx, st, queue, f)
	default:
		return nil, fmt.Errorf("chronos: list tasks of %q: state %q: want ready, running or delayed", queue, state)
	}
	if err != nil {
		return nil, fmt.Errorf("chronos: list %s tasks of %q: %w", state, queue, err)
	}
	return out, nil
}

func listStream(ctx context.Context, st *rdb.Store, queue string, state TaskState, f TaskFilter) ([]*StoredTask, error) {
	it := st.Tasks(queue, state == TaskRunning)
	skip, out := f.Offset, []*StoredTask{}
	for scanned := 0; scanned < maxTaskScan; scanned++ {
		e, ok, err := it.Next(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
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
			break
		}
	}
	return out, nil
}

func listDelayed(ctx context.Context, st *rdb.Store, queue string, f TaskFilter) ([]*StoredTask, error) {
	it := st.Delayed(queue)
	skip, out := max(f.Offset, 0), []*StoredTask{}
	// Without a kind to match, the tasks skipped are not examined.
	limit := maxTaskScan
	if f.Kind == "" {
		limit += skip
	}
	for scanned := 0; scanned < limit; scanned++ {
		d, ok, err := it.Next(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if skip > 0 && f.Kind == "" {
			skip--
			continue
		}
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
			break
		}
	}
	return out, nil
}

// SearchDead returns the dead letters of queue ("" for every queue) that
// match f, most recent death first, over every partition. At most 10,000
// dead letters are examined per call.
func (i *Inspector) SearchDead(ctx context.Context, queue string, f TaskFilter) ([]*DeadTask, error) {
	st, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: search dead tasks: %w", err)
	}
	it := st.Dead(maxDeadPage)
	skip, out := f.Offset, []*DeadTask{}
	for scanned := 0; scanned < maxTaskScan; scanned++ {
		m, ok, err := it.Next(ctx)
		if err != nil {
			return nil, fmt.Errorf("chronos: search dead tasks: %w", err)
		}
		if !ok {
			break
		}
		if (queue != "" && m.Queue != queue) || !f.match(m.Kind) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, deadTask(m.Message))
		if len(out) == f.limit() {
			break
		}
	}
	return out, nil
}

// maxDeadPage is how many dead letters a search reads per partition and
// round trip.
const maxDeadPage = 500

// DeadCountsByQueue returns the number of dead letters of each queue that
// has any. It reads every dead letter once (at most
// ServerConfig.DeadRetention per partition), so poll it sparingly.
func (i *Inspector) DeadCountsByQueue(ctx context.Context) (map[string]int, error) {
	st, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: count dead tasks by queue: %w", err)
	}
	n, err := st.DeadCountsByQueue(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: count dead tasks by queue: %w", err)
	}
	return n, nil
}

// GetTask finds task id wherever it is: in the dead letters, or ready,
// running or delayed in one of queues (every queue Queues lists when none
// is given), in any partition. It returns an error wrapping
// ErrTaskNotFound when the task is in none of them: it never existed, or
// it finished (see TaskRuns) or was deleted. For an ID made by this
// package the search of a stream starts shortly before the ID's creation
// time; otherwise at most the first 10,000 entries of each queue's stream
// in each partition are examined.
func (i *Inspector) GetTask(ctx context.Context, id string, queues ...string) (*StoredTask, error) {
	st, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: get task %s: %w", id, err)
	}
	if m, _, err := st.GetDead(ctx, id); err == nil {
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
	start := "-"
	if at, ok := rdb.IDTime(id); ok {
		start = strconv.FormatInt(max(at.Add(-taskIDClockSlack).UnixMilli(), 0), 10)
	}
	for _, q := range queues {
		e, running, found, err := st.FindInStream(ctx, q, id, start, maxTaskScan)
		if err != nil {
			return nil, fmt.Errorf("chronos: get task %s: %w", id, err)
		}
		if found {
			if m, err := rdb.Decode([]byte(e.Msg)); err == nil {
				state := TaskReady
				if running {
					state = TaskRunning
				}
				return newStoredTask(m, state, entryAddedAt(e.ID)), nil
			}
		}
		d, err := st.FindDelayed(ctx, q, id)
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
	st, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: runs of task %s: %w", id, err)
	}
	var out []*RunRecord
	for _, k := range kinds {
		var recs []rdb.RunRecord
		if at, ok := rdb.IDTime(id); ok {
			start := strconv.FormatInt(max(at.Add(-taskIDClockSlack).UnixMilli(), 0), 10)
			recs, err = st.RunsRange(ctx, k, start, "+", maxTaskScan)
		} else {
			recs, err = st.ListRuns(ctx, k, maxTaskScan)
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
	st, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: queue rates: %w", err)
	}
	runs, err := st.RunsSince(ctx, kinds, time.Now().Add(-window), maxTaskScan)
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

// entryAddedAt is the time a stream entry was added, from its ID.
func entryAddedAt(id string) time.Time {
	t, _ := entryTime(id)
	return t
}
