package chronos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
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
	"github.com/chronos-go/chronos/runtime/trigger"
)

func skipInLayoutOne(t *testing.T) {
	t.Helper()
	if testLayoutOne() {
		t.Skip("layout 1 has a single partition")
	}
}

// firedBy records which schedules a scheduler fired (Metrics).
type firedBy struct {
	NoMetrics
	mu     sync.Mutex
	counts map[string]int
}

func (f *firedBy) TriggerFired(t FiredTrigger) {
	if t.Result != TriggerEnqueued {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.counts == nil {
		f.counts = map[string]int{}
	}
	f.counts[t.Schedule]++
}

func (f *firedBy) reset() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.counts
	f.counts = nil
	return c
}

// everySecond registers n one-second interval schedules, sched-0 … sched-<n-1>.
func everySecond(n int) func(*Scheduler) {
	return func(s *Scheduler) {
		for i := range n {
			_ = RegisterInterval(s, time.Second, tick{N: i}, WithScheduleID(fmt.Sprintf("sched-%d", i)))
		}
	}
}

// Three instances share the twelve partitions four each, and each fires
// the schedules of its partitions and no other: adding instances adds
// firing capacity.
func TestThreeInstancesLeadFourPartitionsEachAndFireOnlyTheirSchedules(t *testing.T) {
	skipInLayoutOne(t)
	e := newSchedEnv(t)
	const n = 36
	var ss []*Scheduler
	var recs []*firedBy
	for i := range 3 {
		rec := &firedBy{}
		recs = append(recs, rec)
		ss = append(ss, e.start(e.scheduler(fmt.Sprintf("i%d", i), SchedulerConfig{Metrics: rec}, everySecond(n))))
	}
	waitBalanced(t, ss...)
	for _, s := range ss {
		if got := len(s.led()); got != 4 {
			t.Fatalf("%s leads %d partitions, want 4", s.cfg.InstanceID, got)
		}
	}
	led := make([][]int, len(ss))
	for k, s := range ss {
		led[k] = s.led()
		recs[k].reset()
	}
	time.Sleep(3 * time.Second)
	fired := map[string]int{} // schedule → instances that fired it
	for k, s := range ss {
		if !slices.Equal(s.led(), led[k]) {
			t.Fatalf("%s's partitions changed from %v to %v while nothing happened", s.cfg.InstanceID, led[k], s.led())
		}
		counts := recs[k].reset()
		for id := range counts {
			fired[id]++
			if p := s.store.PartitionOf(id); !slices.Contains(led[k], p) {
				t.Errorf("%s fired %s of partition %d; it leads %v", s.cfg.InstanceID, id, p, led[k])
			}
		}
		t.Logf("%s leads partitions %v and fired %d schedules", s.cfg.InstanceID, led[k], len(counts))
		if len(counts) == 0 {
			t.Errorf("%s fired nothing", s.cfg.InstanceID)
		}
	}
	for i := range n {
		id := fmt.Sprintf("sched-%d", i)
		if fired[id] != 1 {
			t.Errorf("%s fired by %d instances in 3s, want 1", id, fired[id])
		}
	}
	insts, err := e.insp.SchedulerInstances(context.Background())
	if err != nil || len(insts) != 3 {
		t.Fatalf("SchedulerInstances = %v, %v", insts, err)
	}
	for k, in := range insts {
		if !slices.Equal(in.Partitions, led[k]) || in.Leader != slices.Contains(led[k], 0) {
			t.Errorf("instance %s: partitions %v, leader %v; it leads %v", in.ID, in.Partitions, in.Leader, led[k])
		}
	}
	leaders, err := e.insp.SchedulerLeaders(context.Background())
	if err != nil || len(leaders) != 12 {
		t.Fatalf("SchedulerLeaders = %v, %v", leaders, err)
	}
	for _, l := range leaders {
		if l.InstanceID == "" || l.Since.IsZero() || time.Since(l.Since) > time.Minute || l.Epoch != l.LastEpoch {
			t.Errorf("partition %d: %+v", l.Partition, l)
		}
	}
}

