package firing

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// every returns a NextFunc firing at t0 + k*d for k >= 1.
func every(d time.Duration) NextFunc {
	return func(after time.Time) time.Time {
		k := after.Sub(t0)/d + 1
		return t0.Add(k * d)
	}
}

// times returns a NextFunc firing at the given instants only.
func times(ts ...time.Time) NextFunc {
	return func(after time.Time) time.Time {
		for _, t := range ts {
			if t.After(after) {
				return t
			}
		}
		return time.Time{}
	}
}

// harness runs a Loop on a ManualClock and records, in order, every batch
// (a copy) and anomaly the loop reports.
type harness struct {
	t      *testing.T
	clk    *ManualClock
	loop   *Loop
	events chan any // []Due or Anomaly
	stop   func()
}

func newHarness(t *testing.T, setup func(*Loop)) *harness {
	h := &harness{t: t, clk: NewManualClock(t0), events: make(chan any, 1000)}
	h.loop = New(Config{
		Clock:     h.clk,
		Fire:      func(_ context.Context, _ time.Time, b []Due) { h.events <- slices.Clone(b) },
		OnAnomaly: func(a Anomaly) { h.events <- a },
	})
	if setup != nil {
		setup(h.loop)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.loop.Run(ctx) }()
	h.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	t.Cleanup(h.stop)
	h.clk.BlockUntil(1)
	return h
}

// advance moves time forward by d the way a healthy process sees it: in
// steps that end at each of the loop's timer deadlines, so the loop wakes
// on time at every one of them.
func (h *harness) advance(d time.Duration) {
	for d > 0 {
		h.clk.BlockUntil(1)
		step, _ := h.clk.NextTimer()
		step = min(step, d)
		h.clk.Advance(step)
		d -= step
	}
}

func (h *harness) batch() []Due {
	h.t.Helper()
	switch e := h.next().(type) {
	case []Due:
		return e
	default:
		h.t.Fatalf("got %#v, want a batch", e)
		return nil
	}
}

func (h *harness) anomaly() Anomaly {
	h.t.Helper()
	switch e := h.next().(type) {
	case Anomaly:
		return e
	default:
		h.t.Fatalf("got %#v, want an anomaly", e)
		return Anomaly{}
	}
}

func (h *harness) next() any {
	h.t.Helper()
	select {
	case e := <-h.events:
		return e
	case <-time.After(10 * time.Second):
		h.t.Fatal("loop reported nothing")
		return nil
	}
}

// quiet checks that the loop is asleep with nothing to report.
func (h *harness) quiet() {
	h.t.Helper()
	h.clk.BlockUntil(1)
	select {
	case e := <-h.events:
		h.t.Fatalf("unexpected %#v", e)
	default:
	}
}

func ids(b []Due) []string {
	var out []string
	for _, d := range b {
		out = append(out, d.ID)
	}
	return out
}

func TestFiresEachEntryAtItsTimeAndReschedulesIt(t *testing.T) {
	h := newHarness(t, func(l *Loop) {
		l.Set("ten", every(10*time.Second), t0)
		l.Set("fifteen", every(15*time.Second), t0)
	})
	h.advance(10 * time.Second)
	b := h.batch()
	if len(b) != 1 || b[0].ID != "ten" || !b[0].At.Equal(t0.Add(10*time.Second)) ||
		!b[0].Next.Equal(t0.Add(20*time.Second)) || b[0].Folded {
		t.Fatalf("at +10s: %+v", b)
	}
	h.advance(5 * time.Second)
	if b := h.batch(); len(b) != 1 || b[0].ID != "fifteen" || !b[0].Next.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("at +15s: %+v", b)
	}
	h.advance(4 * time.Second)
	h.quiet()
	h.advance(time.Second)
	if b := h.batch(); !slices.Equal(ids(b), []string{"ten"}) {
		t.Fatalf("at +20s: %v", ids(b))
	}
}

func TestEntriesDueTogetherComeInOneBatchInTimeOrder(t *testing.T) {
	h := newHarness(t, func(l *Loop) {
		l.SetAt("c", every(time.Minute), t0.Add(3*time.Second))
		l.SetAt("a", every(time.Minute), t0.Add(1*time.Second))
		l.SetAt("b", every(time.Minute), t0.Add(2*time.Second))
	})
	// The process stalls until all three are due: one wake-up, one batch.
	h.clk.BlockUntil(1)
	h.clk.Advance(3 * time.Second)
	if a := h.anomaly(); a.Kind != Stall {
		t.Fatalf("anomaly = %+v, want a stall", a)
	}
	if b := h.batch(); !slices.Equal(ids(b), []string{"a", "b", "c"}) {
		t.Fatalf("batch = %v, want [a b c]", ids(b))
	}
}

