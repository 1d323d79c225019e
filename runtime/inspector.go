package chronos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// Inspector reads and repairs the state of a namespace: queues, dead
// letters and run records here; schedules, scheduler instances and the
// leader in inspector_sched.go. It is safe for concurrent use. Its queue
// reads cover every partition of the namespace: counts are summed,
// listings merged by time.
type Inspector struct {
	ns    string
	queue *rdb.Namespace // the task queue's storage, in the layout read at the first call
	sched *schedRegistry // the scheduler's registry, in the namespace's layout
}

// NewInspector returns an Inspector of the namespace (WithNamespace) that
// client reaches. It reads the namespace's layout at its first call and
// writes nothing to a namespace that does not exist, except PauseQueue and
// ResumeQueue, which create it as a Client would.
func NewInspector(client redis.UniversalClient, opts ...ClientOption) *Inspector {
	var cfg clientConfig
	for _, o := range opts {
		o.applyClient(&cfg)
	}
	ns := keyspace.Namespace(cfg.namespace)
	q := rdb.NewNamespace(client, ns, keyspace.ResolveOptions{Partitions: cfg.partitions, ReadOnly: true})
	return &Inspector{ns: ns, queue: q, sched: newSchedRegistry(client, ns)}
}

// DeadTask is a task in the dead letters: its payload intact, why it died
// and the history of its runs.
type DeadTask struct {
	ID          string
	Kind        string
	Queue       string
	Args        json.RawMessage // as enqueued
	MaxRetry    int
	Attempts    int // runs made
	EnqueuedAt  time.Time
	DiedAt      time.Time
	Reason      string // the last error
	ScheduleID  string
	TriggerTime time.Time
	History     []AttemptRecord // oldest first; at most the last 20
}

// AttemptRecord is one failed run of a task.
type AttemptRecord struct {
	Start    time.Time
	Duration time.Duration
	Error    string
}

// ListOptions page through a listing; the zero value is the first 100.
type ListOptions struct {
	Offset int
	Limit  int // default 100
}

// ListDead returns dead letters, most recent death first.
func (i *Inspector) ListDead(ctx context.Context, opts ListOptions) ([]*DeadTask, error) {
	if opts.Limit <= 0 {
		opts.Limit = 100
	}
	st, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: list dead tasks: %w", err)
	}
	ms, err := st.ListDead(ctx, max(opts.Offset, 0), opts.Limit)
	if err != nil {
		return nil, fmt.Errorf("chronos: list dead tasks: %w", err)
	}
	out := make([]*DeadTask, len(ms))
	for k, m := range ms {
		out[k] = deadTask(m)
	}
	return out, nil
}

// CountDead returns the number of dead letters.
func (i *Inspector) CountDead(ctx context.Context) (int, error) {
	st, err := i.queue.Store(ctx)
	if err != nil {
		return 0, fmt.Errorf("chronos: count dead tasks: %w", err)
	}
	n, err := st.CountDead(ctx)
	if err != nil {
		return 0, fmt.Errorf("chronos: count dead tasks: %w", err)
	}
	return n, nil
}

// GetDead returns dead letter id, or an error wrapping ErrTaskNotFound.
func (i *Inspector) GetDead(ctx context.Context, id string) (*DeadTask, error) {
	st, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: get dead task: %w", err)
	}
	m, _, err := st.GetDead(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("chronos: get dead task: %w", notFound(err))
	}
	return deadTask(m), nil
}

// RequeueDead moves dead letter id back to its queue, ready at once, with
// its retry count reset and its history kept, in the partition that held
// it. It returns an error wrapping ErrTaskNotFound if the dead letter does
// not exist (or was requeued or deleted meanwhile).
func (i *Inspector) RequeueDead(ctx context.Context, id string) (*TaskInfo, error) {
	st, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: requeue dead task: %w", err)
	}
	m, part, err := st.GetDead(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("chronos: requeue dead task: %w", notFound(err))
	}
	m.Attempt, m.Reason, m.DiedAt = 0, "", 0
	if m.Queue == "" {
		m.Queue = DefaultQueue
	}
	if err := st.RequeueDead(ctx, m, part); err != nil {
		return nil, fmt.Errorf("chronos: requeue dead task: %w", notFound(err))
	}
	return &TaskInfo{ID: m.ID, Kind: m.Kind, Queue: m.Queue, MaxRetry: m.MaxRetry, ProcessAt: time.Now()}, nil
}

// DeleteDead deletes dead letter id. It returns an error wrapping
// ErrTaskNotFound if it does not exist.
func (i *Inspector) DeleteDead(ctx context.Context, id string) error {
	st, err := i.queue.Store(ctx)
	if err != nil {
		return fmt.Errorf("chronos: delete dead task: %w", err)
	}
	if err := st.DeleteDead(ctx, id); err != nil {
		return fmt.Errorf("chronos: delete dead task: %w", notFound(err))
	}
	return nil
}

// RunRecord is the record of one finished run of a task.
type RunRecord struct {
	TaskID      string
	Kind        string
	Queue       string
	Status      string // "success", "retry" (failed, will retry) or "dead"
	Attempt     int
	Start       time.Time
	Duration    time.Duration
	Result      json.RawMessage // success of a handler with a result
	Error       string          // failures
	ScheduleID  string
	TriggerTime time.Time
	// Instance is the scheduler instance that ran an isolated task in
	// process (Queue is then LocalQueue); "" for queued tasks.
	Instance string
}

// ListRuns returns up to limit (default 100) run records of kind, most
// recent first, from every partition. About ServerConfig.RunRetention
// records are kept per kind and partition.
func (i *Inspector) ListRuns(ctx context.Context, kind string, limit int) ([]*RunRecord, error) {
	if limit <= 0 {
		limit = 100
	}
	st, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: list runs: %w", err)
	}
	recs, err := st.ListRuns(ctx, kind, limit)
	if err != nil {
		return nil, fmt.Errorf("chronos: list runs: %w", err)
	}
	out := make([]*RunRecord, len(recs))
	for k, r := range recs {
		out[k] = newRunRecord(kind, r)
	}
	return out, nil
}

// newRunRecord is the public form of a run record of kind: the one
// conversion, for ListRuns and TaskRuns.
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

func deadTask(m *rdb.Message) *DeadTask {
	d := &DeadTask{
		ID: m.ID, Kind: m.Kind, Queue: m.Queue, Args: m.Args, MaxRetry: m.MaxRetry, Attempts: m.Attempt,
		Reason: m.Reason, ScheduleID: m.ScheduleID,
	}
	if m.EnqueuedAt != 0 {
		d.EnqueuedAt = time.UnixMilli(m.EnqueuedAt)
	}
	if m.DiedAt != 0 {
		d.DiedAt = time.UnixMilli(m.DiedAt)
	}
	if m.TriggerTime != 0 {
		d.TriggerTime = time.UnixMilli(m.TriggerTime)
	}
	for _, a := range m.History {
		d.History = append(d.History, AttemptRecord{
			Start: time.UnixMilli(a.At), Duration: time.Duration(a.Duration) * time.Millisecond, Error: a.Error,
		})
	}
	return d
}

func notFound(err error) error {
	if errors.Is(err, rdb.ErrNotFound) {
		return fmt.Errorf("%w: %w", ErrTaskNotFound, err)
	}
	return err
}

// QueueInfo describes the state of one queue at one moment.
type QueueInfo struct {
	Queue   string
	Ready   int64 // waiting for a worker
	Running int64 // taken by a worker and not finished (including tasks whose worker died and that await recovery)
	Delayed int64 // waiting for their time: delayed enqueues and retries
	// OldestRunningSince is when the longest-held running task was first
	// added to the stream (zero if none run): a long-stuck task shows here.
	OldestRunningSince time.Time
	// Paused reports that servers do not take the queue's tasks.
	Paused bool
}

// QueueInfo returns the state of queue, summed over the partitions and
// read in one round trip. The queue is Paused when any partition says so.
func (i *Inspector) QueueInfo(ctx context.Context, queue string) (*QueueInfo, error) {
	store, err := i.queue.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: queue info: %w", err)
	}
	st, err := store.QueueStats(ctx, queue)
	if err != nil {
		return nil, fmt.Errorf("chronos: queue info: %w", err)
	}
	q := &QueueInfo{Queue: queue, Ready: max(st.Stream-st.Pending, 0), Running: st.Pending, Delayed: st.Delayed, Paused: st.Paused}
	if ms, _, ok := strings.Cut(st.OldestPending, "-"); ok {
		if n, err := strconv.ParseInt(ms, 10, 64); err == nil {
			q.OldestRunningSince = time.UnixMilli(n)
		}
	}
	return q, nil
}

// PauseQueue stops every server of the namespace from taking tasks of
// queue, within about a second, until ResumeQueue. Running tasks finish;
// enqueues keep being accepted and delayed tasks keep falling due, so the
// queue fills up while paused. Tasks of crashed workers are recovered only
// once the queue resumes. The pause is stored in Redis, in every
// partition's paused set (one round trip), and outlives restarts and
// deploys.
func (i *Inspector) PauseQueue(ctx context.Context, queue string) error {
	return i.setPaused(ctx, queue, true)
}

// ResumeQueue lets servers take tasks of queue again, in every partition.
func (i *Inspector) ResumeQueue(ctx context.Context, queue string) error {
	return i.setPaused(ctx, queue, false)
}

func (i *Inspector) setPaused(ctx context.Context, queue string, paused bool) error {
	what := "pause"
	if !paused {
		what = "resume"
	}
	st, err := i.queue.Create(ctx)
	if err == nil {
		err = st.SetPaused(ctx, queue, paused)
	}
	if err != nil {
		return fmt.Errorf("chronos: %s queue: %w", what, err)
	}
	return nil
}
