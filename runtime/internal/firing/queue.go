package firing

import (
	"context"
	"sync"
	"time"
)

// Slot is an entry's place in a Queue. Embed one in the entry type and
// return it from the entry's FiringSlot method; the zero Slot is in no
// queue. An entry is in at most one Queue at a time.
type Slot struct {
	pos int32 // 1 + the entry's index in the heap; 0: not queued
}

// Queued reports whether the entry is in a Queue.
func (s *Slot) Queued() bool { return s.pos > 0 }

// Entry is what a Queue orders: a pointer to the caller's own entry, which
// holds the entry's Slot.
type Entry interface {
	comparable
	FiringSlot() *Slot
}

// QueueConfig configures a Queue. Only Fire is required; the other fields
// mean what they mean in Config.
type QueueConfig[E Entry] struct {
	// Fire is called from Run's goroutine with the entries that came due
	// at a wake-up, in fire-time order; they are out of the Queue by then
	// (Set puts one back). The slice is reused by the Queue; it is valid
	// only during the call.
	Fire func(ctx context.Context, now time.Time, due []E)

	OnAnomaly      func(Anomaly)
	Clock          Clock
	MaxSleep       time.Duration
	StallThreshold time.Duration
	JumpThreshold  time.Duration
}

// Queue is the firing loop over entries the caller holds, for callers
// that keep their own index of entries and compute each next fire time
// themselves. Where Loop keys its entries by ID and keeps a NextFunc and
// an entry of its own for each, a Queue keeps only a heap of (fire time,
// entry) pairs, and each entry a Slot: 16 bytes per entry in the heap and
// 4 in the entry, against about 110 bytes for a Loop entry and its
// closure, which matters at 100k schedules. A due entry is handed to Fire
// once and leaves the Queue: nothing is rescheduled until the caller Sets
// it again. Wake-ups, stalls and wall-clock jumps are as for Loop.
//
// Its methods are safe for concurrent use; Run must be called at most once
// at a time.
type Queue[E Entry] struct {
	fire func(ctx context.Context, now time.Time, due []E)
	w    waker

	mu    sync.Mutex
	heap  []queued[E]
	batch []E
}

// queued is one entry of a Queue's heap.
type queued[E Entry] struct {
	at int64 // Unix ns
	e  E
}

// NewQueue returns a Queue configured by cfg. It panics if cfg.Fire is nil.
func NewQueue[E Entry](cfg QueueConfig[E]) *Queue[E] {
	if cfg.Fire == nil {
		panic("firing: QueueConfig.Fire is nil")
	}
	q := &Queue[E]{fire: cfg.Fire}
	q.w.init(cfg.Clock, cfg.MaxSleep, cfg.StallThreshold, cfg.JumpThreshold, cfg.OnAnomaly)
	return q
}

// Set puts e in the Queue at fire time at, or moves it there if it is in
// already. A zero at removes it.
func (q *Queue[E]) Set(e E, at time.Time) {
	if at.IsZero() {
		q.Remove(e)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	i := int(e.FiringSlot().pos) - 1
	if i < 0 {
		i = len(q.heap)
		q.heap = append(q.heap, queued[E]{at: at.UnixNano(), e: e})
		e.FiringSlot().pos = int32(i + 1)
	} else {
		q.heap[i].at = at.UnixNano()
	}
	i = q.fix(i)
	if i == 0 {
		q.w.poke()
	}
}

// Remove takes e out of the Queue. It reports whether e was in it.
func (q *Queue[E]) Remove(e E) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := int(e.FiringSlot().pos) - 1
	if i < 0 {
		return false
	}
	q.remove(i)
	if i == 0 {
		q.w.poke()
	}
	return true
}

// Next returns e's fire time and whether e is in the Queue.
func (q *Queue[E]) Next(e E) (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := int(e.FiringSlot().pos) - 1
	if i < 0 {
		return time.Time{}, false
	}
	return unixUTC(q.heap[i].at), true
}

// Len returns the number of entries in the Queue.
func (q *Queue[E]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.heap)
}

// Run hands due entries to Fire until ctx ends, then returns nil; a Fire
// call in progress is not interrupted (it receives ctx). It returns
// ErrRunning if the Queue is already running.
func (q *Queue[E]) Run(ctx context.Context) error {
	return q.w.run(ctx, func(now time.Time) {
		if due := q.collect(now); len(due) > 0 {
			q.fire(ctx, now, due)
		}
	}, q.head)
}

// head returns the earliest fire time, if any.
func (q *Queue[E]) head() (int64, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.heap) == 0 {
		return 0, false
	}
	return q.heap[0].at, true
}

// collect takes every entry due at now out of the Queue and returns them
// in fire-time order (q.batch, reused).
func (q *Queue[E]) collect(now time.Time) []E {
	q.mu.Lock()
	defer q.mu.Unlock()
	clear(q.batch) // drop the last batch's pointers
	q.batch = q.batch[:0]
	n := now.UnixNano()
	for len(q.heap) > 0 && q.heap[0].at <= n {
		q.batch = append(q.batch, q.remove(0))
	}
	return q.batch
}

// remove takes the entry at index i out of the heap and returns it.
// q.mu is held.
func (q *Queue[E]) remove(i int) E {
	h := q.heap
	n := len(h) - 1
	e := h[i].e
	if i != n {
		q.swap(i, n)
	}
	h[n] = queued[E]{}
	q.heap = h[:n]
	if i != n {
		q.fix(i)
	}
	e.FiringSlot().pos = 0
	return e
}

// fix restores the heap order after the entry at index i changed, and
// returns where it went. q.mu is held.
func (q *Queue[E]) fix(i int) int {
	h := q.heap
	// Up.
	j := i
	for j > 0 {
		p := (j - 1) / 2
		if h[p].at <= h[j].at {
			break
		}
		q.swap(p, j)
		j = p
	}
	if j != i {
		return j
	}
	// Down.
	n := len(h)
	for {
		l := 2*j + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h[r].at < h[l].at {
			c = r
		}
		if h[c].at >= h[j].at {
			break
		}
		q.swap(j, c)
		j = c
	}
	return j
}

// swap exchanges the entries at i and j and keeps their slots current.
func (q *Queue[E]) swap(i, j int) {
	h := q.heap
	h[i], h[j] = h[j], h[i]
	h[i].e.FiringSlot().pos = int32(i + 1)
	h[j].e.FiringSlot().pos = int32(j + 1)
}
