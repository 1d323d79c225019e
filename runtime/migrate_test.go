package chronos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// This file tests chronos migrate (Inspector.Migrate): a namespace of the
// single-tag layout 1 is filled by this version forced into layout 1 (its
// epoch counter set first, as earlier versions leave it), migrated, and
// every item checked in the partition the layout says.

// oldEpoch is the epoch counter the layout-1 namespaces of these tests
// start from.
const oldEpoch = 41

// markLayoutOne makes namespace ns one of a version before partitions.
func markLayoutOne(t testing.TB, c redis.UniversalClient, ns string) {
	t.Helper()
	if err := c.Set(context.Background(), leader.KeysFor(ns).Epoch, oldEpoch, 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// layoutOneFixture is what fillLayoutOne put in a namespace.
type layoutOneFixture struct {
	ns        string
	schedules []string
	request   string // a pending request of schedule "yearly"
}

// fillLayoutOne fills namespace ns of c, in layout 1, with what earlier
// versions leave: schedules with trigger state, pauses (of a schedule and
// of a group's job), history and dedup keys; a pending operator request;
// an overlap marker with a queued run and a buffered firing (its schedule
// ID holds a colon); ready tasks, one with a user dedup key; a task pending
// with a consumer that crashed; delayed tasks; a dead letter; run records;
// a paused queue. Nothing is live when it returns, except the crashed
// consumer, for liveWithin.
func fillLayoutOne(t *testing.T, c redis.UniversalClient, ns string) layoutOneFixture {
	t.Helper()
	ctx := context.Background()
	markLayoutOne(t, c, ns)
	f := layoutOneFixture{ns: ns, schedules: []string{"every-second", "reports:daily", "nightly", "yearly"}}
	s := NewScheduler(c, SchedulerConfig{Namespace: ns, InstanceID: "old-1", Version: "v1.0.0", LeaderTTL: time.Second,
		FireAhead: -1, Logger: quietTestLogger()})
	_ = RegisterInterval(s, time.Second, tick{N: 1}, WithScheduleID("every-second"))
	_ = RegisterCron(s, "* * * * * ?", tick{N: 2}, WithScheduleID("reports:daily"), WithOverlap(OverlapBufferOne), WithQueue("slow"))
	g := NewGroup(s, "nightly", CronTrigger("* * * * * ?"))
	_ = AddJob(g, "a", tick{N: 3})
	if err := AddJob(g, "b", tick{N: 4}, WithQueue("b")); err != nil {
		t.Fatal(err)
	}
	_ = RegisterCron(s, "0 0 0 1 1 ?", tick{N: 5}, WithScheduleID("yearly"))
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !s.store.Layout().IsSingle() {
		t.Fatalf("the fixture's scheduler took namespace %q for %v", ns, s.store.Layout())
	}
	insp := NewInspector(c, WithNamespace(ns))
	waitUntil(t, "a firing buffered behind a queued run", func() bool {
		h, _ := insp.ScheduleHistory(ctx, "reports:daily", 0)
		return len(h) >= 3
	})
	if err := insp.PauseSchedule(ctx, "yearly", PauseOptions{Note: "until the migration", Who: "ops"}); err != nil {
		t.Fatal(err)
	}
	if err := insp.PauseSchedule(ctx, "nightly", PauseOptions{Job: "b", Who: "ops"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.request, err = insp.TriggerSchedule(ctx, "yearly", "ops"); err != nil { // no leader: it stays pending
		t.Fatal(err)
	}

	cl := NewClient(c, WithNamespace(ns))
	for _, e := range []struct {
		args TaskArgs
		opts []EnqueueOption
	}{
		{tick{N: 10}, nil},
		{tick{N: 11}, []EnqueueOption{WithDedupKey("email:42", time.Hour)}},
		{tick{N: 12}, []EnqueueOption{WithProcessIn(time.Hour)}},
		{tick{N: 13}, []EnqueueOption{WithProcessIn(2 * time.Hour), WithQueue("b")}},
		{tick{N: 14}, []EnqueueOption{WithQueue("paused-q")}},
		{tick{N: 15}, []EnqueueOption{WithQueue("crashed")}},
		{tick{N: 16}, []EnqueueOption{WithQueue("crashed")}},
	} {
		if _, err := cl.Enqueue(ctx, e.args, e.opts...); err != nil {
			t.Fatal(err)
		}
	}
	if err := insp.PauseQueue(ctx, "paused-q"); err != nil {
		t.Fatal(err)
	}
	// A server runs three tasks of queue "work", one of which dies.
	var wg sync.WaitGroup
	wg.Add(3)
	mux := NewMux()
	AddHandler(mux, func(_ context.Context, task *Task[tick]) error {
		defer wg.Done()
		if task.Args.N == 22 {
			return fmt.Errorf("%w: n is 22", ErrSkipRetry)
		}
		return nil
	})
	srv := NewServer(c, ServerConfig{Namespace: ns, Queues: map[string]int{"work": 1}, SuccessRunInterval: -1, Logger: quietTestLogger()})
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	for n := 20; n < 23; n++ {
		if _, err := cl.Enqueue(ctx, tick{N: n}, WithQueue("work")); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	waitUntil(t, "the dead letter", func() bool { n, _ := insp.CountDead(ctx); return n == 1 })
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// A server that crashed holding one task of queue "crashed".
	k := rdb.NewKeys(ns)
	if err := c.XGroupCreate(ctx, k.Stream("crashed"), rdb.Group, "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: rdb.Group, Consumer: "crashed-host:1:ab", Streams: []string{k.Stream("crashed"), ">"}, Count: 1}).Err(); err != nil {
		t.Fatal(err)
	}
	return f
}

// content is what one key holds, by type, for comparisons.
type content struct {
	Type    string
	Str     string
	TTL     bool
	Hash    map[string]string
	List    []string
	Set     []string
	ZSet    map[string]float64
	Entries map[string]map[string]any // stream: entry ID → fields
	Groups  int                       // stream: consumer groups
}

// snapshot reads every key matching pattern, on every master of a cluster.
func snapshot(t *testing.T, c redis.UniversalClient, pattern string) map[string]content {
	t.Helper()
	ctx := context.Background()
	var nodes []redis.Cmdable
	if cc, ok := c.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		_ = cc.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			nodes = append(nodes, m)
			return nil
		})
	} else {
		nodes = []redis.Cmdable{c}
	}
	out := map[string]content{}
	for _, n := range nodes {
		keys, err := scanAll(ctx, n, pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			out[k] = read(t, n, k)
		}
	}
	return out
}

func scanAll(ctx context.Context, n redis.Cmdable, pattern string) ([]string, error) {
	var out []string
	var cursor uint64
	for {
		ks, next, err := n.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return nil, err
		}
		out = append(out, ks...)
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
}

func read(t *testing.T, n redis.Cmdable, k string) content {
	t.Helper()
	ctx := context.Background()
	var c content
	c.Type = n.Type(ctx, k).Val()
	c.TTL = n.PTTL(ctx, k).Val() > 0
	switch c.Type {
	case "string":
		c.Str = n.Get(ctx, k).Val()
	case "hash":
		c.Hash = n.HGetAll(ctx, k).Val()
	case "list":
		c.List = n.LRange(ctx, k, 0, -1).Val()
	case "set":
		c.Set = n.SMembers(ctx, k).Val()
		slices.Sort(c.Set)
	case "zset":
		c.ZSet = map[string]float64{}
		for _, z := range n.ZRangeWithScores(ctx, k, 0, -1).Val() {
			c.ZSet[z.Member.(string)] = z.Score
		}
	case "stream":
		c.Entries = map[string]map[string]any{}
		for _, x := range n.XRange(ctx, k, "-", "+").Val() {
			c.Entries[x.ID] = x.Values
		}
		c.Groups = len(n.XInfoGroups(ctx, k).Val())
	}
	return c
}

// namespaceKeys reads every key of namespace ns: its control (layout-1)
// tag's and its partitions'.
func namespaceKeys(t *testing.T, c redis.UniversalClient, ns string) map[string]content {
	t.Helper()
	all := snapshot(t, c, rdb.NewKeys(ns).AllPattern())
	l, err := keyspace.Partitioned(ns, keyspace.DefaultPartitions)
	if err != nil {
		t.Fatal(err)
	}
	for p := range l.Partitions() {
		maps.Copy(all, snapshot(t, c, rdb.KeysAt(l.Partition(p)).AllPattern()))
	}
	return all
}

// partOfTestTask is the partition the documented rule files a task under.
func partOfTestTask(l keyspace.Layout, m *rdb.Message) int {
	switch {
	case m.ScheduleID != "":
		return l.ForSchedule(m.ScheduleID)
	case m.DedupKey != "":
		return l.ForDedup(m.DedupKey)
	}
	return l.ForSchedule(m.ID)
}

// checkMigrated checks that every item of the layout-1 keys before (a
// snapshot of the namespace's tag) is in the partition l says, once, with
// nothing else; after is a snapshot of the whole namespace.
func checkMigrated(t *testing.T, ns string, l keyspace.Layout, before, after map[string]content) {
	t.Helper()
	old := rdb.NewKeys(ns)
	oldReg := schedstore.RegistryKeysAt(keyspace.Prefix(ns))
	oldLease := leader.KeysFor(ns)
	parts := make([]rdb.Keys, l.Partitions())
	regs := make([]schedstore.RegistryKeys, l.Partitions())
	for p := range parts {
		parts[p], regs[p] = rdb.KeysAt(l.Partition(p)), schedstore.RegistryKeysAt(l.Partition(p))
	}
	seen := map[string]bool{} // keys of after accounted for
	expect := func(key string, want content, what string) {
		t.Helper()
		seen[key] = true
		got, ok := after[key]
		if !ok {
			t.Errorf("%s: %s missing after the migration", what, key)
			return
		}
		want.Groups, got.Groups = 0, 0
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %s holds\n%+v\nwant\n%+v", what, key, got, want)
		}
	}
	marker := content{Type: "string", Str: rdb.MigratedMarker}
	unionZ := map[string]map[string]float64{} // index name (partition 0's key) → union over partitions
	for key, c := range before {
		switch {
		case key == keyspace.Meta(ns), schedstore.IsControl(ns, key):
			expect(key, c, "control key")
		case key == oldLease.Epoch:
			for p := range parts {
				expect(leader.KeysAt(l.Partition(p)).Epoch, c, "epoch")
			}
		case key == oldLease.Lock, key == oldLease.Since:
		case key == oldReg.Version:
			for p := range parts {
				expect(regs[p].Version, c, "change counter")
			}
		case key == oldReg.Schedules, key == oldReg.Changed, key == oldReg.Requests, key == old.DeadIndex():
			for m, sc := range c.ZSet {
				var p int
				var to string
				switch key {
				case oldReg.Schedules:
					p, to = l.ForSchedule(m), regs[l.ForSchedule(m)].Schedules
				case oldReg.Changed:
					p, to = l.ForSchedule(m), regs[l.ForSchedule(m)].Changed
				case oldReg.Requests:
					var r schedstore.Request
					_ = json.Unmarshal([]byte(before[oldReg.RequestData].Hash[m]), &r)
					p, to = l.ForSchedule(r.Schedule), regs[l.ForSchedule(r.Schedule)].Requests
				default:
					msg, _ := rdb.DecodeString(before[old.Dead()].Hash[m])
					p = partOfTestTask(l, msg)
					to = parts[p].DeadIndex()
				}
				seen[to] = true
				if got, ok := after[to].ZSet[m]; !ok || got != sc {
					t.Errorf("%s of %s: %q not in partition %d's %s (score %v, want %v)", key, ns, m, p, to, got, sc)
				}
				if unionZ[key] == nil {
					unionZ[key] = map[string]float64{}
				}
				unionZ[key][m] = sc
			}
		case key == oldReg.RequestData, key == old.Dead():
			for id, v := range c.Hash {
				var to string
				if key == old.Dead() {
					msg, _ := rdb.DecodeString(v)
					to = parts[partOfTestTask(l, msg)].Dead()
				} else {
					var r schedstore.Request
					_ = json.Unmarshal([]byte(v), &r)
					to = regs[l.ForSchedule(r.Schedule)].RequestData
				}
				seen[to] = true
				if after[to].Hash[id] != v {
					t.Errorf("%s: %s not moved to %s", key, id, to)
				}
			}
		case key == old.Paused():
			for p := range parts {
				expect(parts[p].Paused(), c, "paused queues")
			}
		default:
			if id, ok := oldReg.SchedOf(key); ok {
				expect(regs[l.ForSchedule(id)].Sched(id), c, "schedule")
			} else if id, ok := oldReg.HistoryOf(key); ok {
				expect(regs[l.ForSchedule(id)].History(id), c, "history")
			} else if dk, ok := old.DedupKeyOf(key); ok {
				expect(parts[l.ForDedup(dk)].Dedup(dk), c, "dedup key")
			} else if mk, ok := old.OverlapActiveMarker(key); ok {
				expect(parts[l.ForSchedule("reports:daily")].OverlapActive(mk), c, "overlap marker")
			} else if mk, ok := old.OverlapBufferMarker(key); ok {
				expect(parts[l.ForSchedule("reports:daily")].OverlapBuffer(mk), c, "overlap buffer")
			} else if mk, ok := old.OverlapWhereMarker(key); ok {
				k := parts[l.ForSchedule("reports:daily")]
				seen[k.OverlapWhere(mk)] = true
				for id := range c.Hash {
					w := after[k.OverlapWhere(mk)].Hash[id]
					var entry, stream string
					if _, err := fmt.Sscanf(w, "s %s %s", &entry, &stream); err != nil {
						t.Errorf("overlap record of %s: %q", id, w)
						continue
					}
					x, ok := after[stream].Entries[entry]
					msg, _ := rdb.DecodeString(fmt.Sprint(x["m"]))
					if !ok || msg == nil || msg.ID != id {
						t.Errorf("overlap record of %s says %q, where it is not", id, w)
					}
				}
			} else if q, ok := old.StreamQueue(key); ok {
				expect(key, marker, "marker of a queue's stream")
				got := map[string]int{}
				for p, k := range parts {
					seen[k.Stream(q)] = true
					for _, x := range after[k.Stream(q)].Entries {
						raw := fmt.Sprint(x["m"])
						got[raw]++
						if msg, _ := rdb.DecodeString(raw); msg == nil || partOfTestTask(l, msg) != p {
							t.Errorf("queue %s: task %s in partition %d", q, raw, p)
						}
					}
				}
				want := map[string]int{}
				for _, x := range c.Entries {
					want[fmt.Sprint(x["m"])]++
				}
				if !maps.Equal(got, want) {
					t.Errorf("queue %s: tasks after the migration %v, want %v", q, got, want)
				}
			} else if q, ok := old.DelayedQueue(key); ok {
				expect(key, marker, "marker of a queue's delayed set")
				got := map[string]float64{}
				for p, k := range parts {
					seen[k.Delayed(q)] = true
					for m, sc := range after[k.Delayed(q)].ZSet {
						got[m] = sc
						if msg, _ := rdb.DecodeString(m); msg == nil || partOfTestTask(l, msg) != p {
							t.Errorf("delayed queue %s: task %s in partition %d", q, m, p)
						}
					}
				}
				if !maps.Equal(got, c.ZSet) {
					t.Errorf("delayed queue %s: %v, want %v", q, got, c.ZSet)
				}
			} else if kind, ok := old.RunsKind(key); ok {
				got := map[string]map[string]any{}
				for _, k := range parts {
					seen[k.Runs(kind)] = true
					maps.Copy(got, after[k.Runs(kind)].Entries)
				}
				if !reflect.DeepEqual(got, c.Entries) {
					t.Errorf("run records of %s: %v, want %v", kind, got, c.Entries)
				}
			} else {
				t.Errorf("the fixture holds %s, which the test does not know", key)
			}
		}
	}
	for key, c := range after {
		if seen[key] {
			continue
		}
		// What the migration adds: the meta key; the markers of queues
		// that had only a delayed set or only a stream.
		switch {
		case key == keyspace.Meta(ns):
			if c.Hash["layout"] != "2" || c.Hash["partitions"] != fmt.Sprint(l.Partitions()) {
				t.Errorf("meta key after the migration: %v", c.Hash)
			}
		case reflect.DeepEqual(c, marker):
		default:
			t.Errorf("after the migration %s holds %+v, which was not there before", key, c)
		}
	}
}

// TestMigrateMovesEverythingAndCanBeRunTwice fills a layout-1 namespace
// with every kind of item, migrates it to 12 partitions, finds each item
// in the partition the layout says and nothing else, sees the Inspector
// show the same, and runs the migration again: it moves nothing and
// changes nothing.
func TestMigrateMovesEverythingAndCanBeRunTwice(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	testMigrateMovesEverything(t, srv.Client())
}

// On a three-master cluster, where layout 1 is one slot and the
// partitions are spread over every master, so that no script can span
// the two.
func TestMigrateMovesEverythingAndCanBeRunTwiceOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-master cluster")
	}
	redistest.Parallel(t)
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3})
	testMigrateMovesEverything(t, cl.Client())
	l, _ := keyspace.Partitioned("legacy", 12)
	perMaster := map[string]int{}
	for _, m := range cl.Masters() {
		for p := range l.Partitions() {
			n, _ := scanAll(context.Background(), m.Client(), rdb.KeysAt(l.Partition(p)).AllPattern())
			perMaster[m.Addr()] += len(n)
		}
	}
	t.Logf("partition keys per master after the migration: %v", perMaster)
	for addr, n := range perMaster {
		if n == 0 {
			t.Errorf("master %s holds no partition key", addr)
		}
	}
}

