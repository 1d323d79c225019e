package chronos

import (
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// DefaultQueue is the queue tasks go to without WithQueue.
const DefaultQueue = "default"

// DefaultMaxRetry is the retry limit of tasks without WithMaxRetry.
const DefaultMaxRetry = 25

// ScheduleOption configures a schedule. Every EnqueueOption is also a
// ScheduleOption; it then applies to each task the schedule enqueues.
type ScheduleOption interface {
	applySchedule(*scheduleConfig)
}

// EnqueueOption configures one enqueued task.
type EnqueueOption interface {
	ScheduleOption
	applyEnqueue(*enqueueConfig)
}

// taskOptions are the per-task settings shared by Enqueue and schedules.
type taskOptions struct {
	queue       string
	maxRetry    int
	maxRetrySet bool
	timeout     time.Duration
	deadline    time.Time
	processIn   time.Duration
	processAt   time.Time
	dedupKey    string
	dedupTTL    time.Duration
}

// enqueueConfig collects the options of one Enqueue call.
type enqueueConfig struct {
	task taskOptions
}

// scheduleConfig collects the options of a schedule. This file defines only
// the task options every schedule passes on to the tasks it enqueues; the
// scheduler's own settings belong to the scheduler.
type scheduleConfig struct {
	task  taskOptions
	sched schedOptions // the scheduler's own settings (schedule_options.go)
}

// taskOption is an EnqueueOption that sets task options.
type taskOption func(*taskOptions)

func (f taskOption) applySchedule(c *scheduleConfig) { f(&c.task) }
func (f taskOption) applyEnqueue(c *enqueueConfig)   { f(&c.task) }

// WithQueue puts the task on queue (DefaultQueue otherwise).
func WithQueue(queue string) EnqueueOption {
	return taskOption(func(o *taskOptions) { o.queue = queue })
}

// WithMaxRetry sets how many retries may follow a failed first run
// (DefaultMaxRetry otherwise). Zero means one run only.
func WithMaxRetry(n int) EnqueueOption {
	return taskOption(func(o *taskOptions) { o.maxRetry, o.maxRetrySet = max(n, 0), true })
}

// WithTimeout bounds each run of the task: its context is cancelled after d.
// It overrides the handler's default timeout.
func WithTimeout(d time.Duration) EnqueueOption {
	return taskOption(func(o *taskOptions) { o.timeout = d })
}

// WithDeadline bounds the whole life of the task: no run starts after t, a
// running one has its context cancelled at t, and a task past its deadline
// goes to the dead letters instead of retrying.
func WithDeadline(t time.Time) EnqueueOption {
	return taskOption(func(o *taskOptions) { o.deadline = t })
}

// WithProcessIn delays the task by d from the moment it is enqueued.
func WithProcessIn(d time.Duration) EnqueueOption {
	return taskOption(func(o *taskOptions) { o.processIn, o.processAt = d, time.Time{} })
}

// WithProcessAt delays the task until t.
func WithProcessAt(t time.Time) EnqueueOption {
	return taskOption(func(o *taskOptions) { o.processAt, o.processIn = t, 0 })
}

// WithDedupKey makes the enqueue a no-op while key lives: the first enqueue
// with key claims it for ttl, and any other enqueue with the same key
// before it expires adds nothing and reports TaskInfo.Duplicate with the
// first task's ID. The key expires only by its TTL, never when the task
// finishes, so a fast task cannot reopen the window early. The scheduler's
// exactly-once enqueue per trigger rests on this. A ttl <= 0 disables it.
func WithDedupKey(key string, ttl time.Duration) EnqueueOption {
	return taskOption(func(o *taskOptions) { o.dedupKey, o.dedupTTL = key, ttl })
}

// message builds the stored form of a task of kind with encoded args, and
// returns when it is due (zero for now). The scheduler sets ScheduleID and
// TriggerTime on the result before encoding it.
func (o *taskOptions) message(kind string, args []byte, now time.Time) (*rdb.Message, time.Time) {
	m := &rdb.Message{
		ID:         rdb.NewID(now),
		Kind:       kind,
		Args:       args,
		Queue:      o.queue,
		MaxRetry:   DefaultMaxRetry,
		Timeout:    o.timeout.Milliseconds(),
		EnqueuedAt: now.UnixMilli(),
		DedupKey:   o.dedupKey,
	}
	if m.Queue == "" {
		m.Queue = DefaultQueue
	}
	if o.maxRetrySet {
		m.MaxRetry = o.maxRetry
	}
	if !o.deadline.IsZero() {
		m.Deadline = o.deadline.UnixMilli()
	}
	var due time.Time
	switch {
	case !o.processAt.IsZero():
		due = o.processAt
	case o.processIn > 0:
		due = now.Add(o.processIn)
	}
	return m, due
}
