package chronos

import (
	"fmt"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// Schedule health says, for every schedule, whether it fires on time and
// whether its runs succeed, from what the registry and the run records
// already hold: no process has to report it, so it stays right when the
// scheduler itself is what broke. Inspector.ScheduleHealth computes it
// (inspector_health.go); docs/health.md is the operator's account.

// Defaults of the health thresholds.
const (
	// DefaultLateAfter is how long a fire time may pass with nothing
	// enqueued before its schedule is late. A leader enqueues within
	// milliseconds of the fire time and a crashed one is replaced within
	// LeaderTTL (5s by default); a minute absorbs that, a rolling restart
	// and clock skew between the hosts, and still reports a stopped
	// scheduler within a minute for every schedule, however rarely it
	// fires.
	DefaultLateAfter = time.Minute
	// DefaultFailingAfter is how many finished runs in a row must fail
	// before their schedule is failing: one failure may be a blip the
	// retry absorbs, three in a row rarely are.
	DefaultFailingAfter = 3
)

// WithLateAfter sets how long a fire time of the schedule may pass with
// nothing enqueued for it before the schedule is HealthLate (default
// DefaultLateAfter). Raise it for a schedule whose fires may wait for a
// slow deploy without anyone being paged; lower it to hear sooner. Zero
// means the default. Like WithFailingAfter it is not part of the
// definition: changing it does not count as a definition change, and
// instances that disagree about it are no conflict (the declaration in
// force wins, as for the rest).
func WithLateAfter(d time.Duration) ScheduleOption {
	return schedOption(func(o *schedOptions) { o.lateAfter = d })
}

// WithFailingAfter sets how many of the schedule's finished runs in a row
// must fail (retry or dead) before it is HealthFailing (default
// DefaultFailingAfter). 1 reports the first failure. Zero means the
// default.
func WithFailingAfter(n int) ScheduleOption {
	return schedOption(func(o *schedOptions) { o.failingAfter = n })
}

// setHealthThresholds copies the health options of so into def.
func setHealthThresholds(def *schedstore.Definition, so schedOptions) error {
	if so.lateAfter < 0 {
		return fmt.Errorf("WithLateAfter(%v): want a positive duration (0: the default)", so.lateAfter)
	}
	if so.failingAfter < 0 {
		return fmt.Errorf("WithFailingAfter(%d): want a positive count (0: the default)", so.failingAfter)
	}
	def.LateAfter, def.FailingAfter = so.lateAfter, so.failingAfter
	return nil
}

// HealthState is the health of a schedule.
type HealthState string

// The health states, in the order they take precedence: a retired
// schedule is retired whatever its runs did, a paused one is paused (an
// operator decided so) even if it was late or failing, and a late one is
// late even if its last runs failed too.
const (
	// HealthRetired: the schedule does not fire because no live instance
	// declares it any more, or an operator retired it.
	HealthRetired HealthState = "retired"
	// HealthPaused: the whole schedule, or every job of it, is paused. A
	// pause whose Until has passed is not a pause.
	HealthPaused HealthState = "paused"
	// HealthLate: a fire time passed more than its LateAfter ago and
	// nothing was enqueued for it: no scheduler leads, the leader is stuck,
	// or it cannot write to Redis. For an isolated schedule: no instance
	// fired it.
	HealthLate HealthState = "late"
	// HealthFailing: its last FailingAfter finished runs of one task kind
	// failed (a run that will be retried counts as failed).
	HealthFailing HealthState = "failing"
	// HealthOK: none of the above.
	HealthOK HealthState = "ok"
)

// Problem reports whether the state calls for someone to look: late or
// failing. Paused and retired schedules are somebody's decision.
func (s HealthState) Problem() bool { return s == HealthLate || s == HealthFailing }

// Health is the health of one schedule at one moment, as
// Inspector.ScheduleHealth computes it.
type Health struct {
	State HealthState
	// Reason says why, in one line, for an operator: the fire time that
	// passed, the runs that failed, who paused it. Empty for most healthy
	// schedules.
	Reason string
	// Since is when the condition State reports began: the fire time
	// nothing was enqueued for (late), the start of the first failed run
	// of the failing streak as far as the records read go (failing), when
	// it was paused (for every job of a group: when the last one was),
	// when it was retired. Zero for HealthOK.
	Since time.Time
	// Lateness is how long ago the fire time the schedule waits for
	// passed: about zero while a leader keeps up, growing while nothing is
	// enqueued. The schedule is late once it exceeds LateAfter. Zero while
	// the schedule is not expected to fire (paused, retired, complete).
	Lateness time.Duration
	// LastRun is when the schedule's newest finished run ended, and
	// LastOutcome its status: "success", "retry" (failed, will run again)
	// or "dead" (failed, in the dead letters). Empty when the run records
	// read hold none. (ScheduleInfo.LastOutcome is something else: what
	// the last firing did.)
	LastRun     time.Time
	LastOutcome string
	// LastSuccess is when the newest successful run ended; zero when the
	// records read hold none.
	LastSuccess time.Time
	// Failures is the number of failed runs in a row, newest first, of
	// the schedule's task kind with the longest such streak (counted as
	// far as the records read go).
	Failures int
	// LateAfter and FailingAfter are the thresholds in force: the
	// schedule's own (WithLateAfter, WithFailingAfter) or the defaults.
	LateAfter    time.Duration
	FailingAfter int
}