func testMigrateMovesEverything(t *testing.T, c redis.UniversalClient) {
	ctx := context.Background()
	const ns = "legacy"
	fillLayoutOne(t, c, ns)
	insp := NewInspector(c, WithNamespace(ns))
	views := func() string {
		t.Helper()
		var b strings.Builder
		scs, err := insp.Schedules(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scs {
			s.Partition = 0 // the layout's
			h, _ := insp.ScheduleHistory(ctx, s.ID, 0)
			js, _ := json.Marshal(struct {
				*ScheduleInfo
				H []*FiringRecord
			}{s, h})
			b.Write(js)
		}
		reqs, _ := insp.Requests(ctx)
		dead, _ := insp.ListDead(ctx, ListOptions{})
		qs, _ := insp.Queues(ctx)
		var infos []*QueueInfo
		for _, q := range qs {
			qi, _ := insp.QueueInfo(ctx, q)
			// A task pending with a crashed server is ready once moved.
			qi.Ready, qi.Running, qi.OldestRunningSince = qi.Ready+qi.Running, 0, time.Time{}
			infos = append(infos, qi)
		}
		runs, _ := insp.ListRuns(ctx, "tick", 100)
		js, _ := json.Marshal([]any{reqs, dead, infos, runs})
		b.Write(js)
		return b.String()
	}
	viewBefore := views()
	before := snapshot(t, c, rdb.NewKeys(ns).AllPattern())

	if _, err := insp.Migrate(ctx, MigrateOptions{}); !errors.Is(err, ErrNamespaceInUse) || !strings.Contains(err.Error(), "crashed-host:1:ab") {
		t.Fatalf("migrate with a consumer that read a task now: %v, want ErrNamespaceInUse naming it", err)
	}
	dry, err := insp.Migrate(ctx, MigrateOptions{DryRun: true, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, c, rdb.NewKeys(ns).AllPattern()); !reflect.DeepEqual(after, before) {
		t.Fatal("a dry run changed the namespace")
	}
	t.Logf("dry run: %v", dry.Moved)

	start := time.Now()
	rep, err := insp.Migrate(ctx, MigrateOptions{LiveWithin: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("migrated in %v: %+v", time.Since(start), rep)
	if rep.Found != "layout 1" || rep.Partitions != 12 || len(rep.Left) != 0 {
		t.Errorf("report %+v", rep)
	}
	for _, kind := range MigrateKinds {
		if rep.Moved[kind] != dry.Moved[kind] {
			t.Errorf("%s: moved %d, the dry run said %d", kind, rep.Moved[kind], dry.Moved[kind])
		}
	}
	for _, kind := range MigrateKinds {
		if rep.Moved[kind] == 0 {
			t.Errorf("the fixture has no %s", kind)
		}
	}
	l, _ := keyspace.Partitioned(ns, 12)
	after := namespaceKeys(t, c, ns)
	checkMigrated(t, ns, l, before, after)
	if got := views(); got != viewBefore {
		t.Errorf("the Inspector shows after the migration\n%s\nbefore\n%s", got, viewBefore)
	}

	// A process of an earlier version writes a schedule into layout 1
	// after the migration: a run lists it, and moves nothing over the
	// partitioned registry.
	ghost := schedstore.RegistryKeysAt(keyspace.Prefix(ns)).Sched("ghost")
	if err := c.HSet(ctx, ghost, "id", "ghost").Err(); err != nil {
		t.Fatal(err)
	}
	after = namespaceKeys(t, c, ns)
	again, err := insp.Migrate(ctx, MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Found != "partitioned" || len(again.Moved) != 0 || len(again.Queues) != 0 || !slices.Equal(again.Left, []string{ghost}) {
		t.Errorf("second run: %+v, want nothing moved and %s left", again, ghost)
	}
	if now := namespaceKeys(t, c, ns); !reflect.DeepEqual(now, after) {
		t.Error("the second run changed the namespace")
	}
}

// dumpedKey is a key as DUMP gives it, for putting a fixture back.
type dumpedKey struct {
	key, val string
	ttl      time.Duration
}

func dumpKeys(t *testing.T, c redis.UniversalClient, keys []string) []dumpedKey {
	t.Helper()
	ctx := context.Background()
	out := make([]dumpedKey, len(keys))
	for i, k := range keys {
		v, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = dumpedKey{k, v, max(c.PTTL(ctx, k).Val(), 0)}
	}
	return out
}

// resetTo deletes every key of namespace ns and restores ds.
func resetTo(t *testing.T, c redis.UniversalClient, ns string, ds []dumpedKey) {
	t.Helper()
	ctx := context.Background()
	for k := range namespaceKeys(t, c, ns) {
		if err := c.Del(ctx, k).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range ds {
		if err := c.RestoreReplace(ctx, d.key, d.ttl, d.val).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

var errInterrupted = errors.New("interrupted by the test")

// A migration interrupted after any of its writes (between a copy into
// the partitions and the delete from layout 1, between two partitions,
// between two kinds) and run again ends as one that ran through: every
// item in its partition, none twice. While it is interrupted, no process of
// this version starts on the namespace.
func TestAnInterruptedMigrationIsFinishedByTheNextRun(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	const ns = "legacy"
	fillLayoutOne(t, c, ns)
	before := snapshot(t, c, rdb.NewKeys(ns).AllPattern())
	fixture := dumpKeys(t, c, sortedKeys(before))
	l, _ := keyspace.Partitioned(ns, 12)

	// A run through, counting its steps, with batches of two so that
	// every kind takes several round trips.
	insp := NewInspector(c, WithNamespace(ns))
	var steps []string
	if _, err := insp.migrate(ctx, MigrateOptions{LiveWithin: time.Millisecond}, migrateHooks{batch: 2, step: func(s string) error {
		steps = append(steps, s)
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	want := namespaceKeys(t, c, ns)
	t.Logf("%d steps: %v", len(steps), steps)
	refused := false
	for k := range steps {
		resetTo(t, c, ns, fixture)
		n := 0
		_, err := insp.migrate(ctx, MigrateOptions{LiveWithin: time.Millisecond}, migrateHooks{batch: 2, step: func(string) error {
			if n++; n > k {
				return errInterrupted
			}
			return nil
		}})
		if !errors.Is(err, errInterrupted) {
			t.Fatalf("interrupted after step %d: %v", k, err)
		}
		if meta, _ := keyspace.ReadMeta(ctx, c, ns); meta.Layout == keyspace.Migrating && !refused {
			refused = true
			s := NewScheduler(c, SchedulerConfig{Namespace: ns, Logger: quietTestLogger()})
			if err := s.Start(ctx); !errors.Is(err, ErrNamespaceMigrating) {
				t.Errorf("a scheduler started on a namespace being migrated: %v, want ErrNamespaceMigrating", err)
				_ = s.Shutdown(ctx)
			}
			if _, err := NewClient(c, WithNamespace(ns)).Enqueue(ctx, tick{}); !errors.Is(err, ErrNamespaceMigrating) {
				t.Errorf("a client enqueued into a namespace being migrated: %v, want ErrNamespaceMigrating", err)
			}
		}
		if _, err := insp.migrate(ctx, MigrateOptions{LiveWithin: time.Millisecond}, migrateHooks{batch: 2}); err != nil {
			t.Fatalf("the run after an interruption at step %d (%s): %v", k, steps[k], err)
		}
		got := namespaceKeys(t, c, ns)
		checkMigrated(t, ns, l, before, got)
		if !sameTasks(got, want) {
			t.Errorf("interrupted after step %d (%s, then %s): the tasks differ from a run through", k, steps[max(k-1, 0)], steps[k])
		}
		if t.Failed() {
			t.Fatalf("interrupted after step %d (%s)", k, steps[k])
		}
	}
	if !refused {
		t.Error("no interruption left the namespace migrating")
	}
}

// sameTasks reports whether a and b, two migrated namespaces, hold the
// same keys with the same content, stream entry IDs aside (they are new
// in each run).
func sameTasks(a, b map[string]content) bool {
	norm := func(m map[string]content) map[string]any {
		out := map[string]any{}
		for k, c := range m {
			if c.Type == "stream" {
				var ms []string
				for _, x := range c.Entries {
					ms = append(ms, fmt.Sprint(x))
				}
				slices.Sort(ms)
				out[k] = ms
				continue
			}
			if c.Type == "hash" {
				// Overlap records name entry IDs; the meta key its time.
				h := maps.Clone(c.Hash)
				for f, v := range h {
					if strings.HasPrefix(v, "s ") {
						h[f] = "s"
					}
				}
				delete(h, "created")
				c.Hash = h
			}
			out[k] = c
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

func sortedKeys[V any](m map[string]V) []string {
	out := slices.Collect(maps.Keys(m))
	slices.Sort(out)
	return out
}

// Migrate refuses while a scheduler instance of the namespace is live or a
// server read a task recently, naming them, and goes on once they shut
// down. A crashed instance, whose heartbeat has not expired yet, stops it
// too, until Force, which the report then lists.
func TestMigrateRefusesWhileASchedulerOrServerIsLive(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	const ns = "busy"
	markLayoutOne(t, c, ns)
	s := NewScheduler(c, SchedulerConfig{Namespace: ns, InstanceID: "sched-a", LeaderTTL: time.Second, Logger: quietTestLogger()})
	_ = RegisterInterval(s, time.Hour, tick{}, WithScheduleID("hourly"))
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(ctx)
	ran := make(chan struct{}, 1)
	mux := NewMux()
	AddHandler(mux, func(context.Context, *Task[tick]) error { ran <- struct{}{}; return nil })
	server := NewServer(c, ServerConfig{Namespace: ns, Logger: quietTestLogger()})
	if err := server.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	defer server.Shutdown(ctx)
	if _, err := NewClient(c, WithNamespace(ns)).Enqueue(ctx, tick{}); err != nil {
		t.Fatal(err)
	}
	<-ran
	waitLeader(t, s)

	insp := NewInspector(c, WithNamespace(ns))
	_, err := insp.Migrate(ctx, MigrateOptions{})
	var inUse *NamespaceInUseError
	if !errors.As(err, &inUse) || !errors.Is(err, ErrNamespaceInUse) {
		t.Fatalf("migrate with a live scheduler and server: %v, want a NamespaceInUseError", err)
	}
	t.Logf("refused: %v", err)
	if len(inUse.Instances) != 1 || !strings.HasPrefix(inUse.Instances[0], "sched-a") || inUse.Leader != "sched-a" ||
		len(inUse.Servers) != 1 || !strings.Contains(inUse.Servers[0], "on queue default") {
		t.Errorf("refusal names %+v; want sched-a, as instance and leader, and the server's consumer", inUse)
	}
	if meta, _ := keyspace.ReadMeta(ctx, c, ns); meta.Layout != "" {
		t.Fatalf("a refused migration wrote the meta key: %+v", meta)
	}

	// Shut down gracefully: the scheduler deregisters and resigns, the
	// server leaves its consumer groups.
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := server.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := insp.Migrate(ctx, MigrateOptions{DryRun: true}); err != nil {
		t.Fatalf("dry run once both shut down: %v", err)
	}

	// A crashed instance: its last heartbeat has 15 s to run.
	const crashed = "crashed-b"
	reg := schedstore.New(c, schedstore.Config{Layout: keyspace.Single(ns)})
	if _, err := reg.Heartbeat(ctx, schedstore.Instance{ID: crashed, Host: "h", PID: 7, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := insp.Migrate(ctx, MigrateOptions{}); !errors.As(err, &inUse) || len(inUse.Instances) != 1 || inUse.Instances[0] != crashed+" (h, pid 7)" {
		t.Fatalf("migrate with a crashed instance's heartbeat unexpired: %v, want it named", err)
	}
	rep, err := insp.Migrate(ctx, MigrateOptions{Force: true})
	if err != nil {
		t.Fatalf("forced: %v", err)
	}
	if !slices.Equal(rep.Forced, []string{crashed + " (h, pid 7)"}) || rep.Moved["schedules"] != 1 {
		t.Errorf("forced migration: %+v", rep)
	}
}

// A Client that read layout 1 before the migration keeps enqueueing while
// it runs: what it adds to layout 1 is moved, and once the layout-1 keys
// are markers its next enqueue meets WRONGTYPE, reads the layout again and
// lands in the partitions. Every task it enqueued is in its partition
// once, with and without a dedup key; nothing stays in layout 1.
func TestAClientCachingLayoutOneEnqueuesIntoThePartitionsAfterTheMigration(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	const ns = "moving"
	markLayoutOne(t, c, ns)
	cl := NewClient(c, WithNamespace(ns))
	var ids []string
	enqueue := func(opts ...EnqueueOption) {
		t.Helper()
		info, err := cl.Enqueue(ctx, tick{N: len(ids)}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.ID)
	}
	for range 50 {
		enqueue()
	}
	if cl.ns.Cached() == nil || !cl.ns.Cached().Layout.IsSingle() {
		t.Fatal("the client did not read layout 1")
	}
	// It goes on enqueueing, from one goroutine, while the migration runs.
	stop := make(chan struct{})
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		during  []string
		lastErr error
	)
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var opts []EnqueueOption
			if i%3 == 0 {
				opts = append(opts, WithDedupKey(fmt.Sprintf("during-%d", i), time.Hour))
			}
			info, err := cl.Enqueue(ctx, tick{N: 1000 + i}, opts...)
			mu.Lock()
			if err != nil {
				lastErr = err
			} else {
				during = append(during, info.ID)
			}
			mu.Unlock()
		}
	})
	rep, err := NewInspector(c, WithNamespace(ns)).migrate(ctx, MigrateOptions{}, migrateHooks{batch: 5})
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if lastErr != nil {
		t.Fatalf("an enqueue during the migration failed: %v", lastErr)
	}
	t.Logf("%d tasks enqueued during the migration; report %+v", len(during), rep)
	if cl.ns.Cached() == nil || cl.ns.Cached().Layout.Partitions() != 12 {
		t.Fatal("the client did not read the layout again")
	}
	enqueue(WithDedupKey("after:1", time.Hour))
	if info, err := cl.Enqueue(ctx, tick{}, WithDedupKey("after:1", time.Hour)); err != nil || !info.Duplicate {
		t.Fatalf("the same dedup key again: %+v, %v; want a duplicate", info, err)
	}
	ids = append(ids, during...)

	l, _ := keyspace.Partitioned(ns, 12)
	where := map[string]int{}
	for p := range l.Partitions() {
		for _, m := range streamOf(t, c, rdb.KeysAt(l.Partition(p)).Stream(DefaultQueue)) {
			if _, twice := where[m.ID]; twice {
				t.Errorf("task %s twice", m.ID)
			}
			where[m.ID] = p
			// A task with a dedup key is in its key's partition, whoever
			// put it there (others are spread: by their ID if moved,
			// round-robin if enqueued into the partitions).
			if m.DedupKey != "" {
				if want := l.ForDedup(m.DedupKey); want != p {
					t.Errorf("task %s (dedup %q) in partition %d, want %d", m.ID, m.DedupKey, p, want)
				}
				if v := c.Get(ctx, rdb.KeysAt(l.Partition(p)).Dedup(m.DedupKey)).Val(); v != m.ID {
					t.Errorf("dedup key %s of task %s claims %q in its partition", m.DedupKey, m.ID, v)
				}
			}
		}
	}
	for _, id := range ids {
		if _, ok := where[id]; !ok {
			t.Errorf("task %s lost", id)
		}
	}
	if len(where) != len(ids) {
		t.Errorf("%d tasks in the partitions, %d enqueued", len(where), len(ids))
	}
	for k, v := range snapshot(t, c, rdb.NewKeys(ns).AllPattern()) {
		if _, ok := rdb.NewKeys(ns).DedupKeyOf(k); ok || (v.Type != "string" && !schedstore.IsControl(ns, k) && k != keyspace.Meta(ns)) {
			t.Errorf("left in layout 1: %s (%s)", k, v.Type)
		}
	}
}

// After the migration, a scheduler and a server started fresh in the
// partitioned layout fire every schedule from the state the layout-1
// scheduler left, and run the tasks it had fired: each trigger second of
// each schedule runs once, from before the migration to after it, none
// missing (the gap is far below the misfire threshold), and every
// partition's first term has an epoch above layout 1's.
func TestAfterTheMigrationASchedulerFiresEveryScheduleFromItsMigratedState(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	const ns = "fresh"
	markLayoutOne(t, c, ns)
	register := func(s *Scheduler) {
		for i := range 3 {
			_ = RegisterInterval(s, time.Second, tick{N: i}, WithScheduleID(fmt.Sprintf("every-%d", i)))
		}
		_ = RegisterCron(s, "* * * * * ?", tick{N: 9}, WithScheduleID("cron"))
	}
	old := NewScheduler(c, SchedulerConfig{Namespace: ns, InstanceID: "old", LeaderTTL: time.Second, Logger: quietTestLogger()})
	register(old)
	if err := old.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if err := old.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := NewInspector(c, WithNamespace(ns)).Migrate(ctx, MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	migrated := time.Now()
	t.Logf("migrated: %v", rep.Moved)

	var mu sync.Mutex
	runs := map[string]map[int64]int{} // schedule → trigger second → runs
	mux := NewMux()
	AddHandler(mux, func(_ context.Context, task *Task[tick]) error {
		mu.Lock()
		defer mu.Unlock()
		if runs[task.ScheduleID] == nil {
			runs[task.ScheduleID] = map[int64]int{}
		}
		runs[task.ScheduleID][task.TriggerTime.Unix()]++
		return nil
	})
	server := NewServer(c, ServerConfig{Namespace: ns, Logger: quietTestLogger()})
	if err := server.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	defer server.Shutdown(ctx)
	nw := NewScheduler(c, SchedulerConfig{Namespace: ns, InstanceID: "new", LeaderTTL: time.Second, Logger: quietTestLogger()})
	register(nw)
	if err := nw.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if nw.store.Layout().Partitions() != 12 {
		t.Fatalf("the new scheduler reads %v", nw.store.Layout())
	}
	waitLeader(t, nw)
	leaders, err := NewInspector(c, WithNamespace(ns)).SchedulerLeaders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leaders {
		if l.Epoch <= oldEpoch {
			t.Errorf("partition %d's first term has epoch %d, not above layout 1's %d", l.Partition, l.Epoch, oldEpoch)
		}
	}
	time.Sleep(3 * time.Second)
	if err := nw.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	insp := NewInspector(c, WithNamespace(ns))
	waitUntil(t, "every fired task to run", func() bool {
		qi, err := insp.QueueInfo(ctx, DefaultQueue)
		return err == nil && qi.Ready+qi.Running+qi.Delayed == 0
	})
	mu.Lock()
	defer mu.Unlock()
	for _, id := range []string{"every-0", "every-1", "every-2", "cron"} {
		secs := slices.Sorted(maps.Keys(runs[id]))
		if len(secs) == 0 {
			t.Fatalf("%s never ran", id)
		}
		first, last := secs[0], secs[len(secs)-1]
		for s := first; s <= last; s++ {
			if n := runs[id][s]; n != 1 {
				t.Errorf("%s: trigger %v ran %d times", id, time.Unix(s, 0).UTC(), n)
			}
		}
		if first >= migrated.Unix() || last < migrated.Unix()+2 {
			t.Errorf("%s ran from %v to %v; the migration was at %v", id, time.Unix(first, 0), time.Unix(last, 0), migrated)
		}
	}
}

// A partitioned namespace whose meta key Redis lost is not taken for a
// layout-1 one: migrating it would record a count that may not be its own.
func TestMigrateRefusesAPartitionedNamespaceThatLostItsMetaKey(t *testing.T) {
	redistest.Parallel(t)
	c := redistest.Start(t).Client()
	ctx := context.Background()
	if _, err := NewClient(c, WithNamespace("lost"), WithPartitions(6)).Enqueue(ctx, tick{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Del(ctx, keyspace.Meta("lost")).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := NewInspector(c, WithNamespace("lost")).Migrate(ctx, MigrateOptions{})
	if err == nil || !strings.Contains(err.Error(), "is partitioned and lost its meta key") {
		t.Fatalf("migrate of a partitioned namespace without its meta key: %v", err)
	}
	if n := c.Exists(ctx, keyspace.Meta("lost")).Val(); n != 0 {
		t.Error("the refused migration wrote a meta key")
	}
	if _, err := NewInspector(c, WithNamespace("empty")).Migrate(ctx, MigrateOptions{}); !errors.Is(err, ErrNothingToMigrate) {
		t.Errorf("migrate of a namespace without keys: %v, want ErrNothingToMigrate", err)
	}
}

// The overlap record of a run the migration moved names where it went: a
// run in a stream (fired at once) by its entry in its partition's stream, a
// run in the delayed set (fired ahead) as delayed in its partition's
// delayed set. So when such a run vanishes, the next firing of the
// partitioned scheduler finds it gone and clears the marker, instead of
// skipping forever on a record of layout 1's keys.
func TestAMovedRunsOverlapRecordFindsItInItsPartition(t *testing.T) {
	redistest.Parallel(t)
	c := redistest.Start(t).Client()
	ctx := context.Background()
	const ns = "ovl"
	markLayoutOne(t, c, ns)
	register := func(s *Scheduler) {
		// The first firing of a per-second cron is its current second's,
		// at once, into the stream; an interval's comes a period after
		// its creation, fired ahead into the delayed set.
		_ = RegisterCron(s, "* * * * * ?", tick{}, WithScheduleID("in-stream"), WithOverlap(OverlapSkip), WithQueue("slowq"))
		_ = RegisterInterval(s, 2*time.Second, tick{}, WithScheduleID("delayed"), WithOverlap(OverlapSkip), WithQueue("slowq"))
	}
	old := NewScheduler(c, SchedulerConfig{Namespace: ns, InstanceID: "old", LeaderTTL: time.Second, Logger: quietTestLogger()})
	register(old)
	if err := old.Start(ctx); err != nil {
		t.Fatal(err)
	}
	insp := NewInspector(c, WithNamespace(ns))
	waitUntil(t, "a run of each", func() bool {
		a, _ := insp.ScheduleHistory(ctx, "in-stream", 0)
		b, _ := insp.ScheduleHistory(ctx, "delayed", 0)
		return len(a) > 0 && len(b) > 0
	})
	if err := old.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := insp.Migrate(ctx, MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	l, _ := keyspace.Partitioned(ns, 12)
	for id, kind := range map[string]string{"in-stream": "s", "delayed": "d"} {
		k := rdb.KeysAt(l.Partition(l.ForSchedule(id)))
		var runs []*rdb.Message
		for _, m := range append(streamOf(t, c, k.Stream("slowq")), delayedOf(t, c, k.Delayed("slowq"))...) {
			if m.ScheduleID == id {
				runs = append(runs, m)
			}
		}
		where := c.HGetAll(ctx, k.OverlapWhere(id+":main")).Val()
		if len(where) != 1 || len(runs) != 1 {
			t.Fatalf("%s after the migration: records %v, runs %d; want the one queued run", id, where, len(runs))
		}
		w := where[runs[0].ID]
		switch kind {
		case "s":
			var entry string
			if _, err := fmt.Sscanf(w, "s %s", &entry); err != nil || !strings.HasSuffix(w, " "+k.Stream("slowq")) ||
				len(c.XRange(ctx, k.Stream("slowq"), entry, entry).Val()) != 1 {
				t.Fatalf("%s: the moved run's record is %q, want its entry of %s", id, w, k.Stream("slowq"))
			}
			if err := c.XDel(ctx, k.Stream("slowq"), entry).Err(); err != nil { // the run vanishes
				t.Fatal(err)
			}
		case "d":
			if !strings.HasPrefix(w, "d ") || !strings.HasSuffix(w, " - "+k.Stream("slowq")) {
				t.Fatalf("%s: the moved run's record is %q, want it delayed in %s", id, w, k.Delayed("slowq"))
			}
			if err := c.Del(ctx, k.Delayed("slowq")).Err(); err != nil { // the run vanishes
				t.Fatal(err)
			}
		}
	}
	nw := NewScheduler(c, SchedulerConfig{Namespace: ns, InstanceID: "new", LeaderTTL: time.Second, Logger: quietTestLogger()})
	register(nw)
	if err := nw.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer nw.Shutdown(ctx)
	for _, id := range []string{"in-stream", "delayed"} {
		waitUntil(t, id+": the marker of the vanished run cleared and a run enqueued", func() bool {
			h, _ := insp.ScheduleHistory(ctx, id, 0) // newest first
			enqueued := false
			for _, r := range h {
				cleared := false
				for _, j := range r.Jobs {
					enqueued = enqueued || j.Result == "enqueued"
					cleared = cleared || j.Result == "cleared"
				}
				if cleared {
					return enqueued // at that firing or a later one
				}
			}
			return false
		})
	}
}

// Migrate needs no command beyond chronos.ACLRules: run as a user with
// exactly the rules of the namespace, it migrates, and the ACL LOG records
// no denial.
func TestMigrateRunsAsAnACLUserWithACLRules(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	const ns = "aclmig"
	srv.AddUser("migrator", "pw", ACLRules(ns)...)
	fillLayoutOne(t, srv.Client(), ns)
	before := snapshot(t, srv.Client(), rdb.NewKeys(ns).AllPattern())
	ctx := context.Background()
	if err := srv.ACLLogReset(ctx); err != nil {
		t.Fatal(err)
	}
	insp := NewInspector(srv.UserClient("migrator", "pw"), WithNamespace(ns))
	if _, err := insp.Migrate(ctx, MigrateOptions{DryRun: true, Force: true}); err != nil {
		t.Fatalf("dry run as the ACL user: %v", err)
	}
	if _, err := insp.Migrate(ctx, MigrateOptions{LiveWithin: time.Millisecond}); err != nil {
		t.Fatalf("migrate as the ACL user: %v", err)
	}
	if _, err := insp.Migrate(ctx, MigrateOptions{}); err != nil {
		t.Fatalf("again as the ACL user: %v", err)
	}
	l, _ := keyspace.Partitioned(ns, 12)
	checkMigrated(t, ns, l, before, namespaceKeys(t, srv.Client(), ns))
	log, err := srv.ACLLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range log {
		t.Errorf("ACL LOG: %s %q denied to %s (command %s)", e.Reason, e.Object, e.Username, e.Command)
	}
}
