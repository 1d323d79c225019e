package chronos

import (
	"context"
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
type mirror struct {
	mu   sync.Mutex
	byID map[string]mirrored
	seen time.Time // the latest change read
	at   time.Time // when it was last brought up to date
}

// mirrored is what the mirror keeps of a schedule: what the registry
// holds beyond the instance's own declaration, which it has in memory
// anyway. It is put back with that declaration (seed).
type mirrored struct {
	created, defChanged time.Time
	state               schedstore.State
	retired             time.Time
	retiredBy           string
	// asOf is the changed-index score (schedstore.Change.At) of the latest
	// change this entry is known to hold; a change scored above it is read.
	asOf int64
}

func mirror1(sc schedstore.Schedule, asOf int64) mirrored {
	return mirrored{created: sc.Created, defChanged: sc.DefChanged, state: sc.State, retired: sc.Retired,
		retiredBy: sc.RetiredBy, asOf: asOf}
}

// fill reads every declared schedule, at Start.
func (m *mirror) fill(ctx context.Context, store *schedstore.Store, ids []string, now time.Time) error {
	scores, err := store.ChangeScores(ctx, ids)
	if err != nil {
		return err
	}
	got, err := store.GetMany(ctx, ids)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.byID = make(map[string]mirrored, len(got))
	for id, sc := range got {
		m.byID[id] = mirror1(sc, scores[id])
	}
	m.seen, m.at = now.Add(-mirrorSkew), now
	return nil
}

// update reads the declared schedules that changed since the last look
// and that the mirror does not hold already.
func (m *mirror) update(ctx context.Context, store *schedstore.Store, declared map[string]*schedstore.Definition, now time.Time) error {
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
		if declared[c.ID] == nil {
			continue
		}
		if mr, ok := m.byID[c.ID]; ok && mr.asOf >= c.At {
			continue
		}
		ids = append(ids, c.ID)
		asOf[c.ID] = c.At
	}
	m.mu.Unlock()
	got, err := store.GetMany(ctx, ids)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID == nil {
		m.byID = map[string]mirrored{}
	}
	for id, sc := range got {
		if mr, ok := m.byID[id]; ok && mr.asOf > asOf[id] {
			continue // a firing recorded meanwhile is newer
		}
		m.byID[id] = mirror1(sc, asOf[id])
	}
	m.seen, m.at = last, now
	return nil
}

// fired records a firing this instance made, as the fire script stored it:
// the trigger state st, with outcome, saved at now; before is the
// schedule's changed-index score the script found. If the mirror held
// every change up to before, it now holds this one too; otherwise the
// change it missed is still read at the next update.
func (m *mirror) fired(id string, st schedstore.TriggerState, outcome string, now time.Time, before int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mr, ok := m.byID[id]
	if !ok {
		return
	}
	mr.state.TriggerState, mr.state.LastOutcome, mr.state.Saved = st, outcome, time.UnixMilli(now.UnixMilli())
	if mr.asOf >= before {
		mr.asOf = schedstore.ChangeScore(before, now.UnixMilli())
	}
	m.byID[id] = mr
}

// seeds returns the schedules to put back, each this instance's
// declaration with what the mirror kept of its registry entry, and when
// the mirror was last brought up to date. A schedule the mirror never saw
// is left to Register.
func (m *mirror) seeds(declared []schedstore.Definition, self schedstore.Declarer) ([]schedstore.Schedule, time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]schedstore.Schedule, 0, len(m.byID))
	for _, d := range declared {
		mr, ok := m.byID[d.ID]
		if !ok {
			continue
		}
		out = append(out, schedstore.Schedule{Definition: d, DefHash: d.Hash(), DeclaredBy: self, Created: mr.created,
			DefChanged: mr.defChanged, State: mr.state, Retired: mr.retired, RetiredBy: mr.retiredBy})
	}
	return out, m.at
}
