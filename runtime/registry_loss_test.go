package chronos

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

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
