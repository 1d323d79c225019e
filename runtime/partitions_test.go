package chronos_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// parts reads a namespace's queue keys in every partition, in the layout
// its Clients and Servers read from Redis, for tests that check what Redis
// holds.
type parts struct {
	t  testing.TB
	c  redis.UniversalClient
	st *rdb.Store
}

// partsOf returns the partitions of namespace ns ("" for the default).
func partsOf(t testing.TB, c redis.UniversalClient, ns string) *parts {
	t.Helper()
	st, err := rdb.NewNamespace(c, ns, keyspace.ResolveOptions{ReadOnly: true}).Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &parts{t: t, c: c, st: st}
}

// sum adds up an integer reply over the partitions.
func (p *parts) sum(cmd func(ctx context.Context, k rdb.Keys) *redis.IntCmd) int64 {
	n := int64(0)
	for _, r := range p.st.Parts {
		n += cmd(context.Background(), r.K).Val()
	}
	return n
}

// xlen is the length of queue's streams.
func (p *parts) xlen(queue string) int64 {
	return p.sum(func(ctx context.Context, k rdb.Keys) *redis.IntCmd { return p.c.XLen(ctx, k.Stream(queue)) })
}

// delayed is the number of delayed tasks of queue.
func (p *parts) delayed(queue string) int64 {
	return p.sum(func(ctx context.Context, k rdb.Keys) *redis.IntCmd { return p.c.ZCard(ctx, k.Delayed(queue)) })
}

// runs is the number of run records of kind.
func (p *parts) runs(kind string) int64 {
	return p.sum(func(ctx context.Context, k rdb.Keys) *redis.IntCmd { return p.c.XLen(ctx, k.Runs(kind)) })
}

// pending is the number of entries of queue taken by a worker and not
// acknowledged.
func (p *parts) pending(queue string) int64 {
	n := int64(0)
	for _, r := range p.st.Parts {
		if x, err := p.c.XPending(context.Background(), r.K.Stream(queue), rdb.Group).Result(); err == nil {
			n += x.Count
		}
	}
	return n
}

// consumers returns the names of the consumers of queue's group, in any
// partition.
func (p *parts) consumers(queue string) map[string]bool {
	out := map[string]bool{}
	for _, r := range p.st.Parts {
		for _, c := range p.c.XInfoConsumers(context.Background(), r.K.Stream(queue), rdb.Group).Val() {
			out[c.Name] = true
		}
	}
	return out
}

// holding returns the keys of the partition whose stream of queue holds
// task id; the test fails if none does.
func (p *parts) holding(queue, id string) rdb.Keys {
	p.t.Helper()
	for _, r := range p.st.Parts {
		xs, err := p.c.XRange(context.Background(), r.K.Stream(queue), "-", "+").Result()
		if err != nil {
			p.t.Fatal(err)
		}
		for _, x := range xs {
			s, _ := x.Values["m"].(string)
			if m, err := rdb.Decode([]byte(s)); err == nil && m.ID == id {
				return r.K
			}
		}
	}
	p.t.Fatalf("task %s is in no stream of queue %q", id, queue)
	return rdb.Keys{}
}

// dedup is the claim key of dedup key key, in the partition of the key.
func (p *parts) dedup(key string) string {
	return p.st.Parts[p.st.Layout.ForDedup(key)].K.Dedup(key)
}

// Tasks without a dedup key go to the partitions in turn, so a namespace's
// queue is spread evenly; a task with a dedup key goes to the partition of
// its key.
func TestEnqueueSpreadsOverEveryPartition(t *testing.T) {
	if chronos.LayoutOneUnderTest() {
		t.Skip("about spreading tasks over partitions; CHRONOS_TEST_LAYOUT=1 runs the tests in layout 1, one partition")
	}
	e := newEnv(t)
	ctx := context.Background()
	for range 12 * 10 {
		e.enqueue(t, Greet{})
	}
	p := partsOf(t, e.rdb, "")
	if n := len(p.st.Parts); n != 12 {
		t.Fatalf("%d partitions, want the default 12", n)
	}
	for i, r := range p.st.Parts {
		if n := e.rdb.XLen(ctx, r.K.Stream("default")).Val(); n != 10 {
			t.Errorf("partition %d holds %d tasks, want 10", i, n)
		}
	}
	for i := range 50 {
		key := fmt.Sprintf("report:%d:2026-12-01", i)
		e.enqueue(t, Greet{}, chronos.WithDedupKey(key, time.Hour))
		if e.rdb.Exists(ctx, p.dedup(key)).Val() != 1 {
			t.Fatalf("dedup key %q is not in the partition of its text before the last colon", key)
		}
	}
	if n := p.xlen("default"); n != 170 {
		t.Fatalf("%d tasks, want 170", n)
	}
}

