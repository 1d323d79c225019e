package trigger

import (
	"errors"
	"testing"
	"time"
)

// fireTimes walks t from Initial with Triggered and returns at most limit
// fire times.
func fireTimes(t Trigger, limit int) []time.Time {
	var out []time.Time
	for s := Initial(t); !s.Complete && len(out) < limit; s = Triggered(t, s) {
		out = append(out, s.Next)
	}
	return out
}

func equalTimes(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

func TestSimpleFiresRepeatCountPlusOneTimes(t *testing.T) {
	got := fireTimes(Simple{Start: T0, Interval: time.Minute, RepeatCount: 3}, 100)
	want := []time.Time{T0, sec(60), sec(120), sec(180)}
	if !equalTimes(got, want) {
		t.Fatalf("fires = %v; want %v", got, want)
	}
}

func TestSimpleOneShotFiresOnceWithoutInterval(t *testing.T) {
	got := fireTimes(Simple{Start: T0}, 100)
	if want := []time.Time{T0}; !equalTimes(got, want) {
		t.Fatalf("fires = %v; want %v", got, want)
	}
}

func TestSimpleEndIsExclusive(t *testing.T) {
	got := fireTimes(Simple{Start: T0, Interval: time.Minute, RepeatCount: RepeatForever, End: sec(180)}, 100)
	want := []time.Time{T0, sec(60), sec(120)}
	if !equalTimes(got, want) {
		t.Fatalf("fires = %v; want %v (no fire at the end)", got, want)
	}
}

// Quartz does not check the first fire against the end: a trigger whose
// end equals its start still fires once.
func TestSimpleFirstFireIgnoresEnd(t *testing.T) {
	trig := Simple{Start: T0, Interval: time.Minute, RepeatCount: RepeatForever, End: T0}
	if got := fireTimes(trig, 100); !equalTimes(got, []time.Time{T0}) {
		t.Fatalf("fires = %v; want just the start", got)
	}
	if err := trig.Validate(); err != nil {
		t.Fatalf("Validate() = %v; want nil", err)
	}
}

func TestSimpleStartIsNotRounded(t *testing.T) {
	start := T0.Add(250 * time.Millisecond)
	got := fireTimes(Simple{Start: start, Interval: time.Second, RepeatCount: 1}, 100)
	if want := []time.Time{start, start.Add(time.Second)}; !equalTimes(got, want) {
		t.Fatalf("fires = %v; want %v", got, want)
	}
}

// Simple triggers add durations to instants, so a daily trigger keeps its
// 24-hour spacing across a DST change and its wall-clock hour moves.
func TestSimpleIgnoresDaylightSaving(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skipf("no tzdata: %v", err) // the rule under test does not depend on the zone data
	}
	start := time.Date(2025, 3, 8, 12, 0, 0, 0, ny) // EST, the day before spring forward
	got := fireTimes(Simple{Start: start, Interval: 24 * time.Hour, RepeatCount: 1}, 100)
	if d := got[1].Sub(got[0]); d != 24*time.Hour {
		t.Fatalf("spacing = %v; want 24h", d)
	}
	if h := got[1].In(ny).Hour(); h != 13 {
		t.Fatalf("second fire at %v local; want 13:00 EDT", got[1].In(ny))
	}
}

