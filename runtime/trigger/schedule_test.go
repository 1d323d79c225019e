package trigger

import (
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
)

// Test-only cron schedules for the rule and property tests: they make any
// step available (every(7*time.Second)) and are cheap enough for thousands
// of random cases. TestTestSchedulesMatchCron checks them against
// runtime/cron for the expressions they stand for; the brief's vectors use
// runtime/cron itself.

// T0 is the reference instant of the brief's misfire vectors.
var T0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// every is the schedule of a cron expression that fires on every multiple of
// step since the zero time, in UTC: every(5*time.Minute) is `0 0/5 * * * ?`
// and every(time.Second) is `* * * * * ?`.
type every time.Duration

func (e every) Next(after time.Time) time.Time {
	step := time.Duration(e)
	// Quartz: add a second, truncate to the second, then the first match.
	t := after.Truncate(time.Second).Add(time.Second)
	if r := t.Truncate(step); !r.Equal(t) {
		t = r.Add(step)
	}
	return t.UTC()
}

// once fires at a single instant: once(T0) is `0 0 0 1 1 ? 2025`.
type once time.Time

func (o once) Next(after time.Time) time.Time {
	if at := time.Time(o); after.Before(at) {
		return at
	}
	return time.Time{}
}

// sec returns T0 plus a (possibly fractional) number of seconds.
func sec(s float64) time.Time { return T0.Add(time.Duration(s * float64(time.Second))) }

func TestTestSchedulesMatchCron(t *testing.T) {
	tests := []struct {
		expr  string
		sched CronSchedule
	}{
		{"0 0/5 * * * ?", every(5 * time.Minute)},
		{"* * * * * ?", every(time.Second)},
		{"0 * * * * ?", every(time.Minute)},
		{"0 0 0 1 1 ? 2025", once(T0)},
	}
	for _, tt := range tests {
		real := cron.Schedule{Expr: cron.MustParse(tt.expr)}
		for _, after := range []time.Time{sec(-3600), sec(-0.5), T0, sec(0.001), sec(299.999), sec(300), sec(86400*40 + 17.25)} {
			if got, want := tt.sched.Next(after), real.Next(after); !got.Equal(want) {
				t.Errorf("%s: Next(%v) = %v; runtime/cron says %v", tt.expr, after, got, want)
			}
		}
	}
}
