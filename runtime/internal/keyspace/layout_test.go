package keyspace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/hashslot"
	"github.com/chronos-go/chronos/internal/redistest"
)

// Partition tags are placed by slot, not left to the luck of the names:
// whatever the namespace is called, each of P partitions hashes into the
// middle of its own P-th of the slots, so masters that own equal slot
// ranges hold equal shares.
func TestPartitionTagsLandEvenlyOverTheSlots(t *testing.T) {
	for _, ns := range []string{"chronos", "a", "billing:eu", "x-y_z"} {
		for _, n := range []int{1, 2, 3, 12, 16, 100, MaxPartitions} {
			l, err := Partitioned(ns, n)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for p, prefix := range l.Prefixes() {
				lo, hi := p*hashslot.Count/n, (p+1)*hashslot.Count/n
				if s := hashslot.Of(prefix + "x"); s < lo || s >= hi {
					t.Fatalf("%s/%d: partition %d (%s) in slot %d, outside [%d, %d)", ns, n, p, prefix, s, lo, hi)
				}
				if !strings.HasPrefix(prefix, "{"+ns+":p") || seen[prefix] {
					t.Fatalf("%s/%d: partition %d prefix %q", ns, n, p, prefix)
				}
				seen[prefix] = true
			}
		}
	}
	// Three masters with the slots split as redis-cli --cluster create
	// splits them: four partitions each.
	l, _ := Partitioned("chronos", DefaultPartitions)
	per := map[int]int{}
	for _, prefix := range l.Prefixes() {
		per[hashslot.Of(prefix)*3/hashslot.Count]++
	}
	if per[0] != 4 || per[1] != 4 || per[2] != 4 {
		t.Fatalf("partitions per master of three: %v, want 4 each", per)
	}
}

// The slot function is Redis Cluster's own: checked against CLUSTER
// KEYSLOT of a real node, for the partition prefixes among other keys.
func TestHashSlotsAreRedisClustersOwn(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 1})
	ctx := context.Background()
	l, _ := Partitioned("chronos", 16)
	keys := append([]string{"foo", "{user1000}.following", "{}x", "{a}{b}", "{chronos}:q:default"}, l.Prefixes()...)
	cc := c.Client()
	for _, k := range keys {
		want, err := cc.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := hashslot.Of(k); int64(got) != want {
			t.Errorf("slot of %q = %d, CLUSTER KEYSLOT says %d", k, got, want)
		}
	}
}

// Layout 1 is the single tag of earlier versions: one partition, whose
// prefix is the control prefix.
func TestLayoutOneIsTheSingleTag(t *testing.T) {
	l := Single("")
	if l.Partitions() != 1 || l.Partition(0) != "{chronos}:" || l.Control() != "{chronos}:" || l.Version() != 1 {
		t.Fatalf("Single: %d partitions, %q, %q, v%d", l.Partitions(), l.Partition(0), l.Control(), l.Version())
	}
	if l.ForSchedule("anything") != 0 || l.ForDedup("a:1") != 0 {
		t.Fatal("layout 1 has one partition")
	}
}

// A trigger's dedup key "<schedule>:<unix>" lands in its schedule's
// partition; other keys spread.
func TestADedupKeyLandsWithTheTextBeforeItsLastColon(t *testing.T) {
	l, _ := Partitioned("chronos", DefaultPartitions)
	hit := map[int]bool{}
	for i := range 200 {
		id := fmt.Sprintf("reports.daily-%d", i)
		if got, want := l.ForDedup(id+":1764547200"), l.ForSchedule(id); got != want {
			t.Fatalf("dedup key of %s in partition %d, schedule in %d", id, got, want)
		}
		if l.ForDedup("order:42:"+id) != l.ForDedup("order:42:other") {
			t.Fatal("keys with the same text before the last colon must share a partition")
		}
		hit[l.ForSchedule(id)] = true
	}
	if len(hit) != DefaultPartitions {
		t.Fatalf("200 schedules hit %d of %d partitions", len(hit), DefaultPartitions)
	}
	if _, err := Partitioned("chronos", 0); !errors.Is(err, ErrBadPartitions) {
		t.Fatalf("0 partitions: %v", err)
	}
}