func TestLateWakeupReportsStallAndFoldsTheBacklog(t *testing.T) {
	h := newHarness(t, func(l *Loop) { l.Set("tick", every(10*time.Second), t0) })
	// The process is paused for 35s: the timer set for +1s (MaxSleep)
	// fires 34s late.
	h.clk.BlockUntil(1)
	h.clk.Advance(35 * time.Second)
	a := h.anomaly()
	if a.Kind != Stall || a.Delta != 34*time.Second {
		t.Fatalf("anomaly = %+v, want a 34s stall", a)
	}
	b := h.batch()
	want := Due{ID: "tick", At: t0.Add(10 * time.Second), Folded: true, Next: t0.Add(40 * time.Second)}
	if len(b) != 1 || !equalDue(b[0], want) {
		t.Fatalf("batch = %+v, want %+v", b, want)
	}
	h.quiet() // the 20s and 30s fire times are not replayed
}

func TestWallClockStepsAreReported(t *testing.T) {
	h := newHarness(t, func(l *Loop) { l.Set("hourly", every(time.Hour), t0) })
	h.clk.BlockUntil(1)
	h.clk.StepWall(2 * time.Hour) // NTP steps forward while the loop sleeps
	h.clk.Advance(time.Second)    // the MaxSleep timer fires on time
	if a := h.anomaly(); a.Kind != WallJump || a.Delta != 2*time.Hour {
		t.Fatalf("anomaly = %+v, want a +2h wall jump", a)
	}
	b := h.batch()
	if len(b) != 1 || !b[0].Folded || !b[0].At.Equal(t0.Add(time.Hour)) || !b[0].Next.Equal(t0.Add(3*time.Hour)) {
		t.Fatalf("batch after the jump = %+v", b)
	}

	h.clk.BlockUntil(1)
	h.clk.StepWall(-90 * time.Minute)
	h.clk.Advance(time.Second)
	if a := h.anomaly(); a.Kind != WallJump || a.Delta != -90*time.Minute {
		t.Fatalf("anomaly = %+v, want a -90m wall jump", a)
	}
	h.quiet() // going back never fires anything twice
}

func TestPausedEntriesDoNotFireAndResumeAfterThePause(t *testing.T) {
	h := newHarness(t, func(l *Loop) {
		l.Set("p", every(10*time.Second), t0)
		l.Set("q", every(15*time.Second), t0)
	})
	if !h.loop.Pause("p") {
		t.Fatal("Pause of an existing entry returned false")
	}
	if _, ok := h.loop.Next("p"); ok {
		t.Fatal("paused entry reports a next fire time")
	}
	h.advance(10 * time.Second)
	h.quiet()
	h.advance(5 * time.Second)
	if b := h.batch(); !slices.Equal(ids(b), []string{"q"}) {
		t.Fatalf("batch = %v, want [q]", ids(b))
	}
	at, ok := h.loop.Resume("p", h.clk.Now())
	if !ok || !at.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("Resume = %v, %v; want +20s", at, ok)
	}
	h.advance(5 * time.Second)
	if b := h.batch(); !slices.Equal(ids(b), []string{"p"}) {
		t.Fatalf("batch = %v, want [p]", ids(b))
	}
	if h.loop.Len() != 2 {
		t.Fatalf("Len = %d, want 2", h.loop.Len())
	}
}

func TestRemovedEntriesNeverFire(t *testing.T) {
	h := newHarness(t, func(l *Loop) {
		l.Set("gone", every(10*time.Second), t0)
		l.Set("kept", every(20*time.Second), t0)
	})
	if !h.loop.Remove("gone") || h.loop.Remove("gone") {
		t.Fatal("Remove should report true once, then false")
	}
	h.advance(20 * time.Second)
	if b := h.batch(); !slices.Equal(ids(b), []string{"kept"}) {
		t.Fatalf("batch = %v, want [kept]", ids(b))
	}
}