// The checks of SimpleTriggerImpl.getFireTimeAfter, in Quartz's order.
func TestSimpleFireTimeAfterRules(t *testing.T) {
	tests := []struct {
		name  string
		trig  Simple
		tt    int // timesTriggered
		after time.Time
		want  time.Time // zero: none
	}{
		{"1: fired more than repeatCount times", Simple{Start: T0, Interval: time.Minute, RepeatCount: 3}, 4, T0, time.Time{}},
		{"1: exactly repeatCount times still has the anchored last slot", Simple{Start: T0, Interval: time.Minute, RepeatCount: 3}, 3, sec(120), sec(180)},
		{"2: one-shot after its start", Simple{Start: T0}, 0, T0, time.Time{}},
		{"2: one-shot before its start", Simple{Start: T0}, 0, sec(-1), T0},
		{"3: after at the end", Simple{Start: T0, Interval: time.Minute, RepeatCount: -1, End: sec(120)}, 0, sec(120), time.Time{}},
		{"4: before the start", Simple{Start: T0, Interval: time.Minute, RepeatCount: -1}, 0, sec(-3600), T0},
		{"5: next slot on the grid", Simple{Start: T0, Interval: time.Minute, RepeatCount: -1}, 0, sec(61), sec(120)},
		{"5: on a slot goes to the next", Simple{Start: T0, Interval: time.Minute, RepeatCount: -1}, 0, sec(60), sec(120)},
		{"5: past the last slot", Simple{Start: T0, Interval: time.Minute, RepeatCount: 3}, 0, sec(180), time.Time{}},
		{"5: last slot anchored whatever timesTriggered says", Simple{Start: T0, Interval: time.Minute, RepeatCount: 3}, 0, sec(170), sec(180)},
		{"5: candidate at the end is excluded", Simple{Start: T0, Interval: time.Minute, RepeatCount: -1, End: sec(120)}, 0, sec(61), time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Initial(tt.trig)
			s.TimesTriggered = tt.tt
			got, ok := tt.trig.next(s, tt.after)
			if ok != !tt.want.IsZero() || !got.Equal(tt.want) {
				t.Fatalf("next(tt=%d, %v) = %v, %v; want %v", tt.tt, tt.after, got, ok, tt.want)
			}
		})
	}
}

func TestSimpleValidate(t *testing.T) {
	tests := []struct {
		name    string
		trig    Simple
		want    error
		message string
	}{
		{"ok", Every(time.Second, T0), nil, ""},
		{"one-shot needs no interval", Simple{Start: T0}, nil, ""},
		{"sub-second", Every(500*time.Millisecond, T0), ErrSubSecondInterval,
			"interval 500ms is below the 1s minimum; chronos does not run sub-second schedules"},
		{"zero interval with repeats", Simple{Start: T0, RepeatCount: 2}, ErrSubSecondInterval,
			"interval 0s is below the 1s minimum; chronos does not run sub-second schedules"},
		{"negative interval on a one-shot", Simple{Start: T0, Interval: -time.Second}, ErrSubSecondInterval,
			"interval -1s is below the 1s minimum; chronos does not run sub-second schedules"},
		{"repeat count below -1", Simple{Start: T0, Interval: time.Second, RepeatCount: -2}, ErrRepeatCount,
			"repeat count -2 is invalid; use -1 to repeat forever or a count of repeats >= 0"},
		{"end before start", Simple{Start: sec(1), Interval: time.Second, RepeatCount: -1, End: T0}, ErrEndBeforeStart,
			"end 2025-01-01T00:00:00Z is before start 2025-01-01T00:00:01Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.trig.Validate()
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Fatalf("Validate() = %v; want %v", err, tt.want)
			}
			if err != nil && err.Error() != tt.message {
				t.Fatalf("Validate() message = %q; want %q", err, tt.message)
			}
		})
	}
}

func TestEveryRepeatsForever(t *testing.T) {
	trig := Every(time.Minute, T0)
	want := Simple{Start: T0, Interval: time.Minute, RepeatCount: RepeatForever}
	if trig != want {
		t.Fatalf("Every = %+v; want %+v", trig, want)
	}
	if got := fireTimes(trig, 1000); len(got) != 1000 {
		t.Fatalf("got %d fires; want unbounded", len(got))
	}
}

// FireTimeAfter and First describe the definition, before any fire: the
// same times Initial and Triggered walk through.
func TestSimpleFireTimeAfterFollowsTheDefinition(t *testing.T) {
	trig := Simple{Start: T0, Interval: time.Minute, RepeatCount: 2, End: sec(150)}
	if first, ok := trig.First(); !ok || !first.Equal(T0) {
		t.Fatalf("First() = %v, %v; want %v", first, ok, T0)
	}
	var got []time.Time
	for at, ok := trig.First(); ok; at, ok = trig.FireTimeAfter(at) {
		got = append(got, at)
	}
	if want := fireTimes(trig, 100); !equalTimes(got, want) {
		t.Fatalf("FireTimeAfter chain = %v; Triggered walk = %v", got, want)
	}
	if n, ok := trig.FireTimeAfter(sec(-10)); !ok || !n.Equal(T0) {
		t.Fatalf("FireTimeAfter(before start) = %v, %v; want the start", n, ok)
	}
}
