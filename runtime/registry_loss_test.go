package chronos

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

// triggerRuns records the trigger times a Server ran, by schedule.
type triggerRuns struct {
	mu   sync.Mutex
	runs map[string][]int64 // schedule → trigger seconds, in run order
}

func (l *triggerRuns) handle(ctx context.Context, t *Task[tick]) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs[t.ScheduleID] = append(l.runs[t.ScheduleID], t.TriggerTime.Unix())
	return nil
}

func (l *triggerRuns) of(id string) []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int64(nil), l.runs[id]...)
}

// When Redis loses its data (FLUSHALL, or a restart without persistence),
// every instance notices at its next heartbeat, puts back the schedules it
// declares as it last saw them (definition, creation time, state, pauses)
// and declares them again; the next leader, with an epoch above every
// earlier one, catches up from where the cluster was. One warning names
// what happened. Only fire times the lost data had already recorded, in
// the last heartbeat before the loss, may run again.
func TestALostRegistryIsPutBackAndCaughtUp(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(e *schedEnv)
	}{
		{"FLUSHALL", func(e *schedEnv) { FlushAllForTest(e.t, e.rdb) }},
		{"restart without persistence", func(e *schedEnv) { e.redis.Kill(); e.redis.Restart() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "FLUSHALL" {
				SkipOnTestCluster(t, "restarts the one redis-server")
			}
			e := newSchedEnv(t)
			ctx := context.Background()
			runs := &triggerRuns{runs: map[string][]int64{}}
			mux := NewMux()
			AddHandler(mux, runs.handle)
			srv := NewServer(e.redis.NewClient(), ServerConfig{Logger: slog.New(slog.DiscardHandler)})
			if err := srv.Start(ctx, mux); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
			reg := func(s *Scheduler) {
				_ = RegisterInterval(s, time.Second, tick{N: 1}, WithScheduleID("sec"))
				_ = RegisterInterval(s, time.Second, tick{N: 2}, WithScheduleID("held"))
			}
			a := e.start(e.scheduler("a", SchedulerConfig{}, reg))
			b := e.start(e.scheduler("b", SchedulerConfig{}, reg))
			waitLeader(t, a, b)
			if err := e.insp.PauseSchedule(ctx, "held", PauseOptions{Note: "keep me paused", Who: "ops"}); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "three runs", func() bool { return len(runs.of("sec")) >= 3 })
			time.Sleep(1500 * time.Millisecond) // the mirrors see the pause
			before, _ := e.insp.Schedule(ctx, "sec")
			lead, _ := e.insp.SchedulerLeader(ctx)
			heldRuns := len(runs.of("held"))

			tc.lose(e)
			lost := time.Now()
			waitUntil(t, "a run of a fire time after the loss", func() bool {
				rs := runs.of("sec")
				return len(rs) > 0 && rs[len(rs)-1] > lost.Unix()
			})
			t.Logf("first run after the loss %v after it", time.Since(lost).Round(time.Millisecond))
			time.Sleep(3 * time.Second)

			if !strings.Contains(e.logs.String(), "registry lost") {
				t.Errorf("no instance said the registry was lost:\n%s", e.logs)
			}
			// The namespace's layout is recorded again, so that a process
			// starting now does not take it for another one (layout 1 has
			// no record: its keys are its marks).
			if l, err := keyspace.NewResolver(e.rdb, "", keyspace.ResolveOptions{ReadOnly: true}).Layout(ctx); err != nil ||
				l.Version() != a.store.Layout().Version() || l.Partitions() != a.store.Partitions() {
				t.Errorf("layout after the loss: %v, %v; want %v", l, err, a.store.Layout())
			}
			if after, _ := e.insp.SchedulerLeader(ctx); after == nil || lead == nil || after.Epoch <= lead.Epoch {
				t.Errorf("leader %+v after the loss, %+v before: want a higher epoch", after, lead)
			}
			info, err := e.insp.Schedule(ctx, "sec")
			if err != nil || !info.Created.Equal(before.Created) {
				t.Errorf("sec after the loss: %+v, %v; want its creation time %v kept", info, err, before.Created)
			}
			held, _ := e.insp.Schedule(ctx, "held")
			if held == nil || held.Paused == nil || held.Paused.Note != "keep me paused" {
				t.Errorf("held after the loss: %+v; want it still paused, with its note", held)
			}
			if n := len(runs.of("held")); n != heldRuns {
				t.Errorf("%d runs of the paused schedule after the loss", n-heldRuns)
			}
			// Every second ran, from the first run to the last (those missed
			// meanwhile are far under MisfireThreshold: caught up late); a
			// second ran twice only in the heartbeat before the loss.
			rs := runs.of("sec")
			count := map[int64]int{}
			lo, hi := rs[0], rs[0]
			for _, sec := range rs {
				count[sec]++
				lo, hi = min(lo, sec), max(hi, sec)
			}
			for sec := lo; sec <= hi; sec++ {
				switch n := count[sec]; {
				case n == 0:
					t.Errorf("fire time %v never ran", time.Unix(sec, 0))
				case n > 1 && (sec < lost.Unix()-2 || sec > lost.Unix()):
					t.Errorf("fire time %v ran %d times, not in the last heartbeat before the loss", time.Unix(sec, 0), n)
				}
			}
		})
	}
}

