package firing

import (
	"context"
	"sync/atomic"
	"time"
)

// waker is the part of Run that Loop and Queue share: it sleeps until the
// head of the heap is due (at most MaxSleep), reports stalls and
// wall-clock jumps, and makes a pass over what is due at every wake-up.
type waker struct {
	clock     Clock
	maxSleep  time.Duration
	stall     time.Duration // StallThreshold
	jump      time.Duration // JumpThreshold
	onAnomaly func(Anomaly)
	running   atomic.Bool
	wake      chan struct{}
}

// init applies the defaults of Config to the settings given.
func (w *waker) init(clock Clock, maxSleep, stall, jump time.Duration, onAnomaly func(Anomaly)) {
	if clock == nil {
		clock = SystemClock()
	}
	if maxSleep <= 0 {
		maxSleep = time.Second
	}
	if stall <= 0 {
		stall = time.Second
	}
	if jump <= 0 {
		jump = time.Second
	}
	w.clock, w.maxSleep, w.stall, w.jump, w.onAnomaly = clock, maxSleep, stall, jump, onAnomaly
	w.wake = make(chan struct{}, 1)
}

// poke wakes run: the head of the heap may have changed.
func (w *waker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// run calls pass at every wake-up until ctx ends, then returns nil; head
// reports the earliest fire time in Unix nanoseconds, if any. It returns
// ErrRunning if it is already running.
func (w *waker) run(ctx context.Context, pass func(now time.Time), head func() (int64, bool)) error {
	if !w.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer w.running.Store(false)
	clk := w.clock
	// A poke left from Sets made before Run is stale: the first pass reads
	// the heap anyway. Left in, it would cut the first sleep short, and a
	// process stalled during that sleep would go unreported.
	select {
	case <-w.wake:
	default:
	}
	prevWall, prevMono := clk.Now(), clk.Monotonic()
	for {
		now, mono := clk.Now(), clk.Monotonic()
		if w.onAnomaly != nil {
			// Strip any monotonic reading so Sub compares wall clocks.
			drift := now.Round(0).Sub(prevWall.Round(0)) - (mono - prevMono)
			if drift > w.jump || drift < -w.jump {
				w.onAnomaly(Anomaly{Kind: WallJump, Now: now, Delta: drift})
			}
		}
		prevWall, prevMono = now, mono

		pass(now)

		sleep := w.sleepFor(clk.Now(), head)
		// Read the time before arming: a stall between the two would
		// otherwise be counted as time asleep.
		armed := clk.Monotonic()
		t := clk.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-w.wake:
			t.Stop()
		case <-t.C():
			if late := clk.Monotonic() - armed - sleep; late > w.stall && w.onAnomaly != nil {
				w.onAnomaly(Anomaly{Kind: Stall, Now: clk.Now(), Delta: late})
			}
		}
	}
}

// sleepFor returns how long to sleep from now until the head is due,
// bounded by MaxSleep.
func (w *waker) sleepFor(now time.Time, head func() (int64, bool)) time.Duration {
	d := w.maxSleep
	if at, ok := head(); ok {
		if until := time.Duration(at - now.UnixNano()); until < d {
			d = max(until, 0)
		}
	}
	return d
}
