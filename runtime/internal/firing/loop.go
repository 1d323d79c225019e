package firing

import (
	"context"
	"errors"
	"sync"
	"time"
)

// NextFunc returns the first fire time strictly after after, or the zero
// time when the schedule will not fire again. It must be pure and cheap:
// the loop calls it with its lock held. An entry whose NextFunc returns a
// time not after the loop's now is treated as ended rather than spun on.
type NextFunc func(after time.Time) time.Time

// Due is one entry of a batch handed to Config.Fire.
type Due struct {
	// ID is the schedule's ID.
	ID string
	// At is the fire time that came due: the earliest one not yet handed
	// over.
	At time.Time
	// Folded is true when later fire times of the same schedule had also
	// passed by the wake-up; they are not handed over one by one. The
	// caller's misfire policy decides what to do about them.
	Folded bool
	// Next is when the entry fires again; zero when it never will, in which
	// case the loop has forgotten it.
	Next time.Time
}

// AnomalyKind says what went wrong with time.
type AnomalyKind int

const (
	// Stall means the loop woke up later than its timer asked for by more
	// than Config.StallThreshold of monotonic time: the process was paused
	// or starved.
	Stall AnomalyKind = iota + 1
	// WallJump means wall-clock time moved differently from monotonic time
	// by more than Config.JumpThreshold since the previous wake-up: the
	// system clock was stepped.
	WallJump
)

func (k AnomalyKind) String() string {
	switch k {
	case Stall:
		return "stall"
	case WallJump:
		return "wall-clock jump"
	}
	return "unknown"
}

// Anomaly describes a stall or a wall-clock jump.
type Anomaly struct {
	Kind AnomalyKind
	// Now is the wall-clock time of the wake-up that noticed it.
	Now time.Time
	// Delta is how late the wake-up was (Stall), or wall-clock progress
	// minus monotonic progress (WallJump; negative when the clock went back).
	Delta time.Duration
}

// FireFunc receives each wake-up's due entries, in fire-time order. The
// slice is reused by the loop; it is valid only during the call.
type FireFunc func(ctx context.Context, now time.Time, batch []Due)

// Config configures a Loop. Only Fire is required.
type Config struct {
	// Fire is called from Run's goroutine with every non-empty batch.
	Fire FireFunc
	// OnAnomaly, if set, is called from Run's goroutine before the batch of
	// the wake-up that noticed the anomaly, so the caller can run catch-up.
	OnAnomaly func(Anomaly)
	// Clock is the source of time. Default SystemClock().
	Clock Clock
	// MaxSleep bounds one sleep so that a wall-clock step is noticed and
	// acted on within it even when no entry is due. Default 1s.
	MaxSleep time.Duration
	// StallThreshold is how late a wake-up may be before it counts as a
	// Stall. Default 1s.
	StallThreshold time.Duration
	// JumpThreshold is how far wall and monotonic progress may differ
	// before it counts as a WallJump. Default 1s.
	JumpThreshold time.Duration
}

// ErrRunning is returned by Run when the loop is already running.
var ErrRunning = errors.New("firing: loop is already running")

// Loop is the firing loop. Its methods are safe for concurrent use; Run
// must be called at most once at a time.
type Loop struct {
	cfg Config
	w   waker

	mu      sync.Mutex
	heap    fireHeap
	entries map[string]*item
	batch   []Due
}

// New returns a Loop configured by cfg. It panics if cfg.Fire is nil.
func New(cfg Config) *Loop {
	if cfg.Fire == nil {
		panic("firing: Config.Fire is nil")
	}
	l := &Loop{cfg: cfg, entries: make(map[string]*item)}
	l.w.init(cfg.Clock, cfg.MaxSleep, cfg.StallThreshold, cfg.JumpThreshold, cfg.OnAnomaly)
	return l
}

// Set adds the schedule id, or replaces its next function and fire time if
// it exists (a paused entry stays paused), and schedules it at next(after).
// It returns that time; false means the schedule never fires and was not
// added (an existing entry is removed).
func (l *Loop) Set(id string, next NextFunc, after time.Time) (time.Time, bool) {
	at := next(after)
	if at.IsZero() {
		l.Remove(id)
		return time.Time{}, false
	}
	l.SetAt(id, next, at)
	return at, true
}

