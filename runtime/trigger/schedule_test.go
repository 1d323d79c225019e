package trigger

import "time"

// Test-only cron schedules, standing in for runtime/cron in the tests that
// must not depend on the parser. Both are exact for the expressions they
// name because those expressions are plain arithmetic in UTC.

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
