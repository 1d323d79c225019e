package chronos

import (
	"context"
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

// Replicas counts one primary's replicas; a cluster client has many
// primaries, so Start refuses the combination rather than wait in vain.
func TestReplicasIsRefusedWithAClusterClient(t *testing.T) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer c.Close()
	s := NewScheduler(c, SchedulerConfig{Replicas: 1, Logger: slog.New(slog.DiscardHandler)})
	err := s.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Replicas") {
		t.Fatalf("Start = %v, want an error about Replicas", err)
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
