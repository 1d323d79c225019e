package trigger

import "time"

// Trigger is a fire-time rule: a [Cron] or a [Simple]. The interface is
// sealed (it has unexported methods) because [Catchup.Due] applies misfire
// rules that exist only for these two kinds.
type Trigger interface {
	// Kind reports whether this is a cron or a simple trigger.
	Kind() Kind

	// FireTimeAfter returns the first fire time strictly after t, and false
	// when there is none. It looks at the definition only, not at how often
	// the trigger has fired; see [Triggered] for the step that does.
	FireTimeAfter(t time.Time) (time.Time, bool)

	// First returns the first fire time, and false when there is none.
	First() (time.Time, bool)

	// Validate reports a definition that chronos refuses to schedule: the
	// error wraps one of the package's sentinel errors.
	Validate() error

	// initial returns the state of a trigger that has never fired.
	initial() State
	// next is FireTimeAfter for a trigger in state s (simple triggers take
	// their start, repeat count and fire count from the state).
	next(s State, t time.Time) (time.Time, bool)
	// misfire applies Quartz's updateAfterMisfire for policy p at now. It
	// reports whether the result fires "now" (State.Next == now).
	misfire(p Policy, s State, now time.Time) (State, bool)
	// latestSlot returns the latest scheduled fire time in [s.Next, now],
	// which is s.Next when no later slot has passed.
	latestSlot(s State, now time.Time) time.Time
	// skip advances s past due slots (Next <= now) so that at most keep of
	// them remain, when it can do so without walking them, and returns how
	// many it skipped. It may skip fewer (0 is always correct).
	skip(s State, now time.Time, keep int) (State, int)
}

// CronSchedule computes the fire times of a cron expression. Next returns the
// first fire time strictly after after, or the zero time when there is none.
// The runtime/cron package's Schedule satisfies it; the interface keeps this
// package independent of the parser.
type CronSchedule interface {
	Next(after time.Time) time.Time
}