// A failover to a replica that had none of the data (it restarted without
// persistence as its master died, and never synced again:
// redistest.KillMasterOntoEmptyReplica) is a data loss like FLUSHALL, seen
// through a new server: the failover clients follow Sentinel to a master
// without the registry, the instance records, the leases, the epoch
// counters or the queues. Each instance notices at its first heartbeat
// there and puts the schedules back as it last saw them (its client may
// take up to a second more to get there: after a run of failed dials,
// go-redis's pool answers with the last dial error and redials in the
// background once a second, so the logged delay after the promotion is
// that plus a heartbeat); the next leader,
// with an epoch above every earlier one in its partition, catches up; the
// paused schedule stays paused. What the loss allows, as for FLUSHALL: a
// fire time the dead master had recorded in the last heartbeat before it
// died may run again, and the fire time due as it died may not run at all
// (its task was in the lost queue, fired ahead into the delayed set or not
// yet read by the Server).
func TestAFailoverToAnEmptyReplicaIsHealedLikeALoss(t *testing.T) {
	SkipOnTestCluster(t, "a Sentinel deployment, which make test covers; a cluster's empty replica is a FLUSHALL of its master for these tests")
	d := redistest.StartSentinel(t)
	ctx := context.Background()
	c := d.Client()
	MarkTestLayout(t, c, "")
	insp := NewInspector(c)
	runs := &triggerRuns{runs: map[string][]int64{}}
	mux := NewMux()
	AddHandler(mux, runs.handle)
	sentinelServer(t, d, mux)
	reg := func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{N: 1}, WithScheduleID("sec"))
		_ = RegisterInterval(s, time.Second, tick{N: 2}, WithScheduleID("held"))
	}
	var nodes []*observed
	var ss []*Scheduler
	for _, id := range []string{"a", "b"} {
		o := &observed{log: newCaptureHandler(), metrics: &recorder{}}
		// LeaderTTL 1 s: heartbeats every 333 ms (InstanceTTL 3 s).
		o.s = NewScheduler(d.NewClient(nil), SchedulerConfig{InstanceID: id, LeaderTTL: time.Second, Logger: slog.New(o.log), Metrics: o.metrics})
		reg(o.s)
		if err := o.s.Start(ctx); err != nil {
			t.Fatalf("Start: %v", err)
		}
		t.Cleanup(func() { _ = o.s.Shutdown(context.Background()) })
		nodes, ss = append(nodes, o), append(ss, o.s)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range nodes {
				t.Logf("instance %s:\n%s", n.s.InstanceID(), n.log)
			}
		}
	})
	waitLeader(t, ss...)
	if err := insp.PauseSchedule(ctx, "held", PauseOptions{Note: "keep me paused", Who: "ops"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "three runs", func() bool { return len(runs.of("sec")) >= 3 })
	time.Sleep(1500 * time.Millisecond) // the mirrors see the pause
	before, err := insp.Schedule(ctx, "sec")
	if err != nil {
		t.Fatal(err)
	}
	leadersBefore, err := insp.SchedulerLeaders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	heldRuns := len(runs.of("held"))

	killed := time.Now()
	newMaster := d.KillMasterOntoEmptyReplica()
	promoted := time.Now()
	waitUntil(t, "a run of a fire time after the loss", func() bool {
		rs := runs.of("sec")
		return len(rs) > 0 && rs[len(rs)-1] > killed.Unix()
	})
	firstRun := time.Now()
	time.Sleep(3 * time.Second) // more heartbeats: none may report the loss again

	// One report per instance: the registry-lost WARN and RegistryLost
	// from each that put schedules back, or, from one that found them put
	// back already, that Redis lost its data; never that it was not heard
	// from (the outage was shorter than twice InstanceTTL).
	var reseeders int
	var noticed []string // how long after the promotion each instance reported the loss
	for _, n := range nodes {
		id := n.s.InstanceID()
		for _, msg := range []string{"registry lost", "another instance had put the schedules back already"} {
			if at, ok := n.log.first(slog.LevelWarn, msg); ok {
				noticed = append(noticed, fmt.Sprintf("%s %v", id, at.Sub(promoted).Round(time.Millisecond)))
			}
		}
		warns, metrics := n.log.count(slog.LevelWarn, "registry lost"), n.registryLost()
		other := n.log.count(slog.LevelWarn, "Redis lost its data, and another instance had put the schedules back already")
		switch {
		case warns != metrics:
			t.Errorf("%s logged %d registry-lost WARNs and recorded RegistryLost %d times", id, warns, metrics)
		case warns+other != 1:
			t.Errorf("%s said %d times that the registry was lost and %d times that another instance put it back; want one of them", id, warns, other)
		}
		if n.log.count(slog.LevelWarn, "not heard from") != 0 {
			t.Errorf("%s blames the failover on not being heard from", id)
		}
		reseeders += warns
	}
	if reseeders < 1 {
		t.Errorf("no instance reported the registry lost")
	}
	// The namespace's layout is recorded again on the new master.
	if l, err := keyspace.NewResolver(c, "", keyspace.ResolveOptions{ReadOnly: true}).Layout(ctx); err != nil ||
		l.Version() != ss[0].store.Layout().Version() || l.Partitions() != ss[0].store.Partitions() {
		t.Errorf("layout after the loss: %v, %v; want %v", l, err, ss[0].store.Layout())
	}
	// No epoch is issued twice: every partition's term on the new master
	// is above the last epoch the dead master had issued in it.
	var leadersAfter []*LeaderInfo
	waitUntil(t, "a leader of every partition on the new master", func() bool {
		leadersAfter, err = insp.SchedulerLeaders(ctx)
		if err != nil {
			return false
		}
		for _, l := range leadersAfter {
			if l.InstanceID == "" {
				return false
			}
		}
		return true
	})
	secPart := ss[0].store.PartitionOf("sec")
	for p, l := range leadersAfter {
		if l.Epoch <= leadersBefore[p].LastEpoch {
			t.Errorf("partition %d: leader %+v after the loss, last epoch %d before it: want a higher epoch", p, l, leadersBefore[p].LastEpoch)
		}
	}
	info, err := insp.Schedule(ctx, "sec")
	if err != nil || !info.Created.Equal(before.Created) {
		t.Errorf("sec after the loss: %+v, %v; want its creation time %v kept", info, err, before.Created)
	}
	held, _ := insp.Schedule(ctx, "held")
	if held == nil || held.Paused == nil || held.Paused.Note != "keep me paused" {
		t.Errorf("held after the loss: %+v; want it still paused, with its note", held)
	}
	if n := len(runs.of("held")); n != heldRuns {
		t.Errorf("%d runs of the paused schedule after the loss", n-heldRuns)
	}
	// Every second ran (those missed during the failover are far under
	// MisfireThreshold: caught up late), but the one due as the master
	// died; a second ran twice only in the heartbeat before it died.
	rs := runs.of("sec")
	count := map[int64]int{}
	lo, hi := rs[0], rs[0]
	for _, sec := range rs {
		count[sec]++
		lo, hi = min(lo, sec), max(hi, sec)
	}
	k := killed.Unix()
	var missing, twice []int64
	for sec := lo; sec <= hi; sec++ {
		switch n := count[sec]; {
		case n == 0:
			missing = append(missing, sec-k)
			if sec < k || sec > k+1 {
				t.Errorf("fire time %v never ran, not the one due as the master died", time.Unix(sec, 0))
			}
		case n > 1:
			twice = append(twice, sec-k)
			if sec < k-2 || sec > k {
				t.Errorf("fire time %v ran %d times, not in the last heartbeat before the master died", time.Unix(sec, 0), n)
			}
		}
	}
	t.Logf("failover onto the empty replica %s took %v; first run of a fire time after it %v after the kill (%v after the promotion); "+
		"loss reported after the promotion by %v; partition %d epoch %d before, %d after; %d instance(s) reseeded; fire times (s from the kill) never run %v, run twice %v; %d runs",
		newMaster, promoted.Sub(killed).Round(time.Millisecond), firstRun.Sub(killed).Round(time.Millisecond), firstRun.Sub(promoted).Round(time.Millisecond),
		noticed, secPart, leadersBefore[secPart].LastEpoch, leadersAfter[secPart].Epoch, reseeders, missing, twice, len(rs))
}
