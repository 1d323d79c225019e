package chronos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// recorder is a Metrics that keeps every call as a line, such as
// "finished default/m.ok success", for tests to count.
type recorder struct {
	mu    sync.Mutex
	calls []string
	waits []time.Duration
	lags  []time.Duration
	fired []FiredTrigger
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
}

func (r *recorder) TaskStarted(queue, kind string, wait time.Duration) {
	r.mu.Lock()
	r.waits = append(r.waits, wait)
	r.mu.Unlock()
	r.add(fmt.Sprintf("started %s/%s", queue, kind))
}

func (r *recorder) TaskFinished(queue, kind, outcome string, took time.Duration) {
	r.add(fmt.Sprintf("finished %s/%s %s", queue, kind, outcome))
}

func (r *recorder) TriggerFired(f FiredTrigger) {
	r.mu.Lock()
	r.lags = append(r.lags, f.Lag)
	r.fired = append(r.fired, f)
	r.mu.Unlock()
	r.add(fmt.Sprintf("fired %s %s %s", f.Schedule, f.Source, f.Result))
}

func (r *recorder) Misfired(schedule, policy string, dropped int) {
	r.add(fmt.Sprintf("misfired %s %s %d", schedule, policy, dropped))
}

func (r *recorder) LeaderChanged(leading bool) { r.add(fmt.Sprintf("leader %v", leading)) }

func (r *recorder) LeaseRenewFailed() { r.add("renew failed") }

func (r *recorder) RegistryLost(reseeded int) { r.add(fmt.Sprintf("registry lost %d", reseeded)) }

// count returns how many recorded calls equal call.
func (r *recorder) count(call string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c == call {
			n++
		}
	}
	return n
}

// matching returns the recorded calls for which keep is true, in order.
func (r *recorder) matching(keep func(string) bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprint(r.calls)
}

type (
	mOK     struct{}
	mFlaky  struct{}
	mDoomed struct{}
)

func (mOK) Kind() string     { return "m.ok" }
func (mFlaky) Kind() string  { return "m.flaky" }
func (mDoomed) Kind() string { return "m.doomed" }

func TestServerReportsEachTaskStartAndOutcomeOnce(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	mux := NewMux()
	AddHandler(mux, func(context.Context, *Task[mOK]) error { return nil })
	AddHandler(mux, func(_ context.Context, t *Task[mFlaky]) error {
		if t.Attempt == 1 {
			return errors.New("first run fails")
		}
		return nil
	})
	AddHandler(mux, func(context.Context, *Task[mDoomed]) error { return fmt.Errorf("give up: %w", ErrSkipRetry) })
	rec := &recorder{}
	srv := NewServer(e.redis.NewClient(), ServerConfig{
		Concurrency: 2, Backoff: ConstantBackoff(0), Logger: slog.New(slog.NewTextHandler(e.logs, nil)), Metrics: rec,
	})
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	client := NewClient(e.rdb)
	for _, a := range []TaskArgs{mOK{}, mFlaky{}, mDoomed{}} {
		if _, err := client.Enqueue(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "three tasks finished", func() bool {
		return rec.count("finished default/m.ok success") == 1 && rec.count("finished default/m.flaky success") == 1 &&
			rec.count("finished default/m.doomed dead") == 1
	})
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	want := map[string]int{
		"started default/m.ok":             1,
		"started default/m.flaky":          2, // the failed run and its retry
		"started default/m.doomed":         1,
		"finished default/m.ok success":    1,
		"finished default/m.flaky retry":   1,
		"finished default/m.flaky success": 1,
		"finished default/m.doomed dead":   1,
	}
	total := 0
	for call, n := range want {
		if got := rec.count(call); got != n {
			t.Errorf("%q reported %d times, want %d\n%s", call, got, n, rec)
		}
		total += n
	}
	if got := len(rec.matching(func(string) bool { return true })); got != total {
		t.Errorf("%d calls, want %d: %s", got, total, rec)
	}
	for _, w := range rec.waits {
		if w < 0 {
			t.Errorf("negative wait %v", w)
		}
	}
}

func TestSchedulerReportsEachFiringOnce(t *testing.T) {
	e := newSchedEnv(t)
	rec := &recorder{}
	s := e.start(e.scheduler("a", SchedulerConfig{Metrics: rec}, func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{}, WithScheduleID("sec"))
	}))
	waitLeader(t, s)
	waitUntil(t, "three firings", func() bool { return len(e.tasks(DefaultQueue)) >= 3 })
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	enqueued := rec.matching(func(c string) bool { return c == "fired sec trigger enqueued" || c == "fired sec catchup enqueued" })
	if n := len(triggerTimes(t, e.tasks(DefaultQueue), "sec")); len(enqueued) != n {
		t.Fatalf("%d enqueued firings reported for %d tasks: %s", len(enqueued), n, rec)
	}
	if other := rec.matching(func(c string) bool { return strings.HasPrefix(c, "fired ") && !slices.Contains(enqueued, c) }); len(other) > 0 {
		t.Errorf("unexpected firing results: %v", other)
	}
	for _, l := range rec.lags {
		if l < 0 || l > 5*time.Second {
			t.Errorf("lag %v: want the time from trigger to enqueue", l)
		}
	}
	// Each report names the job, the task and the second it stands for, so
	// lag is measured against the real trigger, not guessed as now - lag.
	byTask := map[string]*rdb.Message{}
	for _, m := range e.tasks(DefaultQueue) {
		byTask[m.ID] = m
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, f := range rec.fired {
		m := byTask[f.TaskID]
		switch {
		case m == nil:
			t.Errorf("reported task %q (%+v) is not in the queue", f.TaskID, f)
		case f.Job != mainJob || !f.Trigger.Equal(time.UnixMilli(m.TriggerTime)):
			t.Errorf("reported job %q trigger %v; the task says job %q trigger %v", f.Job, f.Trigger, mainJob, time.UnixMilli(m.TriggerTime))
		}
	}
}

