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
	// rare holds, by declaration index, what few schedules have: those
	// fields of an entry that are not all empty.
	rare map[int]*mirroredRare
	seen time.Time // the later of the latest change read and the last look
	at   time.Time // when it was last brought up to date
}

// mirrored is what the mirror keeps of a schedule: what the registry
// holds beyond the instance's own declaration, which it has in memory
// anyway, with times in unix ms (0: none). It is put back with that
// declaration (seeds). What few schedules have is in mirror.rare. 72
// bytes.
type mirrored struct {
	created, next, prev, start, saved int64
	timesTriggered, repeatCount       int64
	// asOf is the changed-index score (schedstore.Change.At) of the latest
	// change this entry is known to hold; a change scored above it is read.
	asOf     int64
	known    bool // read from the registry at least once
	complete bool
	outcome  outcome
	// changedAtCreation reports a definition that did not change since
	// the schedule was created (def_changed = created, as the registry
	// writes it when it creates one); otherwise def_changed is in rare.
	changedAtCreation bool
}

// mirroredRare is what the mirror keeps of a schedule that few have: a
// definition change, a retirement, pauses, an outcome word other than the
// common ones.
type mirroredRare struct {
	defChanged, retired int64
	retiredBy           string
	outcome             string // when mirrored.outcome is outcomeOther
	pause               *schedstore.PauseInfo
	jobPauses           map[string]schedstore.PauseInfo
}

// outcome is a LastOutcome word: one of those the scheduler writes at
// every firing, or another kept in mirroredRare.
type outcome uint8

const (
	outcomeNone outcome = iota
	outcomeFired
	outcomeSkipped
	outcomeOther
)

// outcomeOf returns the code of outcome word o.
func outcomeOf(o string) outcome {
	switch o {
	case "":
		return outcomeNone
	case "fired":
		return outcomeFired
	case "skipped:overlap":
		return outcomeSkipped
	}
	return outcomeOther
}

// set puts the entry of declaration i, as read from the registry (sc, as
// of change asOf).
func (m *mirror) set(i int, sc *schedstore.Schedule, asOf int64) {
	st := sc.State
	e := mirrored{
		known: true, complete: st.Complete, created: msOf(sc.Created),
		next: msOf(st.Next), prev: msOf(st.Prev), start: msOf(st.Start), saved: msOf(st.Saved),
		timesTriggered: st.TimesTriggered, repeatCount: st.RepeatCount,
		outcome: outcomeOf(st.LastOutcome), asOf: asOf,
	}
	r := mirroredRare{retired: msOf(sc.Retired), retiredBy: sc.RetiredBy, pause: st.Pause, jobPauses: st.JobPauses}
	if e.outcome == outcomeOther {
		r.outcome = st.LastOutcome
	}
	if changed := msOf(sc.DefChanged); changed == e.created {
		e.changedAtCreation = true
	} else {
		r.defChanged = changed
	}
	m.entries[i] = e
	m.setRare(i, r)
}

// setRare keeps r for declaration i, or nothing when it is empty.
func (m *mirror) setRare(i int, r mirroredRare) {
	if r.defChanged == 0 && r.retired == 0 && r.retiredBy == "" && r.outcome == "" && r.pause == nil && r.jobPauses == nil {
		delete(m.rare, i)
		return
	}
	if m.rare == nil {
		m.rare = map[int]*mirroredRare{}
	}
	m.rare[i] = &r
}

// schedule is the registry entry the mirror holds of declaration i, whose
// definition is d. m.mu is held.
func (m *mirror) schedule(i int, d schedstore.Definition, hash defHash, self schedstore.Declarer) schedstore.Schedule {
	e := &m.entries[i]
	r := m.rare[i]
	if r == nil {
		r = &mirroredRare{}
	}
	lastOutcome := r.outcome
	switch e.outcome {
	case outcomeFired:
		lastOutcome = "fired"
	case outcomeSkipped:
		lastOutcome = "skipped:overlap"
	}
	defChanged := r.defChanged
	if e.changedAtCreation {
		defChanged = e.created
	}
	return schedstore.Schedule{Definition: d, DefHash: hash.String(), DeclaredBy: self,
		Created: msTime(e.created), DefChanged: msTime(defChanged), Retired: msTime(r.retired), RetiredBy: r.retiredBy,
		State: schedstore.State{
			TriggerState: schedstore.TriggerState{Next: msTime(e.next), Prev: msTime(e.prev), Start: msTime(e.start),
				TimesTriggered: e.timesTriggered, RepeatCount: e.repeatCount, Complete: e.complete},
			LastOutcome: lastOutcome, Saved: msTime(e.saved), Pause: r.pause, JobPauses: r.jobPauses,
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
	m.entries, m.rare = make([]mirrored, len(own)), nil
	for i, id := range ids {
		if sc, ok := got[id]; ok {
			m.set(i, &sc, scores[id])
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
		if e := &m.entries[i]; e.known && e.asOf > asOf[id] {
			continue // a firing recorded meanwhile is newer
		}
		m.set(i, &sc, asOf[id])
	}
	// The next look starts skew before the later of the latest change and
	// this look: from the latest change alone, after every schedule changed
	// at once (a million claimed as instances start) and nothing since,
	// each heartbeat read all of them again.
	m.seen, m.at = last, now
	if now.After(last) {
		m.seen = now
	}
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
	e.outcome, e.saved = outcomeOf(outcome), now.UnixMilli()
	if r := m.rare[i]; e.outcome == outcomeOther || (r != nil && r.outcome != "") {
		var rr mirroredRare
		if r != nil {
			rr = *r
		}
		rr.outcome = ""
		if e.outcome == outcomeOther {
			rr.outcome = outcome
		}
		m.setRare(i, rr)
	}
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
			out = append(out, m.schedule(i, defs[i], own[i].hash, self))
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
