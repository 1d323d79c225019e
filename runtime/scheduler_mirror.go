package chronos

import (
	"context"
	"maps"
	"slices"
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
// schedules), so it is at most a heartbeat behind the registry.
type mirror struct {
	mu   sync.Mutex
	byID map[string]schedstore.Schedule
	seen time.Time // the latest change read
	at   time.Time // when it was last brought up to date
}

// fill reads every declared schedule, at Start.
func (m *mirror) fill(ctx context.Context, store *schedstore.Store, ids []string, now time.Time) error {
	got, err := store.GetMany(ctx, ids)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.byID, m.seen, m.at = got, now.Add(-mirrorSkew), now
	return nil
}

// update reads the declared schedules that changed since the last look.
func (m *mirror) update(ctx context.Context, store *schedstore.Store, declared map[string]*schedstore.Definition, now time.Time) error {
	m.mu.Lock()
	since := m.seen.Add(-mirrorSkew)
	m.mu.Unlock()
	ids, last, err := store.ChangedSince(ctx, since)
	if err != nil {
		return err
	}
	ids = slices.DeleteFunc(ids, func(id string) bool { return declared[id] == nil })
	got, err := store.GetMany(ctx, ids)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID == nil {
		m.byID = map[string]schedstore.Schedule{}
	}
	maps.Copy(m.byID, got)
	m.seen, m.at = last, now
	return nil
}

// snapshot returns what the mirror holds and when it was brought up to
// date.
func (m *mirror) snapshot() ([]schedstore.Schedule, time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Collect(maps.Values(m.byID)), m.at
}
