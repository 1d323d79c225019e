package chronos

import (
	"context"
	"encoding/hex"
	"sync"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// mirrorSkew is how far before its last look an instance reads changes
// again: writers stamp changes with their own clocks, and reading a change
// twice is harmless.
const mirrorSkew = 10 * time.Second

// mirror is this instance's memory of the schedules it declares, as the
// registry last held them: what it puts back when Redis loses its data
// (schedstore/mirror.go). It is brought up to date at every heartbeat with
// what changed since (one ZRANGEBYSCORE and one pipeline of the changed
// schedules), so it is at most a heartbeat behind the registry. The
// leader writes its own firings into it as they happen (fired), so it
// reads back only what others changed: without that, a leader firing
// 1,000 triggers a second would read 1,000 schedules a second back.
//
// Entries are kept by declaration index (Scheduler.own), in a slice, and
// in a compact form: this memory is per schedule, on every instance.
type mirror struct {
	mu      sync.Mutex
	entries []mirrored // by declaration index
	seen    time.Time  // the latest change read
	at      time.Time  // when it was last brought up to date
}

// mirrored is what the mirror keeps of a schedule: what the registry
// holds beyond the instance's own declaration, which it has in memory
// anyway, with times in unix ms (0: none). It is put back with that
// declaration (seeds).
type mirrored struct {
	known                        bool // read from the registry at least once
	complete                     bool
	created, defChanged, retired int64
	next, prev, start, saved     int64
	timesTriggered, repeatCount  int64
	outcome                      string
	retiredBy                    string
	pause                        *schedstore.PauseInfo
	jobPauses                    map[string]schedstore.PauseInfo
	// asOf is the changed-index score (schedstore.Change.At) of the latest
	// change this entry is known to hold; a change scored above it is read.
	asOf int64
}

func mirror1(sc schedstore.Schedule, asOf int64) mirrored {
	st := sc.State
	return mirrored{
		known: true, complete: st.Complete,
		created: msOf(sc.Created), defChanged: msOf(sc.DefChanged), retired: msOf(sc.Retired),
		next: msOf(st.Next), prev: msOf(st.Prev), start: msOf(st.Start), saved: msOf(st.Saved),
		timesTriggered: st.TimesTriggered, repeatCount: st.RepeatCount,
		outcome: internOutcome(st.LastOutcome), retiredBy: sc.RetiredBy,
		pause: st.Pause, jobPauses: st.JobPauses, asOf: asOf,
	}
}

// schedule is the registry entry m describes, for declaration d.
func (m *mirrored) schedule(d schedstore.Definition, hash defHash, self schedstore.Declarer) schedstore.Schedule {
	return schedstore.Schedule{Definition: d, DefHash: hash.String(), DeclaredBy: self,
		Created: msTime(m.created), DefChanged: msTime(m.defChanged), Retired: msTime(m.retired), RetiredBy: m.retiredBy,
		State: schedstore.State{
			TriggerState: schedstore.TriggerState{Next: msTime(m.next), Prev: msTime(m.prev), Start: msTime(m.start),
				TimesTriggered: m.timesTriggered, RepeatCount: m.repeatCount, Complete: m.complete},
			LastOutcome: m.outcome, Saved: msTime(m.saved), Pause: m.pause, JobPauses: m.jobPauses,
		}}
}

// fill reads every declared schedule (own), at Start.
func (m *mirror) fill(ctx context.Context, store *schedstore.Store, own []decl, now time.Time) error {
	ids := make([]string, len(own))
	byID := make(map[string]*decl, len(own))
	for i := range own {
		ids[i] = own[i].id
		byID[ids[i]] = &own[i]
	}
	scores, err := store.ChangeScores(ctx, ids)
	if err != nil {
		return err
	}
	got, err := store.GetStates(ctx, ids, func(id string) []string {
		if d := byID[id]; d != nil {
			return d.jobNames()
		}
		return nil
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = make([]mirrored, len(own))
	for i, id := range ids {
		if sc, ok := got[id]; ok {
			m.entries[i] = mirror1(sc, scores[id])
		}
	}
	m.seen, m.at = now.Add(-mirrorSkew), now
	return nil
}

// anchor compiles the declarations again for the registry's created
// (decl.anchor), as fill read it.
func (m *mirror) anchor(own []decl) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.entries {
		if e := &m.entries[i]; e.known && i < len(own) {
			own[i].anchor(e.created)
		}
	}
}

// update reads the declared schedules (index: declaration index by ID, in
// own) that changed since the last look and that the mirror does not
// hold already: their state, not their definitions (GetStates).
func (m *mirror) update(ctx context.Context, store *schedstore.Store, own []decl, index func(id string) (int, bool), now time.Time) error {
	m.mu.Lock()
	since := m.seen.Add(-mirrorSkew)
	m.mu.Unlock()
	changes, last, err := store.ChangedSince(ctx, since)
	if err != nil {
		return err
	}
	m.mu.Lock()
	ids := make([]string, 0, len(changes))
	asOf := make(map[string]int64, len(changes))
	for _, c := range changes {
		i, ok := index(c.ID)
		if !ok || i >= len(m.entries) || (m.entries[i].known && m.entries[i].asOf >= c.At) {
			continue
		}
		ids = append(ids, c.ID)
		asOf[c.ID] = c.At
	}
	m.mu.Unlock()
	got, err := store.GetStates(ctx, ids, func(id string) []string {
		if i, ok := index(id); ok {
			return own[i].jobNames()
		}
		return nil
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, sc := range got {
		i, _ := index(id)
		e := &m.entries[i]
		if e.known && e.asOf > asOf[id] {
			continue // a firing recorded meanwhile is newer
		}
		*e = mirror1(sc, asOf[id])
	}
	m.seen, m.at = last, now
	return nil
}

// fired records a firing this instance made of declaration i, as the fire
// script stored it: the trigger state st, with outcome, saved at now;
// before is the schedule's changed-index score the script found. If the
// mirror held every change up to before, it now holds this one too;
// otherwise the change it missed is still read at the next update.
func (m *mirror) fired(i int, st schedstore.TriggerState, outcome string, now time.Time, before int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i >= len(m.entries) || !m.entries[i].known {
		return
	}
	e := &m.entries[i]
	e.next, e.prev, e.start = msOf(st.Next), msOf(st.Prev), msOf(st.Start)
	e.timesTriggered, e.repeatCount, e.complete = st.TimesTriggered, st.RepeatCount, st.Complete
	e.outcome, e.saved = internOutcome(outcome), now.UnixMilli()
	if e.asOf >= before {
		e.asOf = schedstore.ChangeScore(before, now.UnixMilli())
	}
}

// seeds returns the schedules to put back, each this instance's
// declaration (defs, made from own, with own's hashes) with what the
// mirror kept of its registry entry, and when the mirror was last brought
// up to date. A schedule the mirror never saw is left to Register.
func (m *mirror) seeds(defs []schedstore.Definition, own []decl, self schedstore.Declarer) ([]schedstore.Schedule, time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]schedstore.Schedule, 0, len(m.entries))
	for i := range m.entries {
		if e := &m.entries[i]; e.known && i < len(defs) {
			out = append(out, e.schedule(defs[i], own[i].hash, self))
		}
	}
	return out, m.at
}

// msOf is t in unix ms, 0 for the zero time.
func msOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// msTime is the inverse of msOf, in UTC.
func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// internOutcome returns the outcome words the scheduler writes as one
// shared string each, so that memory per schedule holds no copy of them.
func internOutcome(o string) string {
	switch o {
	case "fired":
		return "fired"
	case "skipped:overlap":
		return "skipped:overlap"
	}
	return o
}

// defHash is a definition hash (schedstore.Definition.Hash: 24 hex
// digits) held as its 12 bytes, for memory per schedule.
type defHash [12]byte

// hashOf decodes a definition hash; a malformed one decodes to zeros.
func hashOf(h string) defHash {
	var d defHash
	if len(h) == 2*len(d) {
		if _, err := hex.Decode(d[:], []byte(h)); err != nil {
			return defHash{}
		}
	}
	return d
}

// String is the hash as stored: 24 hex digits.
func (d defHash) String() string { return hex.EncodeToString(d[:]) }
