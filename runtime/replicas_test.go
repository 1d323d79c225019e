package chronos

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
)

// waitCalls is how many WAIT commands the server at addr has run.
func waitCalls(t *testing.T, addr string) int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "cmdstat_wait:calls="); ok {
			n, _ := strconv.Atoi(v[:strings.IndexByte(v, ',')])
			return n
		}
	}
	return 0
}

// With Replicas set, the leader waits for its replica after the lease
// writes and after every batch of firings, so a promoted replica holds the
// triggers' dedup keys.
func TestReplicasMakesTheLeaderWaitForItsReplicaAfterFirings(t *testing.T) {
	SkipOnTestCluster(t, "a Sentinel deployment, which make test covers; cluster failovers are in cluster_failover_test.go")
	d := redistest.StartSentinel(t)
	master := d.MasterAddr()
	before := waitCalls(t, master)
	s := NewScheduler(d.NewClient(nil), SchedulerConfig{
		InstanceID: "replicated",
		LeaderTTL:  10 * time.Second, // a renewal every 5 s: the WAITs below are the firings'
		Replicas:   1,
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err := RegisterInterval(s, time.Second, tick{}, WithScheduleID("often")); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	insp := NewInspector(d.Client())
	var fired int
	waitUntil(t, "three firings", func() bool {
		h, err := insp.ScheduleHistory(context.Background(), "often", 10)
		fired = len(h)
		return err == nil && fired >= 3
	})
	// One WAIT for the lease acquire, one per firing batch (each firing
	// here is a batch of its own: they are a second apart).
	if got := waitCalls(t, master) - before; got < fired+1 {
		t.Fatalf("%d WAIT calls for %d firings and a lease acquire", got, fired)
	}
}

// On a cluster, WAIT counts the replicas of the node it runs on for the
// writes of its own connection: with Replicas, each partition's lease
// scripts and firings go, with their WAIT, to the master that serves the
// partition, on its own connection. Every master then waits for its
// replica, and every schedule fires.
func TestReplicasWaitsOnTheMasterOfEachPartitionOfACluster(t *testing.T) {
	skipInLayoutOne(t)
	if testing.Short() {
		t.Skip("a three-master cluster")
	}
	redistest.Parallel(t)
	cl := testClusters.Get(t)
	ctx := context.Background()
	masters := cl.Masters()
	before := map[string]int{}
	for _, m := range masters {
		before[m.Addr()] = waitCalls(t, m.Addr())
	}
	logs := &logBuffer{}
	s := NewScheduler(cl.NewClient(nil), SchedulerConfig{
		InstanceID: "replicated", LeaderTTL: 10 * time.Second, Replicas: 1, Logger: slogTo(logs),
	})
	everySecond(24)(s)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Shutdown(context.Background())
		if t.Failed() {
			t.Logf("log:\n%s", logs)
		}
	})
	insp := NewInspector(cl.NewClient(nil))
	waitUntil(t, "every schedule to fire twice", func() bool {
		for i := range 24 {
			h, err := insp.ScheduleHistory(ctx, fmt.Sprintf("sched-%d", i), 10)
			if err != nil || len(h) < 2 {
				return false
			}
		}
		return true
	})
	for _, m := range masters {
		got := waitCalls(t, m.Addr()) - before[m.Addr()]
		t.Logf("master %s: %d WAIT calls", m.Addr(), got)
		// Four partitions each: an acquire and at least two firings.
		if got < 12 {
			t.Errorf("master %s ran %d WAITs; want one per lease acquire and firing of its four partitions", m.Addr(), got)
		}
	}
	// A write is never sent to a node that does not serve its partition.
	// A refusal for want of replicas may be logged: on a loaded machine a
	// replica's acknowledgement can lag past replicaMaxLag, and the
	// firing is then refused and retried, as designed.
	if strings.Contains(logs.String(), "MOVED") {
		t.Error("the log says MOVED")
	}
}

// With Replicas set the leader fires each trigger at its time: only the
// fire script checks the replicas, not the forwarder's move of a task
// fired ahead (SchedulerConfig.FireAhead).
func TestReplicasFiresAtTheFireTimeNotAhead(t *testing.T) {
	for _, ahead := range []time.Duration{0, time.Second, -1} {
		s := NewScheduler(nil, SchedulerConfig{Replicas: 1, FireAhead: ahead})
		if s.cfg.FireAhead != 0 {
			t.Errorf("FireAhead %v with Replicas 1 became %v, want 0", ahead, s.cfg.FireAhead)
		}
	}
	if s := NewScheduler(nil, SchedulerConfig{}); s.cfg.FireAhead != DefaultFireAhead {
		t.Errorf("default FireAhead = %v, want %v", s.cfg.FireAhead, DefaultFireAhead)
	}
}