// Concurrent Clients of one namespace, each with its own connections,
// claim one dedup key in the same partition: exactly one enqueue adds a
// task, and every other one returns that task's ID.
func TestADedupKeyIsClaimedOnceByConcurrentClients(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const clients, calls = 8, 25
	var (
		mu    sync.Mutex
		added []string
		ids   = map[string]int{}
		wg    sync.WaitGroup
	)
	for range clients {
		c := e.redis.NewClient()
		client := chronos.NewClient(c)
		t.Cleanup(func() { _ = client.Close() })
		for range calls {
			wg.Go(func() {
				info, err := client.Enqueue(ctx, Greet{}, chronos.WithDedupKey("nightly:1764547200", time.Hour))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				ids[info.ID]++
				if !info.Duplicate {
					added = append(added, info.ID)
				}
			})
		}
	}
	wg.Wait()
	if len(added) != 1 || len(ids) != 1 || ids[added[0]] != clients*calls {
		t.Fatalf("added %v; IDs returned %v", added, ids)
	}
	if n := partsOf(t, e.rdb, "").xlen("default"); n != 1 {
		t.Fatalf("%d tasks enqueued, want 1", n)
	}
}

// A namespace written by a version before partitions (no meta key, its
// queue keys under the single tag) keeps exactly its key names: a Client
// and a Server that find its keys use layout 1, and everything they write,
// the task's whole life through, is under "{ns}:" as before.
func TestALayoutOneNamespaceKeepsItsKeyNames(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	k := rdb.NewKeys("legacy")
	// What an earlier version left: its server's consumer group and a task
	// it had not run yet.
	if err := e.rdb.XGroupCreateMkStream(ctx, k.Stream("default"), rdb.Group, "0").Err(); err != nil {
		t.Fatal(err)
	}
	old := &rdb.Message{ID: rdb.NewID(time.Now()), Kind: "greet", Queue: "default", Args: []byte(`{"name":"old"}`), MaxRetry: 25}
	b, _ := old.Encode()
	if err := e.rdb.XAdd(ctx, &redis.XAddArgs{Stream: k.Stream("default"), Values: []any{"m", b}}).Err(); err != nil {
		t.Fatal(err)
	}

	ran := make(chan string, 10)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		if task.Args.Name == "dead" {
			return chronos.ErrSkipRetry
		}
		ran <- task.Args.Name
		return nil
	})
	client := chronos.NewClient(e.rdb, chronos.WithNamespace("legacy"))
	for _, name := range []string{"new", "later", "once", "dead"} {
		var opts []chronos.EnqueueOption
		switch name {
		case "later":
			opts = append(opts, chronos.WithProcessIn(20*time.Millisecond))
		case "once":
			opts = append(opts, chronos.WithDedupKey("once:1", time.Hour))
		}
		if _, err := client.Enqueue(ctx, Greet{Name: name}, opts...); err != nil {
			t.Fatal(err)
		}
	}
	e.serve(t, mux, chronos.ServerConfig{Namespace: "legacy", SuccessRunInterval: -1})
	got := map[string]bool{}
	for range 4 {
		got[recv(t, ran, "a run")] = true
	}
	if !got["old"] || !got["new"] || !got["later"] || !got["once"] {
		t.Fatalf("ran %v", got)
	}
	insp := chronos.NewInspector(e.rdb, chronos.WithNamespace("legacy"))
	eventually(t, "the dead letter and five run records", func() bool {
		n, _ := insp.CountDead(ctx)
		runs, _ := insp.ListRuns(ctx, "greet", 10)
		return n == 1 && len(runs) == 5
	})

	// Every key in Redis but the marks of the default namespace that
	// CHRONOS_TEST_LAYOUT=1 writes (newEnv), which are not legacy's.
	keys := slices.DeleteFunc(chronos.KeysForTest(t, e.rdb, "*"), func(k string) bool {
		return slices.Contains(chronos.LayoutMarksForTest(""), k)
	})
	slices.Sort(keys)
	want := []string{k.Dead(), k.DeadIndex(), k.Dedup("once:1"), k.Stream("default"), k.Runs("greet")}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Fatalf("keys in Redis:\n%q\nwant exactly the layout-1 names\n%q", keys, want)
	}
	if n := e.rdb.Exists(ctx, keyspace.Meta("legacy")).Val(); n != 0 {
		t.Fatal("a meta key was written for a layout-1 namespace")
	}
}