// The first process to touch a new namespace records its layout; every
// other agrees with it, even when they race; a different configured count
// is an error, not a second layout. A namespace written by an earlier
// version (no meta key, but its keys) is layout 1, and nothing is written.
func TestANamespaceHasOneLayoutThatEveryProcessAgreesOn(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()

	var wg sync.WaitGroup
	got := make([]Layout, 8)
	errs := make([]error, 8)
	for i := range got {
		wg.Go(func() {
			got[i], errs[i] = NewResolver(c, "fresh", ResolveOptions{Partitions: 6 + i%2*6}).Layout(ctx)
		})
	}
	wg.Wait()
	var n int
	for i := range got {
		if errs[i] == nil {
			if n == 0 {
				n = got[i].Partitions()
			} else if got[i].Partitions() != n {
				t.Fatalf("two layouts: %d and %d partitions", n, got[i].Partitions())
			}
		} else if !errors.Is(errs[i], ErrLayoutMismatch) {
			t.Fatalf("resolver %d: %v", i, errs[i])
		}
	}
	if m, _ := c.HGetAll(ctx, Meta("fresh")).Result(); m["layout"] != "2" || m["partitions"] != fmt.Sprint(n) {
		t.Fatalf("meta = %v, want layout 2 with %d partitions", m, n)
	}
	if l, err := NewResolver(c, "fresh", ResolveOptions{}).Layout(ctx); err != nil || l.Partitions() != n {
		t.Fatalf("unconfigured: %v, %v", l, err)
	}

	// Earlier versions' keys, no meta: layout 1, nothing written.
	if err := c.SAdd(ctx, "{old}:paused", "reports").Err(); err != nil {
		t.Fatal(err)
	}
	if l, err := NewResolver(c, "old", ResolveOptions{Partitions: 12}).Layout(ctx); err != nil || !l.IsSingle() {
		t.Fatalf("old namespace: %v, %v", l, err)
	}
	if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "{queues}:q:mail", Values: []string{"m", "x"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if l, _ := NewResolver(c, "queues", ResolveOptions{Markers: []string{"{queues}:q:mail"}}).Layout(ctx); !l.IsSingle() {
		t.Fatalf("a namespace with a queue stream of layout 1: %v", l)
	}
	if n, _ := c.Exists(ctx, Meta("old"), Meta("queues")).Result(); n != 0 {
		t.Fatal("a layout-1 namespace got a meta key")
	}

	// Read-only (the Inspector): a new namespace is not created.
	r := NewResolver(c, "peek", ResolveOptions{ReadOnly: true})
	if l, err := r.Layout(ctx); err != nil || l.Partitions() != DefaultPartitions {
		t.Fatalf("read-only: %v, %v", l, err)
	}
	if n, _ := c.Exists(ctx, Meta("peek")).Result(); n != 0 {
		t.Fatal("a read-only resolver created the namespace")
	}
	if _, ok := r.Cached(); ok {
		t.Fatal("a read-only resolver cached a layout nobody stored")
	}
}

// A namespace that holds no key while processes of layout 1 run in it
// (Redis lost its data under them: they are still subscribed to its
// layout-1 channels, which FLUSHALL leaves) is layout 1 to a process that
// would create it: the resolver writes the layout-1 mark, not a meta key,
// and every later resolver agrees, subscribers or not. On a cluster the
// subscriptions are on the master of the control tag's slot, where the
// script that counts them runs. A layout-1 process re-marks its namespace
// with MarkLayoutOne, which refuses one that has a meta key.
func TestAnEmptyNamespaceWithLayoutOneProcessesSubscribedIsLayoutOne(t *testing.T) {
	redistest.Parallel(t)
	for _, tc := range []struct {
		name  string
		redis func(t *testing.T) redis.UniversalClient
	}{
		{"server", func(t *testing.T) redis.UniversalClient { return redistest.Start(t).Client() }},
		{"cluster of three masters", func(t *testing.T) redis.UniversalClient {
			return redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3}).Client()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			redistest.Parallel(t)
			c := tc.redis(t)
			ctx := context.Background()
			for i := range ControlChannels("") {
				ns := fmt.Sprintf("lost%d", i)
				ps := c.Subscribe(ctx, ControlChannels(ns)[i])
				if _, err := ps.Receive(ctx); err != nil {
					t.Fatal(err)
				}
				if l, err := NewResolver(c, ns, ResolveOptions{ReadOnly: true}).Layout(ctx); err != nil || l.IsSingle() {
					t.Fatalf("%s, read-only: %v, %v; want what a new namespace would get", ns, l, err)
				}
				if n, _ := c.Exists(ctx, epochMark(ns)).Result(); n != 0 {
					t.Fatalf("%s: a read-only resolver wrote the layout-1 mark", ns)
				}
				if l, err := NewResolver(c, ns, ResolveOptions{Partitions: 12}).Layout(ctx); err != nil || !l.IsSingle() {
					t.Fatalf("%s, subscribed to %s: %v, %v; want layout 1", ns, ControlChannels(ns)[i], l, err)
				}
				if v, err := c.Get(ctx, epochMark(ns)).Result(); err != nil || v != "0" {
					t.Fatalf("%s: layout-1 mark %q, %v; want 0", ns, v, err)
				}
				_ = ps.Close()
				if l, err := NewResolver(c, ns, ResolveOptions{}).Layout(ctx); err != nil || !l.IsSingle() {
					t.Fatalf("%s, unsubscribed: %v, %v; want layout 1 (its mark)", ns, l, err)
				}
				if n, _ := c.Exists(ctx, Meta(ns)).Result(); n != 0 {
					t.Fatalf("%s got a meta key", ns)
				}
			}
			// Nobody subscribed: a new namespace.
			if l, err := NewResolver(c, "new", ResolveOptions{}).Layout(ctx); err != nil || l.IsSingle() {
				t.Fatalf("new namespace: %v, %v", l, err)
			}

			if err := MarkLayoutOne(ctx, c, "gone"); err != nil {
				t.Fatal(err)
			}
			if l, err := NewResolver(c, "gone", ResolveOptions{}).Layout(ctx); err != nil || !l.IsSingle() {
				t.Fatalf("after MarkLayoutOne: %v, %v; want layout 1", l, err)
			}
			if err := MarkLayoutOne(ctx, c, "new"); !errors.Is(err, ErrLayoutChanged) {
				t.Fatalf("MarkLayoutOne of a partitioned namespace: %v; want ErrLayoutChanged", err)
			}
			if n, _ := c.Exists(ctx, epochMark("new")).Result(); n != 0 {
				t.Fatal("MarkLayoutOne marked a partitioned namespace")
			}
		})
	}
}
