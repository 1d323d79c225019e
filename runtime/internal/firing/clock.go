package firing

import "time"

// Clock is the loop's source of time. Fire times are wall-clock instants
// compared with Now; Monotonic measures elapsed time that never jumps, which
// is how the loop tells a stalled process from a stepped wall clock.
type Clock interface {
	// Now returns the current wall-clock time.
	Now() time.Time
	// Monotonic returns the time elapsed since some fixed origin, on a
	// clock that is never set.
	Monotonic() time.Duration
	// NewTimer returns a timer that fires once after d of monotonic time.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer created by a Clock.
type Timer interface {
	// C delivers the time once the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// SystemClock returns the Clock of the running process.
func SystemClock() Clock { return systemClock{origin: time.Now()} }

type systemClock struct{ origin time.Time }

func (c systemClock) Now() time.Time                 { return time.Now() }
func (c systemClock) Monotonic() time.Duration       { return time.Since(c.origin) }
func (c systemClock) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop() bool          { return t.t.Stop() }