// The Inspector of a namespace without a meta key reads it as layout 1,
// whatever keys it has: a partitioned namespace always has a meta key.
func TestTheInspectorReadsALayoutOneNamespaceWithoutMarkers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	k := rdb.NewKeys("legacy")
	m := &rdb.Message{ID: rdb.NewID(time.Now()), Kind: "greet", Queue: "reports", Args: []byte(`{}`)}
	b, _ := m.Encode()
	if err := e.rdb.XAdd(ctx, &redis.XAddArgs{Stream: k.Stream("reports"), Values: []any{"m", b}}).Err(); err != nil {
		t.Fatal(err)
	}
	insp := chronos.NewInspector(e.rdb, chronos.WithNamespace("legacy"))
	if qs, err := insp.Queues(ctx); err != nil || !slices.Equal(qs, []string{"reports"}) {
		t.Fatalf("Queues = %v, %v", qs, err)
	}
	if ts, err := insp.ListTasks(ctx, "reports", chronos.TaskReady, chronos.TaskFilter{}); err != nil || len(ts) != 1 || ts[0].ID != m.ID {
		t.Fatalf("ListTasks = %v, %v", ts, err)
	}
	if ok, err := insp.NamespaceExists(ctx); err != nil || !ok {
		t.Fatalf("NamespaceExists = %v, %v", ok, err)
	}
	if n := e.rdb.Exists(ctx, keyspace.Meta("legacy")).Val(); n != 0 {
		t.Fatal("the Inspector wrote a meta key")
	}
}

