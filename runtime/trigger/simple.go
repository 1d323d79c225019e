package trigger

import (
	"fmt"
	"time"
)

// RepeatForever is the RepeatCount of a simple trigger that never stops.
const RepeatForever = -1

// Simple fires at Start, Start+Interval, Start+2·Interval, ... with Quartz
// SimpleTriggerImpl's rules:
//
//   - It fires RepeatCount+1 times: RepeatCount counts the repeats after the
//     first fire, and [RepeatForever] (-1) never stops. The zero value of
//     RepeatCount is a one-shot trigger, which needs no Interval.
//   - Fire times are pure duration arithmetic on instants, so daylight-saving
//     changes do not move them. Start is not rounded.
//   - End is exclusive: a fire exactly at End does not happen. The zero End
//     means no end. The first fire (at Start) is not checked against End.
//   - The last fire is anchored at Start+RepeatCount·Interval, however many
//     fires were missed on the way.
type Simple struct {
	// Start is the first fire time.
	Start time.Time
	// Interval is the time between fires, at least one second.
	Interval time.Duration
	// RepeatCount is the number of fires after the first; RepeatForever is
	// unbounded.
	RepeatCount int
	// End is the exclusive upper bound of the fire times; zero means none.
	End time.Time
}

// Every returns a trigger that fires at start and then every interval,
// forever: the trigger behind RegisterInterval.
func Every(interval time.Duration, start time.Time) Simple {
	return Simple{Start: start, Interval: interval, RepeatCount: RepeatForever}
}

// Kind returns KindSimple.
func (t Simple) Kind() Kind { return KindSimple }

// FireTimeAfter follows SimpleTriggerImpl.getFireTimeAfter for a trigger that
// has not fired yet.
func (t Simple) FireTimeAfter(after time.Time) (time.Time, bool) {
	return t.fireTimeAfter(t.Start, t.RepeatCount, 0, after)
}

// First returns Start. Quartz does not check it against End.
func (t Simple) First() (time.Time, bool) { return t.Start, true }

// Validate reports an interval below one second ([ErrSubSecondInterval]; a
// one-shot trigger may leave Interval zero), a RepeatCount below -1
// ([ErrRepeatCount]) and an End before Start ([ErrEndBeforeStart]).
//
// A simple trigger always fires at least once, at Start, even when End
// equals Start (Quartz does the same), so it never fails with
// [ErrNeverFires].
func (t Simple) Validate() error {
	if t.RepeatCount < RepeatForever {
		return &detailError{
			fmt.Sprintf("repeat count %d is invalid; use -1 to repeat forever or a count of repeats >= 0", t.RepeatCount),
			ErrRepeatCount,
		}
	}
	if t.Interval < time.Second && (t.Interval != 0 || t.RepeatCount != 0) {
		return &detailError{
			fmt.Sprintf("interval %v is below the 1s minimum; chronos does not run sub-second schedules", t.Interval),
			ErrSubSecondInterval,
		}
	}
	return checkEnd(t.Start, t.End)
}

func (t Simple) initial() State {
	return State{Next: t.Start, Start: t.Start, RepeatCount: t.RepeatCount}
}

func (t Simple) next(s State, after time.Time) (time.Time, bool) {
	return t.fireTimeAfter(s.Start, s.RepeatCount, s.TimesTriggered, after)
}

// fireTimeAfter is SimpleTriggerImpl.getFireTimeAfter with the fields that
// misfire handling rewrites (start, repeatCount, timesTriggered) passed in.
// The checks run in Quartz's order.
func (t Simple) fireTimeAfter(start time.Time, repeatCount, timesTriggered int, after time.Time) (time.Time, bool) {
	finite := repeatCount != RepeatForever
	switch {
	case finite && timesTriggered > repeatCount:
		return time.Time{}, false
	case repeatCount == 0 && !after.Before(start):
		return time.Time{}, false
	case !t.End.IsZero() && !t.End.After(after):
		return time.Time{}, false
	case after.Before(start):
		return start, true
	case t.Interval <= 0:
		// Invalid (Validate rejects it); behave as a one-shot rather than
		// divide by zero.
		return time.Time{}, false
	}
	n := int64(after.Sub(start)/t.Interval) + 1
	if finite && n > int64(repeatCount) {
		return time.Time{}, false
	}
	c := start.Add(time.Duration(n) * t.Interval)
	if !c.After(after) {
		// Only when the arithmetic overflows (spans beyond 292 years);
		// never hand out a time that does not move forward.
		return time.Time{}, false
	}
	if !t.End.IsZero() && !t.End.After(c) {
		return time.Time{}, false
	}
	return c, true
}

// missed is SimpleTriggerImpl.computeNumTimesFiredBetween: whole intervals
// from a to b, truncated toward zero.
func (t Simple) missed(a, b time.Time) int {
	if t.Interval <= 0 {
		return 0
	}
	return int(b.Sub(a) / t.Interval)
}

