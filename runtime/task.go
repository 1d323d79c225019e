package chronos

import "time"

// TaskArgs is the payload of a task: a plain struct encoded as JSON, whose
// Kind names the handler that runs it. The kind must be stable across
// releases, since it is stored with every queued task; it is never derived
// from the Go type name by reflection, so renaming or moving a type does
// not orphan queued work.
//
// Implement Kind on the value type so that the zero value answers it:
//
//	type SendReport struct{ Day string `json:"day"` }
//
//	func (SendReport) Kind() string { return "send_report" }
type TaskArgs interface {
	Kind() string
}

// Task is one run of a task, as given to its handler.
type Task[A TaskArgs] struct {
	// ID identifies the task across its retries.
	ID string
	// Queue is the queue the task was taken from.
	Queue string
	// Attempt counts runs, starting at 1; a retry has Attempt > 1.
	Attempt int
	// MaxRetry is how many runs may follow a failed first run before the
	// task goes to the dead letters.
	MaxRetry int
	// EnqueuedAt is when the task was first enqueued.
	EnqueuedAt time.Time
	// ScheduleID is the schedule that enqueued the task, or "".
	ScheduleID string
	// TriggerTime is the trigger the task stands for when a schedule
	// enqueued it (zero otherwise). It is the natural idempotency key of a
	// scheduled run: the scheduler enqueues each trigger once, but the
	// queue delivers at least once.
	TriggerTime time.Time
	// Args is the decoded payload.
	Args A
}

// TaskInfo describes a task that was enqueued, or one that failed (in
// ServerConfig.ErrorHandler).
type TaskInfo struct {
	// ID is the task's ID. For a duplicate enqueue it is the ID of the task
	// that holds the dedup key.
	ID string
	// Kind is the kind of the task's args.
	Kind string
	// Queue is the queue the task was added to.
	Queue string
	// MaxRetry is the task's retry limit.
	MaxRetry int
	// Attempt is the run that failed (ErrorHandler only; 0 after Enqueue).
	Attempt int
	// ProcessAt is when the task becomes ready: the enqueue time unless it
	// was delayed.
	ProcessAt time.Time
	// Duplicate reports that a task with the same dedup key was enqueued
	// while the key lived, so this enqueue added nothing.
	Duplicate bool
}
