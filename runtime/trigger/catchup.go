package trigger

import "time"

const (
	// DefaultThreshold is the misfire threshold when Catchup.Threshold is
	// zero: 60 seconds, the value in the quartz.properties Quartz ships.
	DefaultThreshold = 60 * time.Second

	// DefaultMaxFires is the cap on the fires of one Due call when
	// Catchup.MaxFires is zero. It bounds the replay of ignoreMisfires after
	// an outage: a per-minute schedule down for a day would otherwise
	// enqueue 1,440 runs at once.
	DefaultMaxFires = 100
)

// Catchup decides what a trigger does about fire times that have passed. The
// zero value is Quartz's default: smartPolicy with a 60s threshold, plus
// chronos's cap of DefaultMaxFires fires per call.
type Catchup struct {
	// Policy is the misfire instruction. A policy of the other trigger kind
	// (which ParsePolicy rejects) is treated as PolicySmart.
	Policy Policy
	// Threshold is how late a fire may be before it counts as misfired.
	// Zero or negative means DefaultThreshold.
	Threshold time.Duration
	// MaxFires caps the fires one Due call returns: the most recent MaxFires
	// are kept and older ones dropped (counted in Result.Dropped). Only
	// ignoreMisfires can reach the cap unless Threshold exceeds MaxFires
	// times the interval. Zero or negative means DefaultMaxFires.
	MaxFires int
}

// Fire is one run that Due hands out.
type Fire struct {
	// At is when the run should happen: the scheduled time for a fire that
	// is on time or replayed, and the evaluation's now for a fire the policy
	// moved to now (fireOnceNow, fireNow, rescheduleNow...).
	At time.Time
	// Scheduled is the slot the run stands for and its identity: the
	// scheduler's dedup key and the handler's TriggerTime. It equals At,
	// except for a fire moved to now, where it is the latest scheduled slot
	// at or before now that was missed. Scheduled depends only on the
	// persisted State, the trigger and the slot window now falls in, so two
	// leaders evaluating the same State agree on it.
	Scheduled time.Time
}

// Result is the outcome of Due.
type Result struct {
	// Fires are the runs to enqueue now, oldest first. At <= now for every
	// one of them, and their Scheduled values are strictly increasing.
	Fires []Fire
	// State is the state to persist afterwards: State.Next is after now, or
	// State.Complete is set.
	State State
	// Misfired reports that the next fire time was at least Threshold late
	// and the policy was applied (never for ignoreMisfires).
	Misfired bool
	// Dropped counts the fires left out by the MaxFires cap.
	Dropped int
}

// Due answers "what must be enqueued now, and what is the state
// afterwards?" for trigger t in state s at time now, the way Quartz's
// RAMJobStore does it, with one evaluation per call:
//
//  1. If s.Next <= now - Threshold (inclusive) and the policy is not
//     ignoreMisfires, the fire misfired: the policy's updateAfterMisfire
//     runs once.
//  2. Every fire with Next <= now is handed out, advancing the state with
//     [Triggered] after each. With ignoreMisfires this replays every missed
//     slot, but at most MaxFires of them (the most recent ones).
//
// Due never reads the clock; call it with the current time. s must come
// from [Initial], [Triggered] or an earlier Due for the same trigger; a
// state without a next fire time hands out nothing.
//
// Cost: a misfire costs O(log(now - s.Next)) schedule lookups for a cron
// trigger and O(1) for a simple one. Replaying with ignoreMisfires walks
// every missed slot of a cron trigger (a simple trigger skips the dropped
// ones arithmetically), and returns at most MaxFires fires.
func (c Catchup) Due(t Trigger, s State, now time.Time) Result {
	res := Result{State: s}
	if s.Complete || s.Next.IsZero() {
		return res
	}
	threshold := c.Threshold
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	maxFires := c.MaxFires
	if maxFires <= 0 {
		maxFires = DefaultMaxFires
	}
	policy := c.Policy
	if !policy.AppliesTo(t.Kind()) {
		policy = PolicySmart
	}

	var nowFire bool // the first fire was moved to now
	var slot time.Time
	if policy != PolicyIgnoreMisfires && !s.Next.After(now.Add(-threshold)) {
		res.Misfired = true
		slot = t.latestSlot(s, now)
		s, nowFire = t.misfire(policy, s, now)
	}

	// Jump over the slots the cap would drop anyway, where the trigger can
	// count them without walking; the walk below drops the rest.
	s, skipped := t.skip(s, now, maxFires)
	if skipped > 0 {
		nowFire = false // the now-fire, if any, was the first slot skipped
	}

	// ring keeps the most recent maxFires fires; n counts all of them.
	var ring []Fire
	n := 0
	for !s.Complete && !s.Next.After(now) {
		f := Fire{At: s.Next, Scheduled: s.Next}
		if nowFire && n == 0 {
			f.Scheduled = slot
		}
		if len(ring) < maxFires {
			ring = append(ring, f)
		} else {
			ring[n%maxFires] = f
		}
		n++
		s = Triggered(t, s)
	}
	res.Fires = ring
	if n > maxFires {
		// Rotate so the oldest kept fire comes first.
		k := n % maxFires
		res.Fires = append(ring[k:len(ring):len(ring)], ring[:k]...)
	}
	res.Dropped = skipped + max(0, n-maxFires)
	res.State = s
	return res
}
