package trigger

import "time"

// State is what the scheduler persists per schedule between fires: the
// mutable part of a Quartz trigger. It starts as [Initial] and changes only
// through [Triggered] and [Catchup.Due].
//
// Start and RepeatCount are here, and not only in the [Simple] definition,
// because the rescheduleNow... policies rewrite them (the trigger restarts
// at the misfire time with the runs it has left). For a [Cron] trigger Start
// is the rounded start and RepeatCount is RepeatForever; neither changes.
type State struct {
	// Next is the next scheduled fire time; zero once Complete.
	Next time.Time
	// Prev is the last fire time handed out, zero before the first fire.
	// For a fire the policy moved to "now" it is that now, as in Quartz.
	Prev time.Time
	// Start anchors a simple trigger's slots: Start + k·Interval.
	Start time.Time
	// TimesTriggered counts the slots consumed since Start: fires handed out,
	// fires dropped by the MaxFires cap, and the slots Quartz's
	// rescheduleNextWithRemainingCount counts as missed.
	TimesTriggered int
	// RepeatCount is a simple trigger's remaining repeat budget relative to
	// Start (see Simple.RepeatCount).
	RepeatCount int
	// Complete reports that the trigger will never fire again.
	Complete bool
}

// Initial returns the state of t before its first fire. When t has no fire
// time at all the state is already Complete.
func Initial(t Trigger) State { return t.initial() }

// Triggered advances s past the fire at s.Next, as Quartz's triggered()
// does: Prev becomes Next, Next becomes the fire time after the old Next
// (never after the moment the job ran), and TimesTriggered grows by one.
// When there is no further fire time the state becomes Complete.
// Triggered on a Complete state returns it unchanged.
func Triggered(t Trigger, s State) State {
	if s.Complete {
		return s
	}
	s.TimesTriggered++
	s.Prev = s.Next
	next, ok := t.next(s, s.Next)
	if !ok {
		return complete(s)
	}
	s.Next = next
	return s
}

// complete marks s as finished.
func complete(s State) State {
	s.Next, s.Complete = time.Time{}, true
	return s
}
