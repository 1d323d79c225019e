package chronos

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// What FireAhead, on by default, changes for users (README, docs/queue.md
// and docs/scheduler.md say it): each is checked here against a real
// redis-server.

// ranTriggers records the trigger times a Server ran, for one schedule.
type ranTriggers struct {
	mu   sync.Mutex
	runs []*Task[tick]
}

func (r *ranTriggers) handle(ctx context.Context, t *Task[tick]) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, t)
	return nil
}

func (r *ranTriggers) ran(trigger time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.runs {
		if t.TriggerTime.Equal(trigger) {
			return true
		}
	}
	return false
}

func (r *ranTriggers) all() []*Task[tick] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Task[tick](nil), r.runs...)
}

// startRunner starts a Server of the default queue that records what it ran.
func (e *schedEnv) startRunner() *ranTriggers {
	e.t.Helper()
	r := &ranTriggers{}
	mux := NewMux()
	AddHandler(mux, r.handle)
	srv := NewServer(e.redis.NewClient(), ServerConfig{Logger: slog.New(slog.DiscardHandler)})
	if err := srv.Start(context.Background(), mux); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return r
}

// delayedTriggers returns the trigger times of the tasks in the default
// queue's delayed set.
func (e *schedEnv) delayedTriggers() []time.Time {
	e.t.Helper()
	var ms []string
	for _, k := range queueKeys(e.t, e.rdb) {
		part, err := e.rdb.ZRange(context.Background(), k.Delayed(DefaultQueue), 0, -1).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			e.t.Fatal(err)
		}
		ms = append(ms, part...)
	}
	var out []time.Time
	for _, raw := range ms {
		m, err := rdb.Decode([]byte(raw))
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, time.UnixMilli(m.TriggerTime))
	}
	return out
}

// A pause made within FireAhead before a fire time does not stop that
// firing: the task is in the delayed set already, and runs at its time.
// The firings after it are stopped.
func TestAPauseWithinFireAheadOfAFireTimeDoesNotStopThatFiring(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	runs := e.startRunner()
	s := e.start(e.scheduler("a", SchedulerConfig{FireAhead: 2 * time.Second}, func(s *Scheduler) {
		_ = RegisterInterval(s, 3*time.Second, tick{}, WithScheduleID("every3s"))
	}))
	waitLeader(t, s)
	var ahead time.Time // a trigger fired ahead, still to come
	waitUntil(t, "a trigger fired ahead", func() bool {
		for _, tr := range e.delayedTriggers() {
			if time.Until(tr) > 500*time.Millisecond {
				ahead = tr
				return true
			}
		}
		return false
	})
	if err := e.insp.PauseSchedule(ctx, "every3s", PauseOptions{Note: "too late for the next one"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the trigger fired ahead to run", func() bool { return runs.ran(ahead) })
	// The next fire time, ahead+3s, would be fired at ahead+1s: the pause
	// stops it.
	time.Sleep(time.Until(ahead.Add(3*time.Second + 500*time.Millisecond)))
	for _, r := range runs.all() {
		if r.TriggerTime.After(ahead) {
			t.Fatalf("trigger %v ran after the pause", r.TriggerTime)
		}
	}
}

// A trigger fired ahead waits in the delayed set until a Server of its
// queue forwards it: without one it never reaches the stream. Its
// Metrics.TriggerFired reports a lag of 0, since it was enqueued early.
func TestATriggerFiredAheadNeedsAServersForwarder(t *testing.T) {
	e := newSchedEnv(t)
	m := &recorder{}
	s := e.start(e.scheduler("a", SchedulerConfig{Metrics: m}, func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{}, WithScheduleID("sec"))
	}))
	waitLeader(t, s)
	var overdue time.Time
	waitUntil(t, "a trigger left in the delayed set past its time", func() bool {
		for _, tr := range e.delayedTriggers() {
			if time.Since(tr) > time.Second {
				overdue = tr
				return true
			}
		}
		return false
	})
	runs := e.startRunner()
	waitUntil(t, "the forwarder to deliver it", func() bool { return runs.ran(overdue) })

	m.mu.Lock()
	defer m.mu.Unlock()
	var ahead int
	for _, f := range m.fired {
		if f.Source == "trigger" && f.Result == TriggerEnqueued {
			ahead++
			if f.Lag != 0 {
				t.Errorf("trigger %v fired ahead reported lag %v, want 0", f.Trigger, f.Lag)
			}
		}
	}
	if ahead == 0 {
		t.Fatalf("no trigger fired ahead among %+v", m.fired)
	}
}

// FireAhead: -1 fires at the fire time, into the stream: no task waits in
// the delayed set, and none is enqueued before its trigger time.
func TestFireAheadMinusOneFiresAtTheFireTime(t *testing.T) {
	e := newSchedEnv(t)
	runs := e.startRunner()
	s := e.start(e.scheduler("a", SchedulerConfig{FireAhead: -1}, func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{}, WithScheduleID("sec"))
	}))
	waitLeader(t, s)
	deadline := time.Now().Add(20 * time.Second)
	for len(runs.all()) < 3 {
		if d := e.delayedTriggers(); len(d) > 0 {
			t.Fatalf("with FireAhead -1, triggers %v waited in the delayed set", d)
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for three runs")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, r := range runs.all() {
		if r.EnqueuedAt.Before(r.TriggerTime) {
			t.Errorf("trigger %v enqueued at %v, before its time", r.TriggerTime, r.EnqueuedAt)
		}
	}
}