// A leader of one partition whose lease was taken is fenced in that
// partition only: its firing there enqueues nothing and claims nothing,
// while the other partitions it leads go on firing under their own terms.
func TestAStaleLeaderOfOnePartitionIsFencedAndTheOthersAreNot(t *testing.T) {
	skipInLayoutOne(t)
	e := newSchedEnv(t)
	ctx := context.Background()
	s := e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		_ = RegisterCron(s, "0 0 2 1 1 ?", tick{}, WithScheduleID("yearly"))
		everySecond(24)(s)
	}))
	waitLeader(t, s)
	p := s.store.PartitionOf("yearly")
	stale, _ := s.electorOf("yearly").Current()
	terms := map[int]leader.Term{}
	for q, el := range s.parts.electors {
		terms[q], _ = el.Current()
	}
	// Another instance takes the lease of yearly's partition (as after
	// this one stalled past it).
	if err := e.rdb.Set(ctx, leaseOf(t, e.rdb, "yearly").Lock, "999:other:x", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the step-down", func() bool { return !s.leads("yearly") })
	pl := mustPlan(t, e, "yearly")
	slot := time.Date(2030, 1, 1, 2, 0, 0, 0, time.UTC)
	st := trigger.State{Prev: slot, Next: slot.AddDate(1, 0, 0)}
	res := s.fire(ctx, stale, []*fireReq{{id: "yearly", plan: pl, slot: slot, at: slot, dedup: dedupKey("yearly", slot), state: &st}})
	if !errors.Is(res[0].Err, leader.ErrFenced) {
		t.Fatalf("fire with the stale token of partition %d: %+v, want ErrFenced", p, res[0])
	}
	if ok, _ := e.rdb.Exists(ctx, QueueKeysOf(t, e.rdb, "yearly").Dedup(dedupKey("yearly", slot))).Result(); ok != 0 {
		t.Fatal("a fenced leader claimed the dedup key")
	}
	// The other partitions keep their terms and fire.
	n := len(e.tasks(DefaultQueue))
	waitUntil(t, "firings in the other partitions", func() bool { return len(e.tasks(DefaultQueue)) >= n+12 })
	for q, el := range s.parts.electors {
		if q == p {
			continue
		}
		if cur, ok := el.Current(); !ok || cur.Token != terms[q].Token {
			t.Errorf("partition %d: term %v (trusted %v), was %v", q, cur, ok, terms[q])
		}
	}
	for _, m := range e.tasks(DefaultQueue) {
		if s.store.PartitionOf(m.ScheduleID) == p && m.ScheduleID != "yearly" {
			t.Logf("partition %d also holds %s", p, m.ScheduleID)
		}
	}
}

