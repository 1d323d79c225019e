package schedstore

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
)

// testLayout is the layout the package's tests run in: the default of a
// new namespace, 12 partitions, or layout 1 (the single tag of earlier
// versions) with CHRONOS_TEST_LAYOUT=1.
func testLayout() keyspace.Layout {
	if os.Getenv("CHRONOS_TEST_LAYOUT") == "1" {
		return keyspace.Single("")
	}
	l, _ := keyspace.Partitioned("", keyspace.DefaultPartitions)
	return l
}

// In layout 1 every key the scheduler's storage packages name, and every
// key of the fire script, is exactly what versions before partitions
// wrote: spelled out here, not built, so that a change of the names
// fails. A rolling deploy from such a version shares them
// (docs/scheduler.md, "Layout 1").
func TestLayoutOneKeysAreTheEarlierKeys(t *testing.T) {
	st := New(nil, Config{Layout: keyspace.Single("orders")})
	k := st.keys
	pk := k.of("daily")
	got := map[string]string{
		"sched":              k.sched("daily"),
		"history":            k.history("daily"),
		"schedules":          pk.schedules,
		"version":            pk.version,
		"changed":            pk.changed,
		"requests":           pk.requests,
		"request-data":       pk.reqData,
		"instances":          k.instances(),
		"instance":           k.instance("i1"),
		"decl":               k.decl("i1"),
		"sweep":              k.sweep(),
		"isolated-instances": k.legacyIsolated(),
		"lease":              pk.lease.Lock,
		"epoch":              pk.lease.Epoch,
		"resign":             pk.lease.Resign,
		"legacy stream":      k.legacyQueue().Stream(legacyIsolatedQueue("i1")),
	}
	want := map[string]string{
		"sched":              "{orders}:sched:daily",
		"history":            "{orders}:history:daily",
		"schedules":          "{orders}:schedules",
		"version":            "{orders}:schedules:version",
		"changed":            "{orders}:changed",
		"requests":           "{orders}:requests",
		"request-data":       "{orders}:request-data",
		"instances":          "{orders}:instances",
		"instance":           "{orders}:instance:i1",
		"decl":               "{orders}:decl:i1",
		"sweep":              "{orders}:sweep",
		"isolated-instances": "{orders}:isolated-instances",
		"lease":              "{orders}:leader",
		"epoch":              "{orders}:leader:epoch",
		"resign":             "{orders}:leader:resign",
		"legacy stream":      "{orders}:q:isolated:i1",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %q, want %q", name, got[name], w)
		}
	}
	if lk := leader.KeysFor("orders"); lk != pk.lease {
		t.Errorf("leader.KeysFor = %+v, the store fences with %+v", lk, pk.lease)
	}

	// The fire script's keys, in order: lease, schedule, trigger dedup
	// claim, history, changed index, then per job stream, delayed set,
	// dedup claim, overlap active set, buffer, where.
	f := &Firing{Schedule: "daily", Dedup: "daily:1764547200", Jobs: []FireJob{{Name: "main", Queue: "reports", Overlap: "daily:main"}}}
	keys, _ := st.fireCall(leader.Term{Token: "1:i:n"}, f, time.Unix(0, 0), &FireOptions{})
	wantKeys := []string{
		"{orders}:leader", "{orders}:sched:daily", "{orders}:dedup:daily:1764547200", "{orders}:history:daily", "{orders}:changed",
		"{orders}:q:reports", "{orders}:delayed:reports", "{orders}:dedup:daily:1764547200",
		"{orders}:overlap:daily:main", "{orders}:overlap-buffer:daily:main", "{orders}:overlap-where:daily:main",
	}
	if !slices.Equal(keys, wantKeys) {
		t.Errorf("fire script keys:\n got %q\nwant %q", keys, wantKeys)
	}

	// keyspace detects layout 1 by these markers, which must be names of
	// layout 1.
	for _, m := range keyspace.ControlMarkers("orders")[:3] {
		if !slices.Contains([]string{want["schedules"], want["instances"], want["epoch"]}, m) {
			t.Errorf("keyspace marker %q is none of the scheduler's layout-1 keys", m)
		}
	}
}

// In a partitioned namespace, what spans partitions carries the control
// tag and everything of a schedule carries its partition's tag: every key
// of a script is in one slot (the fire script's, the partition's lease
// and queue keys included).
func TestPartitionedKeysShareTheirSchedulesSlot(t *testing.T) {
	l, _ := keyspace.Partitioned("orders", 12)
	st := New(nil, Config{Layout: l})
	k := st.keys
	for _, c := range []string{k.instances(), k.instance("i1"), k.decl("i1"), k.sweep(), k.legacyIsolated()} {
		if !hasPrefix(c, l.Control()) {
			t.Errorf("%s is not a control key", c)
		}
	}
	seen := map[int]bool{}
	for _, id := range []string{"a", "b", "reports.daily", "x@cron:0 0 * * *"} {
		p := st.PartitionOf(id)
		seen[p] = true
		f := &Firing{Schedule: id, Dedup: id + ":1", Jobs: []FireJob{{Name: "main", Queue: "q", Overlap: id + ":main"}}}
		keys, _ := st.fireCall(leader.Term{Token: "1:i:n"}, f, time.Unix(0, 0), &FireOptions{})
		pk := k.of(id)
		for _, key := range append(keys, pk.schedules, pk.version, pk.requests, pk.reqData, pk.lease.Epoch, pk.lease.Since) {
			if !hasPrefix(key, l.Partition(p)) {
				t.Errorf("schedule %s in partition %d: key %s outside the partition's tag %s", id, p, key, l.Partition(p))
			}
		}
	}
	if len(seen) < 2 {
		t.Fatalf("schedules all in one partition: %v", seen)
	}
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }
