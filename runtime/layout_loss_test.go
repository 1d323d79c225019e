package chronos

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
)

// A layout-1 namespace (not migrated yet) whose Redis lost its data: its
// scheduler and server run on with the layout they read at start, and
// until one of them writes a layout-1 key again the namespace holds no
// mark of its layout. A scheduler that starts in that window, configured
// with nothing, must not take the namespace for a new one and partition
// it under the running processes' feet (two layouts, each firing the
// schedules it declares: every trigger twice). It finds them by their
// subscriptions to the layout-1 channels, which FLUSHALL leaves, and joins
// layout 1: one leader, every trigger enqueued once, no meta key.
func TestAProcessStartingAfterALayoutOneNamespaceLostItsDataJoinsLayoutOne(t *testing.T) {
	srv := StartTestRedis(t)
	c := srv.NewClient()
	ctx := context.Background()
	// The namespace of an earlier version: its epoch counter.
	if err := c.Set(ctx, leader.KeysFor("").Epoch, 41, 0).Err(); err != nil {
		t.Fatal(err)
	}
	e := &schedEnv{t: t, redis: srv, rdb: c, insp: NewInspector(c), logs: &logBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", e.logs)
		}
	})
	runs := &triggerRuns{runs: map[string][]int64{}}
	mux := NewMux()
	AddHandler(mux, runs.handle)
	server := NewServer(srv.NewClient(), ServerConfig{Logger: slog.New(slog.NewTextHandler(e.logs, nil)).With("test_instance", "server")})
	if err := server.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Shutdown(context.Background()) })
	reg := func(s *Scheduler) { _ = RegisterInterval(s, time.Second, tick{N: 1}, WithScheduleID("sec")) }
	// The default lease (5 s): the leader renews it every 2.5 s and
	// heartbeats every 5 s, so the window after the loss is seconds long.
	oldRec, newRec := &firedBy{}, &firedBy{}
	old := e.start(e.scheduler("old", SchedulerConfig{LeaderTTL: DefaultLeaderTTL, Metrics: oldRec}, reg))
	if !old.store.Layout().IsSingle() || !server.queue.Layout.IsSingle() {
		t.Fatalf("the running processes use %v and %v; want layout 1", old.store.Layout(), server.queue.Layout)
	}
	waitLeader(t, old)
	waitUntil(t, "a run", func() bool { return len(runs.of("sec")) > 0 })

	FlushAllForTest(t, c)
	lost := time.Now()
	nw := e.start(e.scheduler("new", SchedulerConfig{LeaderTTL: DefaultLeaderTTL, Metrics: newRec}, reg))
	t.Logf("new scheduler started %v after the loss, in %v", time.Since(lost).Round(time.Millisecond), nw.store.Layout())
	if !nw.store.Layout().IsSingle() {
		t.Errorf("a scheduler started %v after the loss took the namespace for %v while another runs %v",
			time.Since(lost).Round(time.Millisecond), nw.store.Layout(), old.store.Layout())
	}
	time.Sleep(4 * time.Second)
	end := time.Now()

	if n := c.Exists(ctx, keyspace.Meta("")).Val(); n != 0 {
		t.Error("the namespace has a meta key: it is partitioned under processes of layout 1")
	}
	if keys := KeysForTest(t, c, "{chronos:p*"); len(keys) != 0 {
		t.Errorf("%d partition keys in a layout-1 namespace, e.g. %q", len(keys), keys[0])
	}
	fired := map[string]int{"old": oldRec.reset()["sec"], "new": newRec.reset()["sec"]}
	t.Logf("triggers enqueued after the loss: %v", fired)
	// One leader: the layout-1 server ran each trigger second after the
	// loss once (the second of the loss may run twice: the firings of the
	// heartbeat before a loss may run again, docs/scheduler.md).
	count := map[int64]int{}
	for _, sec := range runs.of("sec") {
		if sec > lost.Unix() {
			count[sec]++
		}
	}
	for sec, n := range count {
		if n > 1 {
			t.Errorf("trigger %v ran %d times", time.Unix(sec, 0).UTC(), n)
		}
	}
	if len(count) < 2 {
		t.Errorf("%d triggers ran after the loss, up to %v", len(count), end)
	}
}

