package chronos

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// isoNode is one instance for the isolated-schedule tests: a Scheduler and
// the Server that runs its isolated schedules, whose handler counts the
// runs it did.
type isoNode struct {
	name  string
	sched *Scheduler
	srv   *Server
	logs  *logBuffer

	mu   sync.Mutex
	runs []*Task[tick]
	fail int // the next fail runs return an error
}

func (n *isoNode) handle(ctx context.Context, t *Task[tick]) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.runs = append(n.runs, t)
	if n.fail > 0 {
		n.fail--
		return errors.New("local failure")
	}
	return nil
}

func (n *isoNode) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.runs)
}

// isoNode starts an instance named name whose scheduler registers reg and
// whose server runs its isolated schedules.
func (e *schedEnv) isoNode(name string, cfg SchedulerConfig, reg func(*Scheduler)) *isoNode {
	e.t.Helper()
	n := &isoNode{name: name, logs: &logBuffer{}}
	mux := NewMux()
	AddHandler(mux, n.handle)
	n.srv = NewServer(e.redis.NewClient(), ServerConfig{
		Logger: slog.New(slog.NewTextHandler(n.logs, nil)), Backoff: func(int) time.Duration { return 100 * time.Millisecond },
	})
	if err := n.srv.Start(context.Background(), mux); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = n.srv.Shutdown(context.Background()) })
	cfg.Server = n.srv
	n.sched = e.start(e.scheduler(name, cfg, reg))
	return n
}

func everySecondIsolated(t *testing.T) func(*Scheduler) {
	return func(s *Scheduler) {
		if err := RegisterInterval(s, time.Second, tick{}, WithScheduleID("local-logs"), WithIsolated(true)); err != nil {
			t.Fatal(err)
		}
	}
}

// Every instance runs its isolated schedule itself, in process, and never
// another instance's: two Schedulers in one process keep their work apart.
func TestIsolatedSchedulesRunInProcessOnEveryInstance(t *testing.T) {
	e := newSchedEnv(t)
	a := e.isoNode("iso-a", SchedulerConfig{}, everySecondIsolated(t))
	b := e.isoNode("iso-b", SchedulerConfig{}, everySecondIsolated(t))
	for _, n := range []*isoNode{a, b} {
		waitUntil(t, "two runs on "+n.name, func() bool { return n.count() >= 2 })
	}
	ctx := context.Background()
	runs, err := e.insp.ListRuns(ctx, "tick", 100)
	if err != nil {
		t.Fatal(err)
	}
	byInstance := map[string]int{}
	for _, r := range runs {
		if r.Queue != LocalQueue || r.ScheduleID != "local-logs" || r.Status != "success" {
			t.Errorf("run record %+v: want a local success of local-logs", r)
		}
		byInstance[r.Instance]++
	}
	if byInstance["iso-a"] == 0 || byInstance["iso-b"] == 0 || len(byInstance) != 2 {
		t.Errorf("run records by instance: %v", byInstance)
	}
	for _, n := range []*isoNode{a, b} {
		n.mu.Lock()
		for _, r := range n.runs {
			if r.Queue != LocalQueue || r.ScheduleID != "local-logs" {
				t.Errorf("%s ran %+v", n.name, r)
			}
		}
		n.mu.Unlock()
	}
	// Nothing of it went through a Redis queue.
	if n := len(e.tasks(DefaultQueue)); n != 0 {
		t.Errorf("%d isolated tasks in the default queue", n)
	}
	hist, err := e.insp.ScheduleHistory(ctx, "local-logs", 100)
	if err != nil || len(hist) == 0 {
		t.Fatalf("history: %d records, %v", len(hist), err)
	}
	info, err := e.insp.Schedule(ctx, "local-logs")
	if err != nil {
		t.Fatal(err)
	}
	if info.LastFired.IsZero() || info.LastInstance == "" || !info.NextFire.After(time.Now().Add(-time.Second)) || info.Jobs[0].Queue != LocalQueue {
		t.Errorf("Inspector shows %+v (job %+v): want the last firing, its instance, a next fire from now, queue local", info, info.Jobs[0])
	}
}

func TestAnIsolatedScheduleNeedsAServer(t *testing.T) {
	e := newSchedEnv(t)
	s := e.scheduler("no-server", SchedulerConfig{}, everySecondIsolated(t))
	err := s.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "SchedulerConfig.Server") {
		t.Fatalf("Start = %v, want an error naming SchedulerConfig.Server", err)
	}
	srv := NewServer(e.rdb, ServerConfig{Namespace: "other"})
	s = e.scheduler("wrong-ns", SchedulerConfig{Server: srv}, everySecondIsolated(t))
	if err := s.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "namespace") {
		t.Fatalf("Start with a server of another namespace = %v", err)
	}
}

func TestAServerRefusesTheLocalQueueName(t *testing.T) {
	e := newSchedEnv(t)
	srv := NewServer(e.rdb, ServerConfig{Queues: map[string]int{LocalQueue: 1}})
	if err := srv.Start(context.Background(), NewMux()); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("Start serving %q = %v", LocalQueue, err)
	}
}

