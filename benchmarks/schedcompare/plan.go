package main

import "time"

// plan is the load both systems get: n schedules, each firing every period,
// laid out so that about rate of them fire at every whole second.
//
// Schedule i belongs to phase i mod (period/1s): it fires at the whole
// seconds base+phase, base+phase+period, and so on. Every second therefore
// has a burst of n/(period/1s) triggers, all due at the same instant. This
// is the only layout asynq's Scheduler can express (its "@every" schedules
// tick on whole seconds counted from when each entry was added), so chronos
// gets the same layout rather than its own benchmark's 1 ms stagger.
type plan struct {
	n      int
	period time.Duration
}

func newPlan(n, rate int) plan {
	secs := max((n+rate-1)/rate, 1)
	return plan{n: n, period: time.Duration(secs) * time.Second}
}

// phases is the number of distinct whole-second phases.
func (p plan) phases() int { return int(p.period / time.Second) }

// phase returns the phase of schedule i, in seconds.
func (p plan) phase(i int) int { return i % p.phases() }

// lastSlot returns the latest intended trigger time of a schedule whose
// first trigger is first that is not after t. It assumes t is not before
// first.
func (p plan) lastSlot(first, t time.Time) time.Time {
	k := t.Sub(first) / p.period
	return first.Add(k * p.period)
}
