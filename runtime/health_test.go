package chronos

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// doomed is a task whose handler always fails.
type doomed struct{}

func (doomed) Kind() string { return "doomed" }

// worker starts a Server on e's Redis with mux, stopped when the test ends.
func (e *schedEnv) worker(mux *Mux) *Server {
	e.t.Helper()
	srv := NewServer(e.redis.NewClient(), ServerConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := srv.Start(context.Background(), mux); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv
}

// health returns the health of schedule id now.
func (e *schedEnv) health(id string) *Health {
	e.t.Helper()
	hs, err := e.insp.ScheduleHealth(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	if hs[id] == nil {
		e.t.Fatalf("no health for %q", id)
	}
	return hs[id]
}

// waitState waits until schedule id is in state and returns its health.
func (e *schedEnv) waitState(id string, state HealthState) *Health {
	e.t.Helper()
	var h *Health
	waitUntil(e.t, id+" "+string(state), func() bool { h = e.health(id); return h.State == state })
	return h
}

func TestOnlyLateAndFailingAreProblems(t *testing.T) {
	for st, want := range map[HealthState]bool{HealthOK: false, HealthLate: true, HealthFailing: true, HealthPaused: false, HealthRetired: false} {
		if st.Problem() != want {
			t.Errorf("%s.Problem() = %v", st, !want)
		}
	}
}

func TestHealthThresholdsAreScheduleOptions(t *testing.T) {
	e := newSchedEnv(t)
	s := e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		if err := RegisterInterval(s, time.Hour, tick{}, WithScheduleID("tuned"), WithLateAfter(5*time.Minute), WithFailingAfter(1)); err != nil {
			t.Fatal(err)
		}
		if err := RegisterInterval(s, time.Hour, tick{}, WithScheduleID("plain")); err != nil {
			t.Fatal(err)
		}
		g := NewGroup(s, "group", CronTrigger("0 0 3 * * ?"), WithLateAfter(time.Hour))
		if err := AddJob(g, "one", tick{}); err != nil {
			t.Fatal(err)
		}
		if err := RegisterInterval(s, time.Hour, tick{}, WithScheduleID("bad"), WithLateAfter(-time.Second)); err == nil {
			t.Error("WithLateAfter(-1s) accepted")
		}
		if err := RegisterInterval(s, time.Hour, tick{}, WithScheduleID("bad"), WithFailingAfter(-1)); err == nil {
			t.Error("WithFailingAfter(-1) accepted")
		}
	})
	e.start(s)
	for id, want := range map[string][2]any{
		"tuned": {5 * time.Minute, 1},
		"plain": {DefaultLateAfter, DefaultFailingAfter},
		"group": {time.Hour, DefaultFailingAfter},
	} {
		if h := e.health(id); h.LateAfter != want[0] || h.FailingAfter != want[1] {
			t.Errorf("%s: late after %v, failing after %d; want %v, %d", id, h.LateAfter, h.FailingAfter, want[0], want[1])
		}
	}
}

// The first case: the scheduler stops, so nothing is enqueued any
// more, and the schedule turns late once LateAfter has passed.
func TestARunningScheduleIsOKAndLateOnceItsSchedulerStops(t *testing.T) {
	e := newSchedEnv(t)
	mux := NewMux()
	AddHandler(mux, func(ctx context.Context, t *Task[tick]) error { return nil })
	e.worker(mux)
	s := e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		if err := RegisterInterval(s, time.Second, tick{}, WithScheduleID("tick"), WithLateAfter(2*time.Second)); err != nil {
			t.Fatal(err)
		}
	}))
	waitUntil(t, "a success", func() bool { h := e.health("tick"); return h.State == HealthOK && !h.LastSuccess.IsZero() })
	if h := e.health("tick"); h.LastOutcome != "success" || h.Lateness > 2*time.Second {
		t.Fatalf("running: %+v", h)
	}

	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	h := e.waitState("tick", HealthLate)
	if waited := time.Since(stopped); waited < 2*time.Second {
		t.Errorf("late %v after the scheduler stopped, before LateAfter", waited)
	}
	if !strings.Contains(h.Reason, "nothing was enqueued") || h.Lateness <= 2*time.Second || h.Since.After(stopped.Add(time.Second)) {
		t.Fatalf("late: %+v", h)
	}
}

// The second case: a handler that fails.
func TestAScheduleWhoseHandlerKeepsFailingIsFailing(t *testing.T) {
	e := newSchedEnv(t)
	mux := NewMux()
	AddHandler(mux, func(ctx context.Context, t *Task[doomed]) error { return errors.New("disk full") })
	e.worker(mux)
	e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		if err := RegisterInterval(s, time.Second, doomed{}, WithScheduleID("doomed"), WithMaxRetry(0), WithFailingAfter(2)); err != nil {
			t.Fatal(err)
		}
	}))
	h := e.waitState("doomed", HealthFailing)
	if h.Failures < 2 || h.LastOutcome != "dead" || !h.LastSuccess.IsZero() || h.Since.IsZero() ||
		!strings.Contains(h.Reason, "runs of doomed failed") || !strings.Contains(h.Reason, "disk full") {
		t.Fatalf("failing: %+v", h)
	}
}

// Isolated schedules: each instance fires them; the schedule is late when
// none did for LateAfter.
func TestAnIsolatedScheduleIsLateOnceItsLastInstanceStops(t *testing.T) {
	e := newSchedEnv(t)
	n := e.isoNode("iso-a", SchedulerConfig{}, func(s *Scheduler) {
		if err := RegisterInterval(s, time.Second, tick{}, WithScheduleID("local-logs"), WithIsolated(true), WithLateAfter(2*time.Second)); err != nil {
			t.Fatal(err)
		}
	})
	waitUntil(t, "a local success", func() bool { h := e.health("local-logs"); return h.State == HealthOK && !h.LastSuccess.IsZero() })
	if err := n.sched.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h := e.waitState("local-logs", HealthLate); !strings.Contains(h.Reason, "no instance fired it") {
		t.Fatalf("late: %+v", h)
	}
}

// A trigger with no fire times left is never late.
func TestACompleteScheduleIsNeverLate(t *testing.T) {
	e := newSchedEnv(t)
	mux := NewMux()
	AddHandler(mux, func(ctx context.Context, t *Task[tick]) error { return nil })
	e.worker(mux)
	e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		if err := RegisterSimple(s, Simple{Start: time.Now().Add(300 * time.Millisecond), Repeat: 0}, tick{}, WithScheduleID("once")); err != nil {
			t.Fatal(err)
		}
	}))
	waitUntil(t, "the one fire", func() bool {
		info, err := e.insp.Schedule(context.Background(), "once")
		return err == nil && info.Complete
	})
	hs, err := e.insp.scheduleHealth(context.Background(), time.Now().Add(24*time.Hour), []string{"once"})
	if err != nil {
		t.Fatal(err)
	}
	if h := hs["once"]; h.State != HealthOK || h.Reason != "the trigger is complete" || h.Lateness != 0 {
		t.Fatalf("a day after its only fire: %+v", h)
	}
}