// A namespace's partition count is fixed when it is created: a scheduler
// configured with another one does not start (ErrLayoutMismatch), one
// configured with none uses the stored one, and a namespace of an earlier
// version keeps its single tag whatever is configured.
func TestStartRefusesAnotherPartitionCount(t *testing.T) {
	srv := StartTestRedis(t)
	ctx := context.Background()
	start := func(ns string, partitions int) (*Scheduler, error) {
		s := NewScheduler(srv.NewClient(), SchedulerConfig{Namespace: ns, Partitions: partitions, LeaderTTL: time.Second, Logger: quietTestLogger()})
		_ = RegisterInterval(s, time.Hour, tick{}, WithScheduleID("hourly"))
		err := s.Start(ctx)
		if err == nil {
			t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
		}
		return s, err
	}
	if _, err := start("six", 6); err != nil {
		t.Fatal(err)
	}
	if _, err := start("six", 12); !errors.Is(err, ErrLayoutMismatch) || !strings.Contains(err.Error(), "6 partitions") {
		t.Fatalf("start with 12 partitions in a namespace of 6: %v, want ErrLayoutMismatch", err)
	}
	s, err := start("six", 0)
	if err != nil || s.store.Partitions() != 6 {
		t.Fatalf("start with no count: %v; want the namespace's 6", err)
	}
	if s, err := start("fresh", 0); err != nil || s.store.Partitions() != keyspace.DefaultPartitions {
		t.Fatalf("a new namespace: %v, want %d partitions", err, keyspace.DefaultPartitions)
	}
	if err := srv.Client().Set(ctx, leader.KeysFor("old").Epoch, 3, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if s, err := start("old", 12); err != nil || !s.store.Layout().IsSingle() {
		t.Fatalf("a namespace of an earlier version with 12 configured: %v; want its single tag", err)
	}
	if n, _ := srv.Client().Exists(ctx, keyspace.Meta("old")).Result(); n != 0 {
		t.Fatal("a namespace of an earlier version got a layout record")
	}
	if _, err := start("bad:p1", 0); !errors.Is(err, keyspace.ErrBadNamespace) {
		t.Fatalf("a namespace named like a partition: %v", err)
	}
}

func quietTestLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func slogTo(w *logBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// streamOf and delayedOf decode the tasks of a stream and of a delayed set.
func streamOf(t *testing.T, c redis.UniversalClient, key string) []*rdb.Message {
	t.Helper()
	xs, err := c.XRange(context.Background(), key, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []*rdb.Message
	for _, x := range xs {
		m, err := rdb.Decode([]byte(x.Values["m"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func delayedOf(t *testing.T, c redis.UniversalClient, key string) []*rdb.Message {
	t.Helper()
	raw, err := c.ZRange(context.Background(), key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []*rdb.Message
	for _, r := range raw {
		m, err := rdb.Decode([]byte(r))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// A rolling deploy from a version before partitions: the namespace holds
// that version's keys, so the new version takes it for layout 1 and uses
// the same keys, the same lease and the same scripts (every name is the
// earlier one: TestLayoutOneKeysAreTheEarlierKeys), so its instances and
// the old ones elect one leader among them and fire from one state. The
// old instances are simulated by instances of this version in layout 1
// (the namespace is marked with the epoch counter the old version
// writes), configured as a deploy would leave them; they are replaced one
// at a time by new instances configured with 12 partitions, each old one
// shut down after its replacement started. Every trigger is enqueued
// once, with no gap, throughout; the namespace stays in layout 1 (no
// layout record, no partition key); and the epoch only grows.
func TestARollingDeployFromTheSingleTagLayout(t *testing.T) {
	srv := StartTestRedis(t)
	c := srv.NewClient()
	ctx := context.Background()
	// The old version's mark: the epoch counter of its election.
	if err := c.Set(ctx, leader.KeysFor("").Epoch, 41, 0).Err(); err != nil {
		t.Fatal(err)
	}
	e := &schedEnv{t: t, redis: srv, rdb: c, insp: NewInspector(c), logs: &logBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", e.logs)
		}
	})
	const n = 6
	var old []*Scheduler
	for i := range 3 {
		old = append(old, e.start(e.scheduler(fmt.Sprintf("old-%d", i), SchedulerConfig{Version: "v1.0.0"}, everySecond(n))))
	}
	waitLeader(t, old...)
	started := time.Now()
	live := slices.Clone(old)
	for i, o := range old {
		nw := e.start(e.scheduler(fmt.Sprintf("new-%d", i), SchedulerConfig{Version: "v1.1.0", Partitions: 12}, everySecond(n)))
		if !nw.store.Layout().IsSingle() {
			t.Fatalf("the new version took the namespace for %v", nw.store.Layout())
		}
		live = append(live, nw)
		time.Sleep(1500 * time.Millisecond)
		if err := o.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		live = slices.DeleteFunc(live, func(s *Scheduler) bool { return s == o })
		waitLeader(t, live...)
		time.Sleep(1500 * time.Millisecond)
	}
	ended := time.Now()
	time.Sleep(1500 * time.Millisecond)

	tasks := e.tasks(DefaultQueue)
	for i := range n {
		id := fmt.Sprintf("sched-%d", i)
		secs := triggerTimes(t, tasks, id) // fails on a trigger enqueued twice
		have := map[int64]bool{}
		for _, s := range secs {
			have[s] = true
		}
		for sec := started.Unix() + 1; sec < ended.Unix(); sec++ {
			if !have[sec] {
				t.Errorf("%s: trigger %v missing during the rolling deploy", id, time.Unix(sec, 0).UTC())
			}
		}
	}
	if ok, _ := c.Exists(ctx, keyspace.Meta("")).Result(); ok != 0 {
		t.Error("the rolling deploy wrote a layout record")
	}
	if keys := KeysForTest(t, c, "{chronos:p*"); len(keys) != 0 {
		t.Errorf("partition keys in a layout-1 namespace: %v", keys)
	}
	l, err := e.insp.SchedulerLeader(ctx)
	if err != nil || l == nil || l.Epoch <= 41 || !strings.HasPrefix(l.InstanceID, "new-") {
		t.Errorf("leader after the deploy: %+v, %v; want a new instance with an epoch above the old version's", l, err)
	}
}

// On a Redis Cluster of three masters, a partitioned namespace spreads
// its schedules over every master, and every trigger is enqueued once.
func TestTheSchedulerSpreadsOverTheMastersOfACluster(t *testing.T) {
	skipInLayoutOne(t)
	if testing.Short() {
		t.Skip("starts a three-master cluster")
	}
	redistest.Parallel(t)
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3})
	ctx := context.Background()
	logs := &logBuffer{}
	const n = 24
	var ss []*Scheduler
	for i := range 2 {
		id := fmt.Sprintf("c%d", i)
		s := NewScheduler(cl.Client(), SchedulerConfig{InstanceID: id, LeaderTTL: time.Second,
			Logger: slogTo(logs).With("test_instance", id)})
		everySecond(n)(s)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
		ss = append(ss, s)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", logs)
		}
	})
	waitBalanced(t, ss...)
	start := time.Now()
	time.Sleep(4 * time.Second)
	end := time.Now()

	st := ss[0].store
	perMaster := map[string]int{}
	for _, m := range cl.Masters() {
		keys, err := m.Client().Keys(ctx, "*sched:sched-*").Result()
		if err != nil {
			t.Fatal(err)
		}
		perMaster[m.Addr()] = len(keys)
	}
	t.Logf("schedule hashes per master: %v", perMaster)
	if len(perMaster) != 3 {
		t.Fatalf("%d masters", len(perMaster))
	}
	for addr, k := range perMaster {
		if k == 0 {
			t.Errorf("master %s holds no schedule", addr)
		}
	}
	if total := slices.Collect(maps.Values(perMaster)); total[0]+total[1]+total[2] != n {
		t.Errorf("%v schedule hashes, want %d", perMaster, n)
	}
	for i := range n {
		id := fmt.Sprintf("sched-%d", i)
		k := st.QueueKeys(st.PartitionOf(id))
		var secs []int64
		for _, raw := range append(streamOf(t, cl.Client(), k.Stream(DefaultQueue)), delayedOf(t, cl.Client(), k.Delayed(DefaultQueue))...) {
			if raw.ScheduleID == id {
				secs = append(secs, raw.TriggerTime/1000)
			}
		}
		slices.Sort(secs)
		for j := 1; j < len(secs); j++ {
			if secs[j] == secs[j-1] {
				t.Fatalf("%s: trigger %v enqueued twice", id, time.Unix(secs[j], 0))
			}
		}
		have := map[int64]bool{}
		for _, s := range secs {
			have[s] = true
		}
		for sec := start.Unix() + 1; sec < end.Unix(); sec++ {
			if !have[sec] {
				t.Errorf("%s: trigger %v missing", id, time.Unix(sec, 0).UTC())
			}
		}
	}
}