// The simple misfire instructions after Quartz's mapping of SMART and
// FIRE_NOW (brief §7.2).
const (
	instrFireNow = iota + 1
	instrNowExisting
	instrNowRemaining
	instrNextRemaining
	instrNextExisting
)

// misfire is SimpleTriggerImpl.updateAfterMisfire.
func (t Simple) misfire(p Policy, s State, now time.Time) (State, bool) {
	var instr int
	switch p {
	case PolicyIgnoreMisfires:
		return s, false
	case PolicyFireNow:
		instr = instrFireNow
		if s.RepeatCount != 0 {
			instr = instrNowRemaining
		}
	case PolicyRescheduleNowWithExistingRepeatCount:
		instr = instrNowExisting
	case PolicyRescheduleNowWithRemainingRepeatCount:
		instr = instrNowRemaining
	case PolicyRescheduleNextWithRemainingCount:
		instr = instrNextRemaining
	case PolicyRescheduleNextWithExistingCount:
		instr = instrNextExisting
	default: // PolicySmart; a cron-only policy counts as smart.
		switch s.RepeatCount {
		case 0:
			instr = instrFireNow
		case RepeatForever:
			instr = instrNextRemaining
		default:
			instr = instrNowExisting
		}
	}

	bounded := s.RepeatCount != 0 && s.RepeatCount != RepeatForever
	switch instr {
	case instrFireNow:
		// Only reached with RepeatCount 0; End is not checked.
		s.Next = now
		return s, true
	case instrNextExisting, instrNextRemaining:
		next, ok := t.next(s, now)
		if !ok {
			return complete(s), false
		}
		if instr == instrNextRemaining {
			s.TimesTriggered += t.missed(s.Next, next)
		}
		s.Next = next
		return s, false
	default: // instrNowExisting, instrNowRemaining
		if bounded {
			if instr == instrNowExisting {
				s.RepeatCount -= s.TimesTriggered
			} else {
				s.RepeatCount = max(0, s.RepeatCount-(s.TimesTriggered+t.missed(s.Next, now)))
			}
			s.TimesTriggered = 0
		}
		// The counts are rewritten even when End has passed (vector S9).
		if !t.End.IsZero() && t.End.Before(now) {
			return complete(s), false
		}
		s.Start, s.Next = now, now
		return s, true
	}
}

// latestSlot computes the last slot Start+k·Interval <= now of the schedule
// in state s (k <= RepeatCount, below End except for k = 0), or s.Next when
// that is later.
func (t Simple) latestSlot(s State, now time.Time) time.Time {
	if t.Interval <= 0 || now.Before(s.Start) {
		return s.Next
	}
	k := int64(now.Sub(s.Start) / t.Interval)
	if s.RepeatCount != RepeatForever {
		k = min(k, int64(s.RepeatCount))
	}
	if !t.End.IsZero() && k > 0 && !s.Start.Add(time.Duration(k)*t.Interval).Before(t.End) {
		// The last k with Start+k·Interval < End.
		k = max(0, int64((t.End.Sub(s.Start)-1)/t.Interval))
	}
	slot := s.Start.Add(time.Duration(k) * t.Interval)
	if slot.After(s.Next) {
		return slot
	}
	return s.Next
}

// skip jumps over all but the last keep due slots with arithmetic, so that
// replaying a per-second trigger after a month's outage does not take 2.6
// million steps. It only acts when s.Next is on the grid of s.Start; the
// slots it skips are exactly those Triggered would have stepped through
// (the property tests compare the two).
func (t Simple) skip(s State, now time.Time, keep int) (State, int) {
	if s.Complete || t.Interval <= 0 || s.Next.Before(s.Start) || s.Next.After(now) {
		return s, 0
	}
	off := s.Next.Sub(s.Start)
	if off%t.Interval != 0 {
		return s, 0
	}
	k0 := int64(off / t.Interval)
	// The last due slot: at or before now, ...
	last := int64(now.Sub(s.Start) / t.Interval)
	if s.RepeatCount != RepeatForever {
		// ... within the repeat count, and reachable before timesTriggered
		// exceeds it (Triggered computes slot k0+j with timesTriggered
		// tt0+j).
		last = min(last, int64(s.RepeatCount), int64(s.RepeatCount-s.TimesTriggered)+k0)
	}
	if !t.End.IsZero() {
		// ... and before the end (every slot after k0 is checked).
		last = min(last, max(k0, int64((t.End.Sub(s.Start)-1)/t.Interval)))
	}
	n := last - k0 + 1 - int64(keep)
	if n <= 0 {
		return s, 0
	}
	s.Prev = s.Start.Add(time.Duration(k0+n-1) * t.Interval)
	s.Next = s.Start.Add(time.Duration(k0+n) * t.Interval)
	s.TimesTriggered += int(n)
	return s, int(n)
}
