package firing

import (
	"sync"
	"time"
)

// ManualClock is a Clock that moves only when told, for deterministic tests
// of the loop and of code built on it. Advance moves wall and monotonic time
// together (what a paused process sees when it resumes); StepWall moves only
// the wall clock (what an NTP step or a manual date change looks like).
type ManualClock struct {
	mu     sync.Mutex
	wall   time.Time
	mono   time.Duration
	timers []*manualTimer // pending: not fired, not stopped
	cond   *sync.Cond     // broadcast when timers changes
}

// NewManualClock returns a ManualClock whose wall clock reads start.
func NewManualClock(start time.Time) *ManualClock {
	c := &ManualClock{wall: start}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// Now returns the manual wall-clock time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall
}

// Monotonic returns the manual monotonic reading.
func (c *ManualClock) Monotonic() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

// NewTimer returns a timer that fires when Advance passes its deadline.
func (c *ManualClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, deadline: c.mono + d, ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.fire(c.wall)
	} else {
		c.timers = append(c.timers, t)
		c.cond.Broadcast()
	}
	return t
}

// Advance moves wall and monotonic time forward by d and fires every timer
// whose deadline has passed.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = c.wall.Add(d)
	c.mono += d
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.deadline <= c.mono {
			t.fire(c.wall)
		} else {
			kept = append(kept, t)
		}
	}
	clear(c.timers[len(kept):])
	c.timers = kept
	c.cond.Broadcast()
}

// StepWall moves only the wall clock by d (negative steps it back).
// Timers are unaffected, as with a real clock.
func (c *ManualClock) StepWall(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = c.wall.Add(d)
}

// NextTimer returns how long until the earliest pending timer fires, and
// false when no timer is pending.
func (c *ManualClock) NextTimer() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return 0, false
	}
	d := c.timers[0].deadline
	for _, t := range c.timers[1:] {
		d = min(d, t.deadline)
	}
	return d - c.mono, true
}

// BlockUntil blocks until n timers are pending. A Loop has one pending
// timer exactly while it sleeps, so BlockUntil(1) waits for it to go back
// to sleep after a wake-up.
func (c *ManualClock) BlockUntil(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.timers) < n {
		c.cond.Wait()
	}
}

type manualTimer struct {
	c        *ManualClock
	deadline time.Duration
	ch       chan time.Time
	fired    bool
}

func (t *manualTimer) C() <-chan time.Time { return t.ch }

// fire is called with c.mu held.
func (t *manualTimer) fire(now time.Time) {
	if !t.fired {
		t.fired = true
		t.ch <- now
	}
}

// Stop removes the timer; it reports whether the timer had not fired yet.
func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.fired {
		return false
	}
	t.fired = true
	for i, x := range t.c.timers {
		if x == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			t.c.cond.Broadcast()
			break
		}
	}
	return true
}
