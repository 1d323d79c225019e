package firing

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// job is a Queue entry of the tests.
type job struct {
	name string
	slot Slot
}

func (j *job) FiringSlot() *Slot { return &j.slot }

// queueHarness runs a Queue on a ManualClock and records, in order, every
// batch (the names, in order) and anomaly it reports.
type queueHarness struct {
	*harness
	q *Queue[*job]
}

func newQueueHarness(t *testing.T, setup func(*Queue[*job])) *queueHarness {
	h := &queueHarness{harness: &harness{t: t, clk: NewManualClock(t0), events: make(chan any, 1000)}}
	h.q = NewQueue(QueueConfig[*job]{
		Clock: h.clk,
		Fire: func(_ context.Context, _ time.Time, due []*job) {
			b := make([]Due, len(due))
			for i, j := range due {
				if j.slot.Queued() {
					t.Errorf("%s handed to Fire while still queued", j.name)
				}
				b[i] = Due{ID: j.name}
			}
			h.events <- b
		},
		OnAnomaly: func(a Anomaly) { h.events <- a },
	})
	if setup != nil {
		setup(h.q)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.q.Run(ctx) }()
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

func TestQueueFiresEachEntryOnceAtItsTime(t *testing.T) {
	ten, fifteen := &job{name: "ten"}, &job{name: "fifteen"}
	h := newQueueHarness(t, func(q *Queue[*job]) {
		q.Set(fifteen, t0.Add(15*time.Second))
		q.Set(ten, t0.Add(10*time.Second))
	})
	h.advance(10 * time.Second)
	if b := h.batch(); !slices.Equal(ids(b), []string{"ten"}) {
		t.Fatalf("at +10s: %v", ids(b))
	}
	if _, ok := h.q.Next(ten); ok || h.q.Len() != 1 {
		t.Fatalf("a fired entry is still queued (Len %d)", h.q.Len())
	}
	h.q.Set(ten, t0.Add(20*time.Second)) // the caller puts it back
	h.advance(5 * time.Second)
	if b := h.batch(); !slices.Equal(ids(b), []string{"fifteen"}) {
		t.Fatalf("at +15s: %v", ids(b))
	}
	h.advance(4 * time.Second)
	h.quiet()
	h.advance(time.Second)
	if b := h.batch(); !slices.Equal(ids(b), []string{"ten"}) {
		t.Fatalf("at +20s: %v", ids(b))
	}
	h.advance(time.Minute)
	h.quiet() // nothing was put back
}

func TestQueueHandsEntriesDueTogetherInTimeOrder(t *testing.T) {
	a, b, c := &job{name: "a"}, &job{name: "b"}, &job{name: "c"}
	h := newQueueHarness(t, func(q *Queue[*job]) {
		q.Set(c, t0.Add(3*time.Second))
		q.Set(a, t0.Add(1*time.Second))
		q.Set(b, t0.Add(5*time.Second))
		q.Set(b, t0.Add(2*time.Second)) // moved
	})
	h.clk.BlockUntil(1)
	h.clk.Advance(3 * time.Second)
	if an := h.anomaly(); an.Kind != Stall || an.Delta != 2*time.Second {
		t.Fatalf("anomaly = %+v, want a 2s stall", an)
	}
	if got := h.batch(); !slices.Equal(ids(got), []string{"a", "b", "c"}) {
		t.Fatalf("batch = %v, want [a b c]", ids(got))
	}
}

func TestQueueReportsWallClockSteps(t *testing.T) {
	hourly := &job{name: "hourly"}
	h := newQueueHarness(t, func(q *Queue[*job]) { q.Set(hourly, t0.Add(time.Hour)) })
	h.clk.BlockUntil(1)
	h.clk.StepWall(2 * time.Hour)
	h.clk.Advance(time.Second)
	if a := h.anomaly(); a.Kind != WallJump || a.Delta != 2*time.Hour {
		t.Fatalf("anomaly = %+v, want a +2h wall jump", a)
	}
	if b := h.batch(); !slices.Equal(ids(b), []string{"hourly"}) {
		t.Fatalf("batch after the jump = %v", ids(b))
	}
}

func TestQueueRemovedEntriesNeverFire(t *testing.T) {
	gone, kept := &job{name: "gone"}, &job{name: "kept"}
	h := newQueueHarness(t, func(q *Queue[*job]) {
		q.Set(gone, t0.Add(10*time.Second))
		q.Set(kept, t0.Add(20*time.Second))
	})
	if !h.q.Remove(gone) || h.q.Remove(gone) {
		t.Fatal("Remove should report true once, then false")
	}
	h.q.Set(kept, time.Time{}) // a zero time removes too
	h.q.Set(kept, t0.Add(20*time.Second))
	h.advance(20 * time.Second)
	if b := h.batch(); !slices.Equal(ids(b), []string{"kept"}) {
		t.Fatalf("batch = %v, want [kept]", ids(b))
	}
}

func TestQueueAnEarlierEntryWakesIt(t *testing.T) {
	late, soon := &job{name: "late"}, &job{name: "soon"}
	h := newQueueHarness(t, func(q *Queue[*job]) { q.Set(late, t0.Add(time.Hour)) })
	h.clk.BlockUntil(1)
	h.q.Set(soon, t0.Add(500*time.Millisecond))
	h.advance(500 * time.Millisecond)
	if b := h.batch(); !slices.Equal(ids(b), []string{"soon"}) {
		t.Fatalf("batch = %v, want [soon]", ids(b))
	}
}

func TestQueueRunTwiceIsAnError(t *testing.T) {
	h := newQueueHarness(t, nil)
	if err := h.q.Run(context.Background()); err != ErrRunning {
		t.Fatalf("second Run: %v, want ErrRunning", err)
	}
}

// TestQueueMatchesAModel applies random operations to a Queue and to a
// plain map, then drains the Queue and checks it yields exactly the
// model's entries in fire-time order, each slot cleared.
func TestQueueMatchesAModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := NewQueue(QueueConfig[*job]{Fire: func(context.Context, time.Time, []*job) {}})
	jobs := make([]*job, 26)
	for i := range jobs {
		jobs[i] = &job{name: string(rune('a' + i))}
	}
	model := map[*job]time.Time{}
	for range 20000 {
		j := jobs[rng.IntN(len(jobs))]
		at := t0.Add(time.Duration(rng.IntN(1000)) * time.Second)
		switch rng.IntN(4) {
		case 0, 1:
			q.Set(j, at)
			model[j] = at
		case 2:
			_, in := model[j]
			if q.Remove(j) != in {
				t.Fatalf("Remove(%s) = %v, model has it: %v", j.name, !in, in)
			}
			delete(model, j)
		case 3:
			for _, d := range q.collect(t0.Add(time.Duration(rng.IntN(100)) * time.Second)) {
				if _, in := model[d]; !in {
					t.Fatalf("collected %s, which the model does not hold", d.name)
				}
				delete(model, d)
			}
		}
		if q.Len() != len(model) {
			t.Fatalf("Len = %d, model holds %d", q.Len(), len(model))
		}
	}
	type want struct {
		j  *job
		at time.Time
	}
	var wants []want
	for j, at := range model {
		wants = append(wants, want{j, at})
	}
	slices.SortFunc(wants, func(a, b want) int { return a.at.Compare(b.at) })
	got := slices.Clone(q.collect(t0.Add(time.Hour)))
	if len(got) != len(wants) {
		t.Fatalf("drained %d entries, model has %d", len(got), len(wants))
	}
	for i, j := range got {
		if model[j] != wants[i].at {
			t.Fatalf("entry %d (%s) fires at %v, model says %v", i, j.name, model[j], wants[i].at)
		}
		if j.slot.Queued() {
			t.Fatalf("%s drained but still queued", j.name)
		}
	}
}