// Isolated work is local: it goes on while Redis is down, and the run
// records it could not write then are written once Redis is back.
func TestIsolatedWorkRunsWhileRedisIsDown(t *testing.T) {
	SkipOnTestCluster(t, "kills the one redis-server")
	e := newSchedEnv(t)
	a := e.isoNode("iso-a", SchedulerConfig{}, everySecondIsolated(t))
	waitUntil(t, "a first run", func() bool { return a.count() >= 1 })
	e.redis.Kill()
	down := a.count()
	waitUntil(t, "three runs with Redis down", func() bool { return a.count() >= down+3 })
	ranWhileDown := a.count() - down
	e.redis.Restart() // no persistence: Redis comes back empty
	waitUntil(t, "the run records of the outage written", func() bool {
		runs, err := e.insp.ListRuns(context.Background(), "tick", 1000)
		return err == nil && len(runs) >= ranWhileDown
	})
	if !strings.Contains(a.logs.String(), "Redis reachable again") {
		t.Errorf("server log does not say the delayed run records were written:\n%s", a.logs)
	}
}

// A pause made by an operator stops the isolated schedule on every
// instance; a resume starts it again.
func TestPausingAnIsolatedScheduleStopsItEverywhere(t *testing.T) {
	e := newSchedEnv(t)
	a := e.isoNode("iso-a", SchedulerConfig{}, everySecondIsolated(t))
	b := e.isoNode("iso-b", SchedulerConfig{}, everySecondIsolated(t))
	waitUntil(t, "runs on both", func() bool { return a.count() >= 1 && b.count() >= 1 })
	ctx := context.Background()
	if err := e.insp.PauseSchedule(ctx, "local-logs", PauseOptions{Note: "maintenance"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "both instances to log the pause", func() bool {
		return strings.Contains(e.logs.String(), "test_instance=iso-a") && strings.Count(e.logs.String(), "isolated schedule paused") == 2
	})
	ca, cb := a.count(), b.count()
	time.Sleep(2500 * time.Millisecond)
	if a.count() > ca+1 || b.count() > cb+1 { // one firing may have been handed over as the pause was read
		t.Fatalf("runs while paused: %d on a, %d on b", a.count()-ca, b.count()-cb)
	}
	if _, err := e.insp.ResumeSchedule(ctx, "local-logs", ""); err != nil {
		t.Fatal(err)
	}
	ca, cb = a.count(), b.count()
	waitUntil(t, "runs after the resume", func() bool { return a.count() > ca && b.count() > cb })
}

// Trigger-now runs an isolated schedule once on every live instance;
// backfill is refused, with the reason.
func TestTriggerNowRunsAnIsolatedScheduleOnEveryInstance(t *testing.T) {
	e := newSchedEnv(t)
	hourly := func(s *Scheduler) {
		if err := RegisterCron(s, "0 0 * * * ?", tick{}, WithScheduleID("refresh"), WithIsolated(true)); err != nil {
			t.Fatal(err)
		}
	}
	a := e.isoNode("iso-a", SchedulerConfig{}, hourly)
	b := e.isoNode("iso-b", SchedulerConfig{}, hourly)
	ctx := context.Background()
	if _, err := e.insp.TriggerSchedule(ctx, "refresh", "test"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a run on each instance", func() bool { return a.count() == 1 && b.count() == 1 })
	time.Sleep(1500 * time.Millisecond) // a second look at the same request runs nothing
	if a.count() != 1 || b.count() != 1 {
		t.Fatalf("runs: %d on a, %d on b; want one each", a.count(), b.count())
	}
	_, err := e.insp.BackfillSchedule(ctx, "refresh", time.Now().Add(-3*time.Hour), time.Now(), BackfillOptions{Who: "test"})
	if !errors.Is(err, ErrIsolatedSchedule) {
		t.Fatalf("backfill of an isolated schedule = %v, want ErrIsolatedSchedule", err)
	}
}

// A local task that fails is retried in process with its backoff; one
// that exhausts its retries is recorded as dead, not dead-lettered.
func TestALocalTaskIsRetriedInProcess(t *testing.T) {
	e := newSchedEnv(t)
	n := e.isoNode("iso-a", SchedulerConfig{}, func(s *Scheduler) {
		if err := RegisterCron(s, "0 0 * * * ?", tick{}, WithScheduleID("flaky"), WithIsolated(true), WithMaxRetry(1)); err != nil {
			t.Fatal(err)
		}
	})
	n.mu.Lock()
	n.fail = 5
	n.mu.Unlock()
	ctx := context.Background()
	if _, err := e.insp.TriggerSchedule(ctx, "flaky", "test"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a run and its retry", func() bool { return n.count() == 2 })
	waitUntil(t, "two run records", func() bool {
		runs, _ := e.insp.ListRuns(ctx, "tick", 10)
		return len(runs) == 2
	})
	runs, _ := e.insp.ListRuns(ctx, "tick", 10)
	if runs[0].Status != "dead" || runs[0].Attempt != 2 || runs[1].Status != "retry" || runs[1].Attempt != 1 {
		t.Errorf("run records %+v, %+v: want retry then dead", runs[1], runs[0])
	}
	if d, _ := e.insp.CountDead(ctx); d != 0 {
		t.Errorf("%d dead letters: a local task's death is not one", d)
	}
	time.Sleep(300 * time.Millisecond)
	if c := n.count(); c != 2 {
		t.Errorf("%d runs: no more after MaxRetry", c)
	}
}
