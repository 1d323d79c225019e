package trigger

import (
	"errors"
	"testing"
	"time"
)

func TestCronFirstCountsAFireAtStart(t *testing.T) {
	c := Cron{Schedule: every(5 * time.Minute), Start: T0}
	if got, ok := c.First(); !ok || !got.Equal(T0) {
		t.Fatalf("First() = %v, %v; want %v (a fire exactly at the start counts)", got, ok, T0)
	}
}

func TestCronStartIsRoundedDownToTheSecond(t *testing.T) {
	c := Cron{Schedule: every(5 * time.Minute), Start: T0.Add(500 * time.Millisecond)}
	if got, _ := c.First(); !got.Equal(T0) {
		t.Fatalf("First() = %v; want %v (start rounded down to %v)", got, T0, T0)
	}
	if s := Initial(c); !s.Start.Equal(T0) {
		t.Fatalf("Initial().Start = %v; want the rounded start %v", s.Start, T0)
	}
}

func TestCronFireTimeAfter(t *testing.T) {
	sched := every(5 * time.Minute)
	tests := []struct {
		name  string
		trig  Cron
		after time.Time
		want  time.Time // zero: none
	}{
		{"strictly after", Cron{Schedule: sched}, T0, sec(300)},
		{"before start searches from start-1s", Cron{Schedule: sched, Start: sec(600)}, T0, sec(600)},
		{"end is inclusive", Cron{Schedule: sched, End: sec(300)}, T0, sec(300)},
		{"candidate after end", Cron{Schedule: sched, End: sec(299)}, T0, time.Time{}},
		{"after at end", Cron{Schedule: sched, End: sec(300)}, sec(300), time.Time{}},
		{"after past end", Cron{Schedule: sched, End: sec(300)}, sec(400), time.Time{}},
		// The end check comes after moving t to start-1s: an end before the
		// start has nothing left.
		{"end before start", Cron{Schedule: sched, Start: sec(600), End: sec(300)}, T0, time.Time{}},
		{"exhausted schedule", Cron{Schedule: once(T0)}, T0, time.Time{}},
		{"no schedule", Cron{}, T0, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.trig.FireTimeAfter(tt.after)
			if ok != !tt.want.IsZero() || !got.Equal(tt.want) {
				t.Fatalf("FireTimeAfter(%v) = %v, %v; want %v", tt.after, got, ok, tt.want)
			}
		})
	}
}

// A schedule that returns a time not after its argument would make callers
// loop forever; the trigger treats it as exhausted.
func TestCronStuckScheduleIsExhausted(t *testing.T) {
	c := Cron{Schedule: stuck{}, Start: T0}
	if got, ok := c.FireTimeAfter(T0); ok {
		t.Fatalf("FireTimeAfter = %v; want none for a schedule that does not advance", got)
	}
}

type stuck struct{}

func (stuck) Next(after time.Time) time.Time { return after }

func TestCronTriggeredAdvancesFromTheScheduledTime(t *testing.T) {
	c := Cron{Schedule: every(5 * time.Minute), Start: T0, End: sec(600)}
	s := Initial(c)
	want := []time.Time{T0, sec(300), sec(600)}
	for i, w := range want {
		if s.Complete || !s.Next.Equal(w) {
			t.Fatalf("fire %d: state %+v; want Next %v", i, s, w)
		}
		s = Triggered(c, s)
		if !s.Prev.Equal(w) || s.TimesTriggered != i+1 {
			t.Fatalf("after fire %d: Prev %v, TimesTriggered %d; want %v, %d", i, s.Prev, s.TimesTriggered, w, i+1)
		}
	}
	if !s.Complete || !s.Next.IsZero() {
		t.Fatalf("after the fire at the end: %+v; want Complete with zero Next", s)
	}
	if again := Triggered(c, s); again != s {
		t.Fatalf("Triggered on a complete state changed it: %+v", again)
	}
}

func TestCronValidate(t *testing.T) {
	tests := []struct {
		name string
		trig Cron
		want error
	}{
		{"ok", Cron{Schedule: every(5 * time.Minute), Start: T0}, nil},
		{"ok without end", Cron{Schedule: every(5 * time.Minute), Start: T0}, nil},
		{"fires exactly at end", Cron{Schedule: once(T0), Start: T0, End: T0}, nil},
		{"no schedule", Cron{Start: T0}, ErrNoSchedule},
		{"end before start", Cron{Schedule: every(time.Minute), Start: sec(60), End: sec(59)}, ErrEndBeforeStart},
		{"only fire before start", Cron{Schedule: once(T0), Start: sec(1)}, ErrNeverFires},
		{"first fire after end", Cron{Schedule: every(5 * time.Minute), Start: sec(1), End: sec(299)}, ErrNeverFires},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.trig.Validate()
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Fatalf("Validate() = %v; want %v", err, tt.want)
			}
		})
	}
}

func TestCronNeverFiresMessage(t *testing.T) {
	err := Cron{Schedule: once(T0), Start: sec(1)}.Validate()
	want := "trigger will never fire: the schedule has no fire time at or after the start 2025-01-01T00:00:01Z"
	if err == nil || err.Error() != want {
		t.Fatalf("Validate() = %v; want %q", err, want)
	}
}

func TestCronInitialOfANeverFiringTriggerIsComplete(t *testing.T) {
	s := Initial(Cron{Schedule: once(T0), Start: sec(1)})
	if !s.Complete || !s.Next.IsZero() {
		t.Fatalf("Initial = %+v; want Complete", s)
	}
}