// chronos migrate leaves a string in place of each layout-1 queue key. A
// Client that still has layout 1 in memory meets WRONGTYPE, reads the
// layout again and enqueues, once, where it now says: by a bare XADD, by
// the enqueue script, and in a batch.
func TestAnEnqueueThatMeetsWrongTypeReadsTheLayoutAgain(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	k := rdb.NewKeys("moved")
	if err := e.rdb.XGroupCreateMkStream(ctx, k.Stream("default"), rdb.Group, "0").Err(); err != nil {
		t.Fatal(err)
	}
	var clients []*chronos.Client
	for range 3 {
		c := chronos.NewClient(e.rdb, chronos.WithNamespace("moved"))
		if _, err := c.Enqueue(ctx, Greet{}); err != nil { // reads layout 1
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	if n := e.rdb.XLen(ctx, k.Stream("default")).Val(); n != 3 {
		t.Fatalf("layout 1: %d tasks in %s, want 3", n, k.Stream("default"))
	}
	// What chronos migrate does, in short.
	if err := e.rdb.HSet(ctx, keyspace.Meta("moved"), "layout", "2", "partitions", "12").Err(); err != nil {
		t.Fatal(err)
	}
	e.rdb.Del(ctx, k.Stream("default"))
	e.rdb.Set(ctx, k.Stream("default"), "migrated", 0)
	e.rdb.Set(ctx, k.Delayed("default"), "migrated", 0)

	if _, err := clients[0].Enqueue(ctx, Greet{}); err != nil {
		t.Fatalf("bare XADD after the migration: %v", err)
	}
	if _, err := clients[1].Enqueue(ctx, Greet{}, chronos.WithProcessIn(time.Hour)); err != nil {
		t.Fatalf("enqueue script after the migration: %v", err)
	}
	if _, err := clients[2].EnqueueMany(ctx, []chronos.TaskArgs{Greet{}, Greet{}}); err != nil {
		t.Fatalf("EnqueueMany after the migration: %v", err)
	}
	p := partsOf(t, e.rdb, "moved")
	if len(p.st.Parts) != 12 || p.xlen("default") != 3 || p.delayed("default") != 1 {
		t.Fatalf("after the migration: %d partitions, %d ready and %d delayed tasks; want 12, 3 and 1",
			len(p.st.Parts), p.xlen("default"), p.delayed("default"))
	}
}

// With every partition full, each fetch round starts at the next
// partition: a server that takes one task at a time takes them from every
// partition in turn, not all of one partition first.
func TestEveryPartitionGetsItsTurn(t *testing.T) {
	if chronos.LayoutOneUnderTest() {
		t.Skip("about taking tasks from every partition in turn; CHRONOS_TEST_LAYOUT=1 runs the tests in layout 1, one partition")
	}
	e := newEnv(t)
	const perPart = 4
	var ids []string
	for range 12 * perPart {
		ids = append(ids, e.enqueue(t, Greet{}).ID)
	}
	p := partsOf(t, e.rdb, "")
	partOf := map[string]int{}
	for i, r := range p.st.Parts {
		xs, err := e.rdb.XRange(context.Background(), r.K.Stream("default"), "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range xs {
			m, _ := rdb.Decode([]byte(x.Values["m"].(string)))
			partOf[m.ID] = i
		}
	}
	var (
		mu    sync.Mutex
		order []string
	)
	done := make(chan struct{}, len(ids))
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		mu.Lock()
		order = append(order, task.ID)
		mu.Unlock()
		done <- struct{}{}
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{Concurrency: 1})
	for range 24 {
		recv(t, done, "a run")
	}
	mu.Lock()
	defer mu.Unlock()
	count := map[int]int{}
	for _, id := range order[:24] {
		count[partOf[id]]++
	}
	for i := range 12 {
		if count[i] < 1 || count[i] > 3 {
			t.Fatalf("the first 24 runs came from partitions %v; want about 2 from each", count)
		}
	}
}

// PauseQueue flags the queue in every partition's paused set; a queue
// flagged in one partition only is skipped there, and its tasks in the
// other partitions run.
func TestAQueueIsPausedPartitionByPartition(t *testing.T) {
	if chronos.LayoutOneUnderTest() {
		t.Skip("about partitions; CHRONOS_TEST_LAYOUT=1 runs the tests in layout 1, one partition")
	}
	e := newEnv(t)
	ctx := context.Background()
	if err := e.insp.PauseQueue(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	p := partsOf(t, e.rdb, "")
	for i, r := range p.st.Parts {
		if !e.rdb.SIsMember(ctx, r.K.Paused(), "q").Val() {
			t.Fatalf("partition %d does not have q paused", i)
		}
	}
	if err := e.insp.ResumeQueue(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	for i, r := range p.st.Parts {
		if e.rdb.SIsMember(ctx, r.K.Paused(), "q").Val() {
			t.Fatalf("partition %d still has q paused", i)
		}
	}
	// Paused in partition 5 only, as a pause whose pipeline was cut off.
	e.rdb.SAdd(ctx, p.st.Parts[5].K.Paused(), "q")
	for range 24 {
		e.enqueue(t, Greet{}, chronos.WithQueue("q"))
	}
	ran := make(chan struct{}, 24)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		ran <- struct{}{}
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{Queues: map[string]int{"q": 1}})
	for range 22 {
		recv(t, ran, "a run")
	}
	time.Sleep(200 * time.Millisecond)
	info, err := e.insp.QueueInfo(ctx, "q")
	if err != nil || len(ran) != 0 || info.Ready != 2 || !info.Paused {
		t.Fatalf("with q paused in one partition: %d more runs, QueueInfo %+v, %v; want its 2 tasks there waiting", len(ran), info, err)
	}
	if n := e.rdb.XLen(ctx, p.st.Parts[5].K.Stream("q")).Val(); n != 2 {
		t.Fatalf("partition 5 holds %d tasks, want its 2", n)
	}
	if err := e.insp.ResumeQueue(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	recv(t, ran, "a run after resume")
	recv(t, ran, "a run after resume")
}

// After Redis lost its data, a server that finds its consumer groups gone
// writes its layout's meta key again, so that a process that starts later
// (an Inspector, a CLI) does not take the namespace for a layout-1 one and
// miss every partition's keys. In layout 1 (CHRONOS_TEST_LAYOUT=1) it
// writes the layout-1 mark again, so that a process that starts later
// does not take the namespace for a new one and partition it.
func TestAServerWritesItsLayoutAgainAfterRedisLostIt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ran := make(chan string, 2)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		ran <- task.ID
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{})
	e.enqueue(t, Greet{})
	recv(t, ran, "a run")
	chronos.FlushAllForTest(t, e.rdb)
	if chronos.LayoutOneUnderTest() {
		eventually(t, "the layout-1 mark written again", func() bool {
			return e.rdb.Exists(ctx, chronos.LayoutMarksForTest("")...).Val() == 1
		})
		if n := e.rdb.Exists(ctx, keyspace.Meta("")).Val(); n != 0 {
			t.Fatal("a layout-1 server wrote a meta key")
		}
	} else {
		eventually(t, "the meta key written again", func() bool {
			return e.rdb.HGet(ctx, keyspace.Meta(""), "partitions").Val() == "12"
		})
	}
	info := e.enqueue(t, Greet{})
	if got := recv(t, ran, "a run after the loss"); got != info.ID {
		t.Fatalf("ran %s, want %s", got, info.ID)
	}
	// The run record is written after the handler returned, with the
	// next batch of outcomes.
	eventually(t, "a fresh Inspector to list the run after the loss", func() bool {
		ts, err := chronos.NewInspector(e.rdb).ListRuns(ctx, "greet", 10)
		return err == nil && len(ts) == 1 && ts[0].TaskID == info.ID
	})
}