// BenchmarkQueueMemoryPerEntry reports the heap bytes one entry costs a
// Queue of n entries: its heap slot, the entry's Slot not counted (it is
// part of the caller's entry).
func BenchmarkQueueMemoryPerEntry(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			jobs := make([]job, n)
			var perEntry float64
			for b.Loop() {
				clear(jobs)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				q := NewQueue(QueueConfig[*job]{Fire: func(context.Context, time.Time, []*job) {}})
				rng := rand.New(rand.NewPCG(7, 7))
				for i := range jobs {
					q.Set(&jobs[i], t0.Add(time.Duration(rng.Int64N(int64(time.Hour)))))
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perEntry = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
				runtime.KeepAlive(q)
			}
			b.ReportMetric(perEntry, "B/entry")
		})
	}
}

// BenchmarkQueueFire measures the Queue's own CPU per fire with n entries:
// pop the head and put it back at a later time, as the scheduler does.
func BenchmarkQueueFire(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			q := NewQueue(QueueConfig[*job]{Fire: func(context.Context, time.Time, []*job) {}})
			rng := rand.New(rand.NewPCG(7, 7))
			for range n {
				q.Set(&job{}, t0.Add(time.Duration(rng.Int64N(int64(time.Hour)))))
			}
			fires := 0
			b.ResetTimer()
			for b.Loop() {
				now := unixUTC(q.heap[0].at)
				for _, j := range q.collect(now) {
					q.Set(j, now.Add(time.Duration(1+rng.IntN(3600))*time.Second))
					fires++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(fires), "ns/fire")
		})
	}
}