// SetAt is Set with an explicit next fire time, for entries whose next fire
// time was restored from durable state. A zero at removes the entry.
func (l *Loop) SetAt(id string, next NextFunc, at time.Time) {
	if at.IsZero() {
		l.Remove(id)
		return
	}
	l.mu.Lock()
	e, ok := l.entries[id]
	if !ok {
		e = &item{id: id, index: -1}
		l.entries[id] = e
	}
	e.next, e.at = next, at.UnixNano()
	l.place(e)
	l.mu.Unlock()
}

// Reschedule moves the next fire time of id to at. It reports whether id
// exists; a paused entry takes the time but stays paused.
func (l *Loop) Reschedule(id string, at time.Time) bool {
	if at.IsZero() {
		return l.Remove(id)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[id]
	if ok {
		e.at = at.UnixNano()
		l.place(e)
	}
	return ok
}

// Remove forgets id. It reports whether id existed.
func (l *Loop) Remove(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[id]
	if !ok {
		return false
	}
	delete(l.entries, id)
	if e.index >= 0 {
		head := e.index == 0
		l.heap.remove(e.index)
		if head {
			l.w.poke()
		}
	}
	return true
}

// Pause keeps id but takes it out of the heap, so it does not fire. It
// reports whether id exists.
func (l *Loop) Pause(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[id]
	if !ok {
		return false
	}
	e.paused = true
	if e.index >= 0 {
		l.heap.remove(e.index)
	}
	return true
}

// Resume puts a paused id back at next(after), its first fire time after
// the pause as the caller sees it (usually now). It returns that time and
// whether the entry is scheduled; an entry whose schedule has ended is
// removed.
func (l *Loop) Resume(id string, after time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[id]
	if !ok {
		return time.Time{}, false
	}
	at := e.next(after)
	if at.IsZero() {
		delete(l.entries, id)
		if e.index >= 0 {
			l.heap.remove(e.index)
		}
		return time.Time{}, false
	}
	e.paused = false
	e.at = at.UnixNano()
	l.place(e)
	return at, true
}

// Next returns id's next fire time and whether it is scheduled (it exists
// and is not paused).
func (l *Loop) Next(id string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[id]
	if !ok || e.paused {
		return time.Time{}, false
	}
	return unixUTC(e.at), true
}

// Len returns the number of entries, paused ones included.
func (l *Loop) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// place puts e where its at belongs, unless it is paused, and wakes Run if
// the head of the heap may have changed. l.mu must be held.
func (l *Loop) place(e *item) {
	if e.paused {
		return
	}
	if e.index < 0 {
		l.heap.push(e)
	} else {
		l.heap.fix(e.index)
	}
	if e.index == 0 {
		l.w.poke()
	}
}

// Run fires entries until ctx ends, then returns nil; a Fire call in
// progress is not interrupted (it receives ctx). It returns ErrRunning if
// the loop is already running. Entries stay in the loop after Run returns,
// so a new leader term can Run it again.
func (l *Loop) Run(ctx context.Context) error {
	return l.w.run(ctx, func(now time.Time) {
		if batch := l.collect(now); len(batch) > 0 {
			l.cfg.Fire(ctx, now, batch)
		}
	}, l.head)
}

// head returns the fire time of the head of the heap, if any.
func (l *Loop) head() (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.heap) == 0 {
		return 0, false
	}
	return l.heap[0].at, true
}

// collect pops every entry due at now, reschedules it after now and returns
// the batch (l.batch, reused).
func (l *Loop) collect(now time.Time) []Due {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batch = l.batch[:0]
	n := now.UnixNano()
	for len(l.heap) > 0 && l.heap[0].at <= n {
		e := l.heap[0]
		at := unixUTC(e.at)
		d := Due{ID: e.id, At: at}
		next := e.next(at)
		if !next.IsZero() && !next.After(now) {
			d.Folded = true
			if next = e.next(now); !next.After(now) {
				next = time.Time{} // a NextFunc that does not move forward ends
			}
		}
		if next.IsZero() {
			l.heap.remove(0)
			delete(l.entries, e.id)
		} else {
			e.at = next.UnixNano()
			l.heap.fix(0)
			d.Next = next
		}
		l.batch = append(l.batch, d)
	}
	return l.batch
}

func unixUTC(ns int64) time.Time { return time.Unix(0, ns).UTC() }