func TestAnEarlierEntryWakesTheSleepingLoop(t *testing.T) {
	h := newHarness(t, func(l *Loop) { l.Set("late", every(time.Hour), t0) })
	h.clk.BlockUntil(1)
	h.loop.SetAt("soon", every(time.Hour), t0.Add(500*time.Millisecond))
	h.advance(500 * time.Millisecond)
	if b := h.batch(); !slices.Equal(ids(b), []string{"soon"}) {
		t.Fatalf("batch = %v, want [soon]", ids(b))
	}
}

func TestRescheduleMovesTheNextFire(t *testing.T) {
	h := newHarness(t, func(l *Loop) { l.Set("x", every(time.Hour), t0) })
	if !h.loop.Reschedule("x", t0.Add(2*time.Second)) {
		t.Fatal("Reschedule of an existing entry returned false")
	}
	h.advance(2 * time.Second)
	b := h.batch()
	if len(b) != 1 || !b[0].At.Equal(t0.Add(2*time.Second)) || !b[0].Next.Equal(t0.Add(time.Hour)) {
		t.Fatalf("batch = %+v", b)
	}
}

func TestEndedSchedulesAreForgotten(t *testing.T) {
	h := newHarness(t, func(l *Loop) {
		l.Set("twice", times(t0.Add(time.Second), t0.Add(2*time.Second)), t0)
	})
	h.advance(time.Second)
	if b := h.batch(); b[0].Next.IsZero() {
		t.Fatalf("first fire already final: %+v", b)
	}
	h.advance(time.Second)
	if b := h.batch(); !b[0].Next.IsZero() {
		t.Fatalf("second fire should be final: %+v", b)
	}
	if h.loop.Len() != 0 {
		t.Fatalf("Len = %d after the schedule ended", h.loop.Len())
	}
	if _, ok := h.loop.Set("never", times(), t0); ok {
		t.Fatal("Set of a schedule with no fire time reported ok")
	}
}

func TestRunTwiceIsAnError(t *testing.T) {
	h := newHarness(t, nil)
	if err := h.loop.Run(context.Background()); err != ErrRunning {
		t.Fatalf("second Run: %v, want ErrRunning", err)
	}
}

// TestHeapMatchesAModel applies random operations to a loop and to a plain
// map, then drains the loop and checks it yields exactly the model's
// entries in fire-time order.
func TestHeapMatchesAModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	l := New(Config{Fire: func(context.Context, time.Time, []Due) {}})
	model := map[string]time.Time{}
	paused := map[string]bool{}
	never := func(time.Time) time.Time { return time.Time{} }
	for range 20000 {
		id := string(rune('a' + rng.IntN(26)))
		at := t0.Add(time.Duration(rng.IntN(1000)) * time.Second)
		switch rng.IntN(5) {
		case 0, 1:
			l.SetAt(id, never, at)
			model[id] = at
		case 2:
			l.Remove(id)
			delete(model, id)
			delete(paused, id)
		case 3:
			if l.Reschedule(id, at) {
				model[id] = at
			}
		case 4:
			if l.Pause(id) {
				paused[id] = true
			}
		}
	}
	var want []Due
	for id, at := range model {
		if !paused[id] {
			want = append(want, Due{ID: id, At: at})
		}
	}
	slices.SortFunc(want, func(a, b Due) int { return a.At.Compare(b.At) })
	got := slices.Clone(l.collect(t0.Add(time.Hour)))
	if len(got) != len(want) {
		t.Fatalf("drained %d entries, model has %d", len(got), len(want))
	}
	for i := range got {
		if !got[i].At.Equal(want[i].At) {
			t.Fatalf("entry %d fires at %v, model says %v", i, got[i].At, want[i].At)
		}
	}
}

func equalDue(a, b Due) bool {
	return a.ID == b.ID && a.At.Equal(b.At) && a.Folded == b.Folded && a.Next.Equal(b.Next)
}

func TestRunsOnTheSystemClock(t *testing.T) {
	fired := make(chan Due, 1)
	l := New(Config{Fire: func(_ context.Context, _ time.Time, b []Due) {
		select {
		case fired <- b[0]:
		default:
		}
	}})
	soon := time.Now().Add(20 * time.Millisecond)
	l.Set("soon", times(soon), time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Run(ctx) }()
	select {
	case d := <-fired:
		if d.ID != "soon" || !d.At.Equal(soon) {
			t.Fatalf("fired %+v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("never fired on the system clock")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
