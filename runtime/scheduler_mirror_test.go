package chronos

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// hashReads counts the reads of a schedule's hash a client sends
// (HGETALL, HMGET): the mirror's reads of schedules. key is the hash.
type hashReads struct {
	n   atomic.Int64
	key atomic.Value // string
}

func (h *hashReads) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *hashReads) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		h.count(c)
		return next(ctx, c)
	}
}

func (h *hashReads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cs []redis.Cmder) error {
		for _, c := range cs {
			h.count(c)
		}
		return next(ctx, cs)
	}
}

func (h *hashReads) count(c redis.Cmder) {
	if name := c.Name(); strings.EqualFold(name, "hgetall") || strings.EqualFold(name, "hmget") {
		if a := c.Args(); len(a) > 1 && a[1] == h.key.Load() {
			h.n.Add(1)
		}
	}
}

// Every instance remembers the schedules it declares as the registry holds
// them, to put them back if Redis loses its data. The leader writes its
// own firings into that memory as they happen, so it reads nothing back
// for them; what others change (an operator's pause) it reads at its next
// heartbeat, and so does every other instance, for firings too.
func TestTheLeaderRemembersItsFiringsWithoutReadingThemBack(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	reg := func(s *Scheduler) { _ = RegisterInterval(s, time.Second, tick{N: 1}, WithScheduleID("sec")) }
	start := func(id string) (*Scheduler, *hashReads) {
		reads := &hashReads{}
		c := e.redis.NewClient()
		c.AddHook(reads)
		s := NewScheduler(c, SchedulerConfig{InstanceID: id, LeaderTTL: time.Second, Logger: e.scheduler("x", SchedulerConfig{}, nil).log.With("test_instance", id)})
		reg(s)
		return e.start(s), reads
	}
	a, readsA := start("a")
	waitLeader(t, a)
	b, readsB := start("b")
	// The partitions are shared (all with a single partition); the
	// leader of sec's is the one that fires it.
	waitBalanced(t, a, b)
	leader, other, reads, otherReads := a, b, readsA, readsB
	if b.leads("sec") {
		leader, other, reads, otherReads = b, a, readsB, readsA
	}
	readsA.key.Store(a.store.SchedKey("sec"))
	readsB.key.Store(b.store.SchedKey("sec"))

	waitUntil(t, "two firings", func() bool {
		sc, err := other.store.Get(ctx, "sec")
		return err == nil && sc.State.TimesTriggered >= 2
	})
	time.Sleep(1200 * time.Millisecond) // a heartbeat of each, after the first firings
	r0, o0 := reads.n.Load(), otherReads.n.Load()
	time.Sleep(3 * time.Second) // three firings and three heartbeats
	if n := reads.n.Load() - r0; n != 0 {
		t.Errorf("the leader read %d schedule hashes back in 3s of firing one schedule; want 0", n)
	}
	if otherReads.n.Load() == o0 {
		t.Error("the other instance read nothing back in 3s of firings: the count does not see the memory's reads")
	}
	if !leader.leads("sec") {
		t.Fatal("sec changed leaders meanwhile; the test did not show what it means to")
	}
	stored, err := other.store.Get(ctx, "sec")
	if err != nil {
		t.Fatal(err)
	}
	scores, err := leader.store.ChangeScores(ctx, []string{"sec"})
	if err != nil {
		t.Fatal(err)
	}
	mine, asOf := mirroredOf(leader, "sec")
	if mine.State.TimesTriggered < stored.State.TimesTriggered || asOf < scores["sec"] {
		t.Fatalf("leader's memory: %d firings as of change %d; registry: %d firings, change %d",
			mine.State.TimesTriggered, asOf, stored.State.TimesTriggered, scores["sec"])
	}

	if err := e.insp.PauseSchedule(ctx, "sec", PauseOptions{Note: "ops", Who: "alice"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "both memories to hold the pause", func() bool {
		ma, _ := mirroredOf(leader, "sec")
		mb, _ := mirroredOf(other, "sec")
		return ma.State.Pause != nil && mb.State.Pause != nil
	})
	if mb, _ := mirroredOf(other, "sec"); mb.State.TimesTriggered < stored.State.TimesTriggered {
		t.Fatalf("the other instance remembers %d firings; the registry had %d", mb.State.TimesTriggered, stored.State.TimesTriggered)
	}
}

// mirroredOf is what s remembers of schedule id, as a registry entry.
func mirroredOf(s *Scheduler, id string) (schedstore.Schedule, int64) {
	s.mirror.mu.Lock()
	defer s.mirror.mu.Unlock()
	i, _ := s.declared(id)
	return s.mirror.schedule(i, s.own[i].definition(), s.own[i].hash, s.self.Declarer()), s.mirror.entries[i].asOf
}

// changeReads counts the entries of the changed index a client reads.
type changeReads struct{ n atomic.Int64 }

func (h *changeReads) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *changeReads) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *changeReads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cs []redis.Cmder) error {
		err := next(ctx, cs)
		for _, c := range cs {
			if z, ok := c.(*redis.ZSliceCmd); ok && strings.EqualFold(c.Name(), "zrangebyscore") {
				h.n.Add(int64(len(z.Val())))
			}
		}
		return err
	}
}

// The mirror reads a change once, not at every heartbeat while no newer
// change comes: after a million schedules were claimed at once, as
// instances start, each heartbeat of each instance read them all again
// (a ZRANGEBYSCORE of a whole partition's changes, 12 per heartbeat) until
// the first firings.
func TestTheMirrorDoesNotReadOldChangesAgain(t *testing.T) {
	e := newSchedEnv(t)
	reg := func(s *Scheduler) {
		for i := range 3 {
			_ = RegisterInterval(s, time.Hour, tick{N: i}, WithScheduleID(fmt.Sprintf("hourly-%d", i)))
		}
	}
	s := e.start(e.scheduler("a", SchedulerConfig{InstanceTTL: time.Minute}, reg)) // heartbeats every 20 s: the test looks itself
	reads := &changeReads{}
	s.client.AddHook(reads)
	ctx := context.Background()
	now := time.Now().Add(time.Minute) // the registration's changes are a minute old
	if err := s.mirror.update(ctx, s.store, s.own, s.declared, now); err != nil {
		t.Fatal(err)
	}
	first := reads.n.Load()
	for k := range 3 {
		if err := s.mirror.update(ctx, s.store, s.own, s.declared, now.Add(time.Duration(k+1)*5*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if again := reads.n.Load() - first; again != 0 {
		t.Fatalf("three more looks read %d changes again (the first read %d)", again, first)
	}
}
