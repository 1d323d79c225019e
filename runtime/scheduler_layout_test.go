package chronos

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// The scheduler tests run in the layout of a new namespace, 12 partitions,
// or, with CHRONOS_TEST_LAYOUT=1, in layout 1: the namespace is marked as
// one written by a version before partitions, so every key is the single
// tag's (docs/scheduler.md, "Layout 1").
func testLayoutOne() bool { return os.Getenv("CHRONOS_TEST_LAYOUT") == "1" }

// LayoutOneUnderTest reports whether the tests run in layout 1
// (CHRONOS_TEST_LAYOUT=1), for the package's external tests of what only
// partitions do.
func LayoutOneUnderTest() bool { return testLayoutOne() }

// MarkTestLayout marks namespace ns on c as one of an earlier version, with
// the leader epoch counter those versions write, when the tests run in
// layout 1 (CHRONOS_TEST_LAYOUT=1); otherwise it does nothing. Call it on
// a new namespace before anything starts in it. Exported for the package's
// external tests.
func MarkTestLayout(t testing.TB, c redis.UniversalClient, ns string) {
	t.Helper()
	if !testLayoutOne() {
		return
	}
	if err := c.SetNX(context.Background(), leader.KeysFor(ns).Epoch, 0, 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// LayoutMarksForTest returns the keys MarkTestLayout writes in namespace ns:
// none unless the tests run in layout 1. Exported for the package's
// external tests that list the keys in Redis.
func LayoutMarksForTest(ns string) []string {
	if !testLayoutOne() {
		return nil
	}
	return []string{leader.KeysFor(ns).Epoch}
}

// testLayout returns the layout of namespace ns on c, creating the
// namespace as a scheduler would if it is new.
func testLayout(t testing.TB, c redis.UniversalClient, ns string) keyspace.Layout {
	t.Helper()
	l, err := keyspace.NewResolver(c, ns, keyspace.ResolveOptions{}).Layout(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// testStore returns the registry of the default namespace on c, in its
// layout.
func testStore(t testing.TB, c redis.UniversalClient) *schedstore.Store {
	t.Helper()
	return schedstore.New(c, schedstore.Config{Layout: testLayout(t, c, "")})
}

// queueKeys returns the queue keys of every partition of the default
// namespace on c: a schedule's tasks are in its partition's.
func queueKeys(t testing.TB, c redis.UniversalClient) []rdb.Keys {
	t.Helper()
	st := testStore(t, c)
	out := make([]rdb.Keys, st.Partitions())
	for p := range out {
		out[p] = st.QueueKeys(p)
	}
	return out
}

// QueueKeysOf returns the queue keys of the partition of schedule id in
// the default namespace on c. Exported for the package's external tests.
func QueueKeysOf(t testing.TB, c redis.UniversalClient, id string) rdb.Keys {
	t.Helper()
	st := testStore(t, c)
	return st.QueueKeys(st.PartitionOf(id))
}

// leaseOf returns the election keys of the partition of schedule id in the
// default namespace on c.
func leaseOf(t testing.TB, c redis.UniversalClient, id string) leader.Keys {
	t.Helper()
	st := testStore(t, c)
	return st.Lease(st.PartitionOf(id))
}

// electorOf returns s's elector of the partition of schedule id (nil
// before Start).
func (s *Scheduler) electorOf(id string) *leader.Elector {
	if s.parts == nil {
		return nil
	}
	return s.parts.electors[s.store.PartitionOf(id)]
}

// leads reports whether s leads, and trusts its term of, the partition of
// schedule id.
func (s *Scheduler) leads(id string) bool {
	e := s.electorOf(id)
	if e == nil {
		return false
	}
	_, ok := e.Current()
	return ok
}

// leadsAll reports whether s leads every partition.
func (s *Scheduler) leadsAll() bool {
	if s.parts == nil {
		return false
	}
	for _, e := range s.parts.electors {
		if _, ok := e.Current(); !ok {
			return false
		}
	}
	return true
}

// led returns the partitions s leads.
func (s *Scheduler) led() []int {
	var out []int
	if s.parts == nil {
		return nil
	}
	for p, e := range s.parts.electors {
		if _, ok := e.Current(); ok {
			out = append(out, p)
		}
	}
	return out
}

// waitBalanced waits until every partition is led by one of ss and each
// of ss leads its share of them (all of them for the first in layout 1,
// where only one instance leads), as the assignment gives them once
// nothing changes.
func waitBalanced(t *testing.T, ss ...*Scheduler) {
	t.Helper()
	waitUntil(t, "the partitions shared out", func() bool {
		total, n := 0, 0
		for _, s := range ss {
			if s.parts == nil {
				return false
			}
			n = len(s.parts.electors)
		}
		for _, s := range ss {
			k := len(s.led())
			total += k
			if n > 1 && k != n/len(ss) && k != (n+len(ss)-1)/len(ss) {
				return false
			}
		}
		return total == n
	})
}