func TestSchedulerReportsADuplicateTriggerOnce(t *testing.T) {
	e := newSchedEnv(t)
	reg := func(s *Scheduler) { _ = RegisterCron(s, "0 0 2 1 1 ?", tick{}, WithScheduleID("yearly")) }
	recA, recB := &recorder{}, &recorder{}
	a := e.start(e.scheduler("a", SchedulerConfig{Metrics: recA}, reg))
	b := e.scheduler("b", SchedulerConfig{Metrics: recB}, reg) // never elected: it borrows a's token
	b.store = a.store
	waitLeader(t, a)
	term, _ := a.electorOf("yearly").Current()
	p := mustPlan(t, e, "yearly")
	slot := time.Now().Add(time.Hour).Truncate(time.Second)
	req := func() []*fireReq {
		st := trigger.State{Prev: slot, Next: slot.AddDate(1, 0, 0)}
		return []*fireReq{{id: "yearly", plan: p, slot: slot, at: slot, dedup: dedupKey("yearly", slot), state: &st, source: "trigger"}}
	}
	ctx := context.Background()
	a.fire(ctx, term, req())
	b.fire(ctx, term, req())
	if n := recA.count("fired yearly trigger enqueued"); n != 1 {
		t.Errorf("first instance reported %d enqueues, want 1: %s", n, recA)
	}
	if got := recB.matching(func(string) bool { return true }); !slices.Equal(got, []string{"fired yearly trigger duplicate"}) {
		t.Errorf("second instance reported %v, want one duplicate", got)
	}
}

func TestSchedulerReportsAMisfireCatchupOnce(t *testing.T) {
	e := newSchedEnv(t)
	reg := func(s *Scheduler) {
		_ = RegisterCron(s, "0 0 * * * ?", tick{}, WithScheduleID("hourly"), WithMisfire("fireOnceNow"))
	}
	// The last three hourly slots were missed during an outage.
	next := time.Now().Truncate(time.Hour).Add(-2 * time.Hour)
	primeState(t, e, "hourly", reg, next, next.Add(-time.Hour))
	rec := &recorder{}
	s := e.start(e.scheduler("b", SchedulerConfig{Metrics: rec}, reg))
	waitLeader(t, s)
	waitUntil(t, "the catch-up firing", func() bool { return rec.count("fired hourly catchup enqueued") > 0 })
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := rec.count("misfired hourly fireOnceNow 0"); n != 1 {
		t.Errorf("misfire reported %d times, want 1: %s", n, rec)
	}
	if n := rec.count("fired hourly catchup enqueued"); n != 1 {
		t.Errorf("catch-up firing reported %d times, want 1: %s", n, rec)
	}
}

func TestSchedulerReportsLeadershipChangesAndRenewalFailures(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	rec := &recorder{}
	s := e.start(e.scheduler("a", SchedulerConfig{Metrics: rec}, func(s *Scheduler) {
		_ = RegisterInterval(s, time.Hour, tick{}, WithScheduleID("hourly"))
	}))
	waitLeader(t, s)
	// Another holder takes the lease of every partition: the next renewals
	// fail and the scheduler steps down, then wins the leases back once
	// they expire. Leading is reported for the instance, whatever the
	// number of partitions it leads; each failed renewal on its own.
	st := testStore(t, e.rdb)
	for p := range st.Partitions() {
		if err := e.rdb.Set(ctx, st.Lease(p).Lock, "999:intruder:x", 1500*time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
	}
	n := st.Partitions()
	isLeadership := func(c string) bool { return c == "leader true" || c == "leader false" || c == "renew failed" }
	// Every partition regained, so that no acquisition is in flight when
	// Shutdown resigns them.
	waitUntil(t, "leadership regained", func() bool { return len(rec.matching(isLeadership)) >= n+3 && s.leadsAll() })
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"leader true"}
	for range n {
		want = append(want, "renew failed")
	}
	want = append(want, "leader false", "leader true", "leader false")
	if got := rec.matching(isLeadership); !slices.Equal(got, want) {
		t.Fatalf("leadership reported as %v, want %v", got, want)
	}
}
