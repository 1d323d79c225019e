package trigger

import (
	"fmt"
	"time"
)

// Cron fires at the times of a cron schedule, with Quartz CronTriggerImpl's
// rules around it:
//
//   - Start is rounded down to the whole second, and a fire exactly at the
//     rounded start counts (the first fire is the schedule's first time after
//     start-1s).
//   - End is inclusive: a fire exactly at End happens. The zero End means no
//     end.
//   - After a fire, the next time is computed from the scheduled time of that
//     fire, never from the moment the job actually ran.
//
// Set Start: Quartz defaults it to the registration time, and so does the
// scheduler. The zero Start is taken literally (year 1), which gives a first
// fire time decades in the past.
type Cron struct {
	// Schedule computes the fire times, normally a cron.Schedule.
	Schedule CronSchedule
	// Start is the earliest possible fire time (rounded down to the second).
	Start time.Time
	// End is the latest possible fire time (inclusive); zero means none.
	End time.Time
}

// Kind returns KindCron.
func (c Cron) Kind() Kind { return KindCron }

// start is Start rounded down to the whole second, as CronTriggerImpl's
// setStartTime does.
func (c Cron) start() time.Time { return c.Start.Truncate(time.Second) }

// FireTimeAfter follows CronTriggerImpl.getFireTimeAfter: a t before the
// start searches from start-1s; a t at or after End has no fire time; a
// candidate after End is dropped.
func (c Cron) FireTimeAfter(t time.Time) (time.Time, bool) {
	if c.Schedule == nil {
		return time.Time{}, false
	}
	if start := c.start(); start.After(t) {
		t = start.Add(-time.Second)
	}
	if !c.End.IsZero() && !t.Before(c.End) {
		return time.Time{}, false
	}
	n := c.Schedule.Next(t)
	// A schedule that does not move forward would make every caller loop;
	// treat it as exhausted.
	if n.IsZero() || !n.After(t) {
		return time.Time{}, false
	}
	if !c.End.IsZero() && n.After(c.End) {
		return time.Time{}, false
	}
	return n, true
}

// First returns the first fire time at or after the rounded start.
func (c Cron) First() (time.Time, bool) {
	return c.FireTimeAfter(c.start().Add(-time.Second))
}

// Validate reports a missing schedule ([ErrNoSchedule]), an End before Start
// ([ErrEndBeforeStart]) and a trigger without any fire time
// ([ErrNeverFires]).
func (c Cron) Validate() error {
	if c.Schedule == nil {
		return &detailError{"cron trigger has no schedule", ErrNoSchedule}
	}
	if err := checkEnd(c.start(), c.End); err != nil {
		return err
	}
	if _, ok := c.First(); !ok {
		msg := fmt.Sprintf("trigger will never fire: the schedule has no fire time at or after the start %s", formatTime(c.start()))
		if !c.End.IsZero() {
			msg = fmt.Sprintf("trigger will never fire: the schedule has no fire time between the start %s and the end %s",
				formatTime(c.start()), formatTime(c.End))
		}
		return &detailError{msg, ErrNeverFires}
	}
	return nil
}

func (c Cron) initial() State {
	s := State{Start: c.start(), RepeatCount: RepeatForever}
	s.Next, s.Complete = c.First()
	s.Complete = !s.Complete
	return s
}

func (c Cron) next(_ State, t time.Time) (time.Time, bool) { return c.FireTimeAfter(t) }

// misfire is CronTriggerImpl.updateAfterMisfire.
func (c Cron) misfire(p Policy, s State, now time.Time) (State, bool) {
	switch p {
	case PolicyIgnoreMisfires:
		return s, false
	case PolicyDoNothing:
		s.Next, s.Complete = c.FireTimeAfter(now)
		s.Complete = !s.Complete
		return s, false
	default: // PolicySmart, PolicyFireOnceNow; a simple-only policy counts as smart.
		// FIRE_ONCE_NOW ignores End and an exhausted schedule (vector C8).
		s.Next = now
		return s, true
	}
}

// latestSlot finds the latest fire time in [s.Next, now] with O(log(gap))
// calls to FireTimeAfter instead of walking every missed slot: a per-second
// schedule after a week's outage would otherwise take 600,000 steps.
//
// Bisection assumes FireTimeAfter grows with its argument. Quartz's
// wall-clock search breaks that inside the repeated hour of a DST change,
// where the result is still a missed slot whose successor is after now, but
// possibly not the last one a walk would reach.
func (c Cron) latestSlot(s State, now time.Time) time.Time {
	first, ok := c.FireTimeAfter(s.Next)
	if !ok || first.After(now) {
		return s.Next
	}
	// Invariant: FireTimeAfter(lo) <= now < FireTimeAfter(hi) (or none).
	lo, hi := s.Next, now
	for d := time.Second; ; d *= 2 {
		t := now.Add(-d)
		if !t.After(s.Next) || d > 1<<61 {
			break
		}
		if n, ok := c.FireTimeAfter(t); ok && !n.After(now) {
			lo = t
			break
		}
		hi = t
	}
	for hi.Sub(lo) > time.Millisecond {
		mid := lo.Add(hi.Sub(lo) / 2)
		if n, ok := c.FireTimeAfter(mid); ok && !n.After(now) {
			lo = mid
		} else {
			hi = mid
		}
	}
	// Slots closer than a millisecond are not expected from cron schedules
	// (whole seconds), but walking forward keeps the answer exact for any
	// CronSchedule.
	latest, _ := c.FireTimeAfter(lo)
	for {
		n, ok := c.FireTimeAfter(latest)
		if !ok || n.After(now) {
			return latest
		}
		latest = n
	}
}

// skip does nothing: a cron schedule can only count its slots by walking
// them.
func (c Cron) skip(s State, _ time.Time, _ int) (State, int) { return s, 0 }

// checkEnd rejects an end before the start (Quartz: "End time cannot be
// before start time").
func checkEnd(start, end time.Time) error {
	if !end.IsZero() && end.Before(start) {
		return &detailError{
			fmt.Sprintf("end %s is before start %s", formatTime(end), formatTime(start)),
			ErrEndBeforeStart,
		}
	}
	return nil
}

func formatTime(t time.Time) string { return t.Format("2006-01-02T15:04:05.999Z07:00") }
