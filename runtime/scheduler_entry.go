package chronos

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/firing"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// schedEntry is one schedule as the leader fires it. Within a term the
// leader is the only writer of trigger state, so its state equals the
// stored state (a failed or refused write marks the entry dirty: it is
// read again).
//
// It is 64 bytes: the definition is the decl's (shared with this
// instance's declaration when it declares the schedule as stored), the
// trigger state is packed, and what few entries have (pauses, failed
// writes) is behind more. This is memory per schedule.
type schedEntry struct {
	d     *decl       // the schedule's definition, compiled
	st    packedState // the trigger state (state, setState)
	more  *entryMore  // nil when none of its fields is set
	slot  firing.Slot // its place in the session's firing loop
	done  bool        // the trigger state's Complete
	dirty bool        // a write did not happen: the stored state is read again
	gone  bool        // forgotten, or replaced by a new entry (a new definition)
}

// entryMore is what few entries have.
type entryMore struct {
	pauses
	// failures counts the writes in a row that did not happen (Redis
	// refusing them: out of memory, unreachable); the entry is read and
	// evaluated again at retryAt, with backoff, instead of every refresh.
	failures int32
	retryAt  int64 // unix ns; 0: none
	// wide is the trigger state when one of its times does not fit
	// packedState (before 1678 or after 2262).
	wide *trigger.State
}

// pauses are a schedule's pauses as the registry holds them.
type pauses struct {
	pause     *schedstore.PauseInfo
	jobPauses map[string]schedstore.PauseInfo
}

func (p *pauses) paused(now time.Time) bool { return p.pause != nil && p.pause.Active(now) }

// jobPaused reports which jobs of a group are paused at now. It reads the
// pauses as they are when called (a refresh replaces the map, never
// changes it), so its result may be used after the lock is released.
func (p *pauses) jobPaused(now time.Time) func(string) bool {
	jp := p.jobPauses
	if len(jp) == 0 {
		return nil
	}
	return func(job string) bool { p, ok := jp[job]; return ok && p.Active(now) }
}

// FiringSlot is e's place in the session's firing loop (firing.Entry).
func (e *schedEntry) FiringSlot() *firing.Slot { return &e.slot }

// id is the schedule's ID.
func (e *schedEntry) id() string { return e.d.id }

func (e *schedEntry) paused(now time.Time) bool { return e.more != nil && e.more.paused(now) }

func (e *schedEntry) jobPaused(now time.Time) func(string) bool {
	if e.more == nil {
		return nil
	}
	return e.more.jobPaused(now)
}

// setPauses takes the pauses of the schedule as the registry holds them.
func (e *schedEntry) setPauses(pause *schedstore.PauseInfo, jobPauses map[string]schedstore.PauseInfo) {
	if pause != nil || jobPauses != nil {
		e.extra().pauses = pauses{pause, jobPauses}
	} else if e.more != nil {
		e.more.pauses = pauses{}
		e.tidy()
	}
}

// resume drops an expired pause of the whole schedule.
func (e *schedEntry) resume() {
	if e.more != nil {
		e.more.pause = nil
		e.tidy()
	}
}

// retryAt is when a schedule whose writes failed is read again (unix ns);
// 0: none.
func (e *schedEntry) retryAt() int64 {
	if e.more == nil {
		return 0
	}
	return e.more.retryAt
}

// extra returns e.more, made if need be.
func (e *schedEntry) extra() *entryMore {
	if e.more == nil {
		e.more = &entryMore{}
	}
	return e.more
}

// tidy drops e.more once it holds nothing.
func (e *schedEntry) tidy() {
	if m := e.more; m != nil && m.pause == nil && m.jobPauses == nil && m.failures == 0 && m.retryAt == 0 && m.wide == nil {
		e.more = nil
	}
}

// state returns e's trigger state.
func (e *schedEntry) state() trigger.State {
	if e.more != nil && e.more.wide != nil {
		return *e.more.wide
	}
	st := e.st.unpack()
	st.Complete = e.done
	return st
}

// setState sets e's trigger state.
func (e *schedEntry) setState(st trigger.State) {
	p, ok := pack(st)
	if !ok {
		e.extra().wide = &st
		return
	}
	e.st, e.done = p, st.Complete
	if e.more != nil && e.more.wide != nil {
		e.more.wide = nil
		e.tidy()
	}
}

// next is e's next fire time (State.Next).
func (e *schedEntry) next() time.Time {
	if e.more != nil && e.more.wide != nil {
		return e.more.wide.Next
	}
	return unpackTime(e.st.next)
}

// complete reports the trigger state's Complete.
func (e *schedEntry) complete() bool {
	if e.more != nil && e.more.wide != nil {
		return e.more.wide.Complete
	}
	return e.done
}

// packedState is a trigger.State but Complete in 40 bytes instead of 96:
// its times in Unix ns (noTime for the zero time), its counts in int64.
type packedState struct {
	next, prev, start int64
	times, repeat     int64 // TimesTriggered, RepeatCount
}

// noTime is the packed zero time.
const noTime = math.MinInt64

// The instants a packed time can hold.
var (
	packMin = time.Unix(0, math.MinInt64+1)
	packMax = time.Unix(0, math.MaxInt64)
)

// pack packs st, or reports that one of its times does not fit.
func pack(st trigger.State) (packedState, bool) {
	next, ok1 := packTime(st.Next)
	prev, ok2 := packTime(st.Prev)
	start, ok3 := packTime(st.Start)
	return packedState{next: next, prev: prev, start: start, times: int64(st.TimesTriggered), repeat: int64(st.RepeatCount)},
		ok1 && ok2 && ok3
}

func (p packedState) unpack() trigger.State {
	return trigger.State{Next: unpackTime(p.next), Prev: unpackTime(p.prev), Start: unpackTime(p.start),
		TimesTriggered: int(p.times), RepeatCount: int(p.repeat)}
}

func packTime(t time.Time) (int64, bool) {
	if t.IsZero() {
		return noTime, true
	}
	if t.Before(packMin) || t.After(packMax) {
		return 0, false
	}
	return t.UnixNano(), true
}

func unpackTime(ns int64) time.Time {
	if ns == noTime {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// entries is a session's entries, sorted by schedule ID: a slice, not a
// map, for memory per schedule.
type entries []*schedEntry

// find returns the entry of schedule id, or nil.
func (es entries) find(id string) *schedEntry {
	i, ok := slices.BinarySearchFunc(es, id, func(e *schedEntry, id string) int { return strings.Compare(e.d.id, id) })
	if !ok {
		return nil
	}
	return es[i]
}

// sorted sorts es by ID and drops repeats of an entry.
func (es entries) sorted() entries {
	slices.SortFunc(es, func(a, b *schedEntry) int { return strings.Compare(a.d.id, b.d.id) })
	return slices.Compact(es)
}
