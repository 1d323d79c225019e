package chronos

import "time"

// Metrics receives what Servers and Schedulers measure, as it happens, so
// that an exporter (such as the metrics/prometheus module) can count and
// time it. Set it through ServerConfig.Metrics and SchedulerConfig.Metrics;
// nil records nothing.
//
// The methods are called from the goroutines that do the work, some of
// them while holding the scheduler's locks: an implementation must be safe
// for concurrent use and must not block (update counters in memory, never
// call out to the network). Recording never costs a Redis round trip: every
// value comes from a reply the work already had.
//
// Label values are small, fixed sets except queue, kind and schedule, which
// are the application's own names; see docs/metrics.md for the cardinality
// each brings. Embed NoMetrics to implement only some of the methods.
type Metrics interface {
	// TaskStarted is called when a handler is about to run. wait is how
	// long the task was ready before that: from its entry in the queue
	// stream (the enqueue, or the moment a delayed task or retry fell due)
	// to the start. A task recovered after its worker died counts from its
	// original entry.
	TaskStarted(queue, kind string, wait time.Duration)

	// TaskFinished is called once the outcome of a delivery is recorded in
	// Redis. outcome is one of OutcomeSuccess, OutcomeRetry and OutcomeDead,
	// the names the task logs use. took is the handler's run time (zero for
	// a task that went to the dead letters without running: undecodable,
	// no handler, too many deliveries, deadline passed). An outcome that was
	// discarded because another worker took the task over is not reported.
	TaskFinished(queue, kind, outcome string, took time.Duration)

	// TriggerFired is called for every firing the scheduler sends to Redis:
	// once per job of the schedule for a firing that ran (Result
	// TriggerEnqueued, TriggerBuffered or TriggerSkipped), plus once per
	// stale overlap marker it cleared (TriggerCleared), or once for the
	// whole firing when it did not run (TriggerDuplicate, TriggerStale,
	// TriggerGone, TriggerFenced, TriggerError). See FiredTrigger.
	TriggerFired(f FiredTrigger)

	// Misfired is called when a catch-up evaluation of a schedule applied
	// its misfire policy (a fire was at least MisfireThreshold late) or
	// dropped fires beyond MaxCatchup. dropped counts the fires the cap left
	// out; the slots a policy skipped or merged into one are not counted,
	// since counting them would cost a walk over every missed slot.
	Misfired(schedule, policy string, dropped int)

	// LeaderChanged is called when this Scheduler became leader (true) or
	// stopped being leader (false), in order.
	LeaderChanged(leading bool)

	// LeaseRenewFailed is called when a leader lease renewal failed (Redis
	// error, lease taken over, or trust window passed). The leader steps
	// down at the first failure, so LeaderChanged(false) follows.
	LeaseRenewFailed()

	// RegistryLost is called when this instance found that Redis had lost
	// the registry (a restart without persistence, FLUSHALL, a failover to
	// an empty replica) and put back reseeded schedules from its memory.
	RegistryLost(reseeded int)
}

// Task outcomes passed to Metrics.TaskFinished.
const (
	OutcomeSuccess = "success"
	OutcomeRetry   = "retry"
	OutcomeDead    = "dead"
)

// Firing results passed to Metrics.TriggerFired. Enqueued, buffered,
// skipped and cleared are the job results of the firing history; the
// others mean the firing enqueued nothing.
const (
	TriggerEnqueued  = "enqueued"  // the job's task was added
	TriggerBuffered  = "buffered"  // held back by overlap=bufferOne until the running task ends
	TriggerSkipped   = "skipped"   // dropped by the overlap policy: a run was still going
	TriggerCleared   = "cleared"   // a stale overlap marker was dropped before deciding
	TriggerDuplicate = "duplicate" // the trigger's dedup key was held: already enqueued
	TriggerStale     = "stale"     // a later firing was already recorded
	TriggerGone      = "gone"      // the schedule was deleted meanwhile
	TriggerFenced    = "fenced"    // this instance was no longer leader
	TriggerError     = "error"     // the write failed (Redis error); the schedule is read again
)

// FiredTrigger is one result of a firing, as Metrics.TriggerFired receives
// it.
type FiredTrigger struct {
	// Schedule is the schedule ID.
	Schedule string
	// Job names the job of the schedule ("main" for a schedule that is not
	// a group); it is empty for a result of the whole firing (one that did
	// not run).
	Job string
	// Source says what asked for the firing: "trigger", "catchup",
	// "request", "backfill" or "isolated".
	Source string
	// Result is one of the Trigger* constants.
	Result string
	// Trigger is the fire time the firing stands for: the task's
	// Task.TriggerTime, and the second the dedup key names.
	Trigger time.Time
	// TaskID is the task the job enqueued, buffered or skipped, or the run
	// whose stale marker was cleared; empty for results of the whole firing.
	TaskID string
	// Lag is from when the firing should have run (the trigger time, or
	// "now" for a fire the misfire policy moved) to when Redis confirmed it.
	Lag time.Duration
}

// NoMetrics implements Metrics by doing nothing. Embed it in an exporter
// to implement only the methods it cares about.
type NoMetrics struct{}

// TaskStarted does nothing.
func (NoMetrics) TaskStarted(queue, kind string, wait time.Duration) {}

// TaskFinished does nothing.
func (NoMetrics) TaskFinished(queue, kind, outcome string, took time.Duration) {}

// TriggerFired does nothing.
func (NoMetrics) TriggerFired(FiredTrigger) {}

// Misfired does nothing.
func (NoMetrics) Misfired(schedule, policy string, dropped int) {}

// LeaderChanged does nothing.
func (NoMetrics) LeaderChanged(leading bool) {}

// LeaseRenewFailed does nothing.
func (NoMetrics) LeaseRenewFailed() {}

// RegistryLost does nothing.
func (NoMetrics) RegistryLost(int) {}

var _ Metrics = NoMetrics{}