// What resolve cannot see, a process started while the layout-1
// processes' subscriptions were down (Redis restarted: they resubscribe
// when they reconnect), is reported: the namespace has a meta key, as
// that process wrote it, while a scheduler and a server of layout 1 run.
// The layout-1 scheduler's heartbeat finds the meta key and the
// partitioned one's finds the two layout-1 subscribers (the elector's and
// the forwarder's); each logs one ERROR naming the fix, however many
// heartbeats see it. Once the layout-1 processes are stopped, the
// partitioned scheduler logs once that it is over, and a process started
// in their place uses the partitions.
func TestTwoLayoutsInOneNamespaceAreEachLoggedOnceAsAnError(t *testing.T) {
	srv := StartTestRedis(t)
	c := srv.NewClient()
	ctx := context.Background()
	if err := c.Set(ctx, leader.KeysFor("").Epoch, 41, 0).Err(); err != nil {
		t.Fatal(err)
	}
	e := &schedEnv{t: t, redis: srv, rdb: c, insp: NewInspector(c), logs: &logBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", e.logs)
		}
	})
	server := NewServer(srv.NewClient(), ServerConfig{Logger: slog.New(slog.NewTextHandler(e.logs, nil)).With("test_instance", "server")})
	mux := NewMux()
	AddHandler(mux, (&triggerRuns{runs: map[string][]int64{}}).handle)
	if err := server.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Shutdown(context.Background()) })
	reg := func(s *Scheduler) { _ = RegisterInterval(s, time.Second, tick{N: 1}, WithScheduleID("sec")) }
	old := e.start(e.scheduler("old", SchedulerConfig{}, reg)) // heartbeats every second
	if !old.store.Layout().IsSingle() {
		t.Fatalf("old: %v; want layout 1", old.store.Layout())
	}
	waitLeader(t, old)

	FlushAllForTest(t, c)
	// The meta key a process writes that resolves the empty namespace
	// before the layout-1 processes resubscribed.
	if err := c.HSet(ctx, keyspace.Meta(""), "layout", "2", "partitions", "12", "created", time.Now().UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	nw := e.start(e.scheduler("new", SchedulerConfig{}, reg))
	if nw.store.Partitions() != 12 {
		t.Fatalf("new: %v; want the stored 12 partitions", nw.store.Layout())
	}
	waitUntil(t, "both schedulers to see the other layout", func() bool {
		return old.otherLayout.Load() == 1 && nw.otherLayout.Load() == 2
	})
	time.Sleep(3 * time.Second) // three more heartbeats each
	errorsOf := func(instance, what string) int {
		n := 0
		for _, line := range strings.Split(e.logs.String(), "\n") {
			if strings.Contains(line, "level=ERROR") && strings.Contains(line, "test_instance="+instance+" ") && strings.Contains(line, what) {
				n++
			}
		}
		return n
	}
	if n := errorsOf("old", "now has a layout record"); n != 1 {
		t.Errorf("the layout-1 scheduler logged %d errors about the meta key; want 1", n)
	}
	if n := errorsOf("new", "processes of layout 1"); n != 1 {
		t.Errorf("the partitioned scheduler logged %d errors about the layout-1 processes; want 1", n)
	}

	// The fix: the layout-1 processes are restarted.
	if err := old.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := server.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the partitioned scheduler to see them gone", func() bool { return nw.otherLayout.Load() == 0 })
	again := e.start(e.scheduler("old-restarted", SchedulerConfig{}, reg))
	if again.store.Layout().IsSingle() {
		t.Errorf("a restarted layout-1 instance uses %v; want the stored partitions", again.store.Layout())
	}
	time.Sleep(2 * time.Second)
	if n := strings.Count(e.logs.String(), "no process of another layout is seen"); n != 1 {
		t.Errorf("%d reports that the other layout is gone; want 1", n)
	}
	if n := errorsOf("new", "processes of layout 1") + errorsOf("old-restarted", "layout"); n != 1 {
		t.Errorf("%d errors about layouts after the restart; want only the first", n)
	}
}
