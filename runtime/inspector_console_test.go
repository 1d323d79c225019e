package chronos_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// Mail is a second task kind, on its own queue in these tests.
type Mail struct {
	To string `json:"to"`
}

func (Mail) Kind() string { return "mail" }

func ids(ts []*chronos.StoredTask) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func TestInspectorListsQueuesAndTheirTasksByState(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	held := e.enqueue(t, Greet{Name: "held"})
	ready := e.enqueue(t, Greet{Name: "ready"})
	mailReady := e.enqueue(t, Mail{To: "ann"}, chronos.WithQueue("mail"))
	later := e.enqueue(t, Greet{Name: "later"}, chronos.WithProcessIn(time.Hour))
	laterMail := e.enqueue(t, Mail{To: "bob"}, chronos.WithProcessIn(2*time.Hour))

	// One worker takes the first task of "default" and holds it: running.
	started, release := make(chan string, 1), make(chan struct{})
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[Greet]) error {
		started <- t.ID
		<-release
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{Concurrency: 1})
	if got := recv(t, started, "the first task to start"); got != held.ID {
		t.Fatalf("worker took %s, want %s", got, held.ID)
	}
	defer close(release)

	qs, err := e.insp.Queues(ctx)
	if err != nil || !slices.Equal(qs, []string{"default", "mail"}) {
		t.Fatalf("Queues = %v, %v; want [default mail]", qs, err)
	}
	list := func(q string, s chronos.TaskState, f chronos.TaskFilter) []string {
		t.Helper()
		ts, err := e.insp.ListTasks(ctx, q, s, f)
		if err != nil {
			t.Fatalf("ListTasks(%s, %s): %v", q, s, err)
		}
		return ids(ts)
	}
	if got := list("default", chronos.TaskRunning, chronos.TaskFilter{}); !slices.Equal(got, []string{held.ID}) {
		t.Errorf("running in default = %v, want [%s]", got, held.ID)
	}
	if got := list("default", chronos.TaskReady, chronos.TaskFilter{}); !slices.Equal(got, []string{ready.ID}) {
		t.Errorf("ready in default = %v, want [%s]", got, ready.ID)
	}
	if got := list("mail", chronos.TaskReady, chronos.TaskFilter{}); !slices.Equal(got, []string{mailReady.ID}) {
		t.Errorf("ready in mail (no group yet) = %v, want [%s]", got, mailReady.ID)
	}
	if got := list("default", chronos.TaskDelayed, chronos.TaskFilter{}); !slices.Equal(got, []string{later.ID, laterMail.ID}) {
		t.Errorf("delayed in default = %v, want [%s %s] (earliest due first)", got, later.ID, laterMail.ID)
	}
	if got := list("default", chronos.TaskDelayed, chronos.TaskFilter{Kind: "mail"}); !slices.Equal(got, []string{laterMail.ID}) {
		t.Errorf("delayed mail in default = %v, want [%s]", got, laterMail.ID)
	}
	if got := list("default", chronos.TaskDelayed, chronos.TaskFilter{Offset: 1}); !slices.Equal(got, []string{laterMail.ID}) {
		t.Errorf("delayed in default from offset 1 = %v, want [%s]", got, laterMail.ID)
	}
	if _, err := e.insp.ListTasks(ctx, "default", chronos.TaskDead, chronos.TaskFilter{}); err == nil {
		t.Error("ListTasks(dead) succeeded; dead letters are listed by SearchDead")
	}

	for _, c := range []struct {
		id    string
		state chronos.TaskState
		queue string
	}{{held.ID, chronos.TaskRunning, "default"}, {ready.ID, chronos.TaskReady, "default"},
		{mailReady.ID, chronos.TaskReady, "mail"}, {laterMail.ID, chronos.TaskDelayed, "default"}} {
		got, err := e.insp.GetTask(ctx, c.id)
		if err != nil {
			t.Errorf("GetTask(%s): %v", c.id, err)
			continue
		}
		if got.State != c.state || got.Queue != c.queue {
			t.Errorf("GetTask(%s) = %s in %s, want %s in %s", c.id, got.State, got.Queue, c.state, c.queue)
		}
	}
	if got, _ := e.insp.GetTask(ctx, laterMail.ID); got == nil || got.Due.Before(time.Now().Add(time.Hour)) || string(got.Args) != `{"to":"bob"}` {
		t.Errorf("delayed task = %+v; want its due time and args", got)
	}
	if _, err := e.insp.GetTask(ctx, "01M8PTDD629YQSSEH54S6ZHNPK"); !errors.Is(err, chronos.ErrTaskNotFound) {
		t.Errorf("GetTask of an unknown ID: %v, want ErrTaskNotFound", err)
	}
}

func TestInspectorFindsFinishedTasksByTheirRunRecords(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	done := make(chan struct{}, 1)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[Greet]) error {
		done <- struct{}{}
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{})
	info := e.enqueue(t, Greet{Name: "x"})
	recv(t, done, "the run")
	var runs []*chronos.RunRecord
	eventually(t, "the run record", func() bool {
		runs, _ = e.insp.TaskRuns(ctx, info.ID, "")
		return len(runs) == 1
	})
	if r := runs[0]; r.TaskID != info.ID || r.Kind != "greet" || r.Status != "success" {
		t.Fatalf("run record = %+v", r)
	}
	if _, err := e.insp.GetTask(ctx, info.ID); !errors.Is(err, chronos.ErrTaskNotFound) {
		t.Fatalf("GetTask of a finished task: %v, want ErrTaskNotFound", err)
	}
	kinds, err := e.insp.RunKinds(ctx)
	if err != nil || !slices.Equal(kinds, []string{"greet"}) {
		t.Fatalf("RunKinds = %v, %v", kinds, err)
	}
}

func TestInspectorSearchesAndCountsDeadLettersByQueueAndKind(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[Greet]) error {
		return fmt.Errorf("no: %w", chronos.ErrSkipRetry)
	})
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[Mail]) error {
		return fmt.Errorf("no: %w", chronos.ErrSkipRetry)
	})
	e.serve(t, mux, chronos.ServerConfig{Queues: map[string]int{"default": 1, "mail": 1}})
	g1 := e.enqueue(t, Greet{Name: "1"})
	m1 := e.enqueue(t, Mail{To: "a"}, chronos.WithQueue("mail"))
	m2 := e.enqueue(t, Mail{To: "b"})
	eventually(t, "three dead letters", func() bool { n, _ := e.insp.CountDead(ctx); return n == 3 })

	counts, err := e.insp.DeadCountsByQueue(ctx)
	if err != nil || counts["default"] != 2 || counts["mail"] != 1 || len(counts) != 2 {
		t.Fatalf("DeadCountsByQueue = %v, %v; want default:2 mail:1", counts, err)
	}
	search := func(q string, f chronos.TaskFilter) []string {
		t.Helper()
		ds, err := e.insp.SearchDead(ctx, q, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range ds {
			out = append(out, d.ID)
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s ...string) []string { slices.Sort(s); return s }
	if got := search("", chronos.TaskFilter{Kind: "mail"}); !slices.Equal(got, sorted(m1.ID, m2.ID)) {
		t.Errorf("dead mail = %v, want %v", got, sorted(m1.ID, m2.ID))
	}
	if got := search("default", chronos.TaskFilter{}); !slices.Equal(got, sorted(g1.ID, m2.ID)) {
		t.Errorf("dead in default = %v", got)
	}
	if got := search("mail", chronos.TaskFilter{Kind: "greet"}); len(got) != 0 {
		t.Errorf("dead greet in mail = %v, want none", got)
	}
	got, err := e.insp.GetTask(ctx, m1.ID)
	if err != nil || got.State != chronos.TaskDead || got.Reason == "" || got.DiedAt.IsZero() || len(got.History) != 1 {
		t.Fatalf("GetTask(dead) = %+v, %v; want dead with reason, time of death and one attempt", got, err)
	}

	rates, err := e.insp.QueueRates(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r := rates["default"]; r == nil || r.Dead != 2 || r.Succeeded != 0 {
		t.Errorf("rate of default = %+v, want 2 dead", r)
	}
	if r := rates["mail"]; r == nil || r.Dead != 1 {
		t.Errorf("rate of mail = %+v, want 1 dead", r)
	}
}

func TestPlanBackfillCountsWhatTheLeaderFires(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s := chronos.NewScheduler(e.redis.NewClient(), chronos.SchedulerConfig{LeaderTTL: time.Second, Logger: quietLogger})
	if err := chronos.RegisterCron(s, "0 0 * * * ?", Greet{}, chronos.WithScheduleID("hourly")); err != nil {
		t.Fatal(err)
	}
	if err := chronos.RegisterCron(s, "* * * * * ?", Greet{}, chronos.WithScheduleID("second")); err != nil {
		t.Fatal(err)
	}
	if err := chronos.RegisterInterval(s, time.Minute, Greet{}, chronos.WithScheduleID("minutely")); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	to := time.Now().Truncate(time.Hour)
	from := to.Add(-5*time.Hour - 30*time.Minute) // before the schedule existed: a backfill reaches back
	plan, err := e.insp.PlanBackfill(ctx, "hourly", from, to)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Count != 6 || plan.More || !plan.First.Equal(to.Add(-5*time.Hour)) || !plan.Last.Equal(to) {
		t.Fatalf("plan = %+v; want 6 fires from %v to %v", plan, to.Add(-5*time.Hour), to)
	}
	if _, err := e.insp.BackfillSchedule(ctx, "hourly", from, to, chronos.BackfillOptions{Who: "test"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the backfill carried out", func() bool { n, _ := e.insp.PendingRequests(ctx); return n == 0 })
	hist, err := e.insp.ScheduleHistory(ctx, "hourly", 0)
	if err != nil {
		t.Fatal(err)
	}
	fired := 0
	for _, h := range hist {
		if h.Source == "backfill" {
			fired++
		}
	}
	if fired != plan.Count {
		t.Fatalf("the backfill fired %d times, the plan said %d", fired, plan.Count)
	}

	big, err := e.insp.PlanBackfill(ctx, "second", to.Add(-2*time.Hour), to)
	if err != nil || big.Count != 7201 || big.More {
		t.Fatalf("plan over 7,201 seconds = %+v, %v; want all 7,201 counted", big, err)
	}
	// An interval starts when it was first registered, and the leader does
	// not backfill before that: neither does the plan.
	if p, err := e.insp.PlanBackfill(ctx, "minutely", to.Add(-2*time.Hour), to.Add(-time.Hour)); err != nil || p.Count != 0 {
		t.Fatalf("plan of an interval before its start = %+v, %v; want 0", p, err)
	}
	if _, err := e.insp.PlanBackfill(ctx, "nope", from, to); !errors.Is(err, chronos.ErrScheduleNotFound) {
		t.Fatalf("plan of an unknown schedule: %v", err)
	}
	if _, err := e.insp.PlanBackfill(ctx, "hourly", to, from); err == nil {
		t.Fatal("plan of a reversed range succeeded")
	}
}

// A backfill of more fire times than the limit is refused before anything
// is asked, with an error naming the count, the limit and how to raise it;
// one within it is fired whole, a chunk at a time, with its progress in
// the request.
func TestBackfillIsRefusedBeyondTheLimitAndPacedWithinIt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s := chronos.NewScheduler(e.redis.NewClient(), chronos.SchedulerConfig{LeaderTTL: time.Second, Logger: quietLogger})
	if err := chronos.RegisterCron(s, "* * * * * ?", Greet{}, chronos.WithScheduleID("second")); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	to := time.Now().Add(-time.Hour).Truncate(time.Second)
	_, err := e.insp.BackfillSchedule(ctx, "second", to.Add(-3*time.Hour), to, chronos.BackfillOptions{})
	if !errors.Is(err, chronos.ErrBackfillTooLarge) || !strings.Contains(err.Error(), "10801") ||
		!strings.Contains(err.Error(), "10000") || !strings.Contains(err.Error(), "-max") {
		t.Fatalf("backfill of 10,801 fire times = %v; want ErrBackfillTooLarge naming the count, the limit and -max", err)
	}
	if n, _ := e.insp.PendingRequests(ctx); n != 0 {
		t.Fatalf("%d requests pending after a refusal", n)
	}

	from := to.Add(-1199 * time.Second) // 1,200 fire times: three chunks
	id, err := e.insp.BackfillSchedule(ctx, "second", from, to, chronos.BackfillOptions{Who: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var progress []int
	eventually(t, "the backfill carried out", func() bool {
		rs, _ := e.insp.Requests(ctx)
		for _, r := range rs {
			if r.ID == id && r.Planned == 1200 && (len(progress) == 0 || progress[len(progress)-1] != r.Fired) {
				progress = append(progress, r.Fired)
			}
		}
		return len(rs) == 0
	})
	if len(progress) < 2 {
		t.Errorf("progress seen %v: want the backfill fired in chunks", progress)
	}
	seen := map[int64]bool{}
	xs, err := e.insp.ListTasks(ctx, chronos.DefaultQueue, chronos.TaskReady, chronos.TaskFilter{Limit: 5000})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range xs {
		if m.ScheduleID == "second" && !m.TriggerTime.After(to) && !m.TriggerTime.Before(from) {
			if seen[m.TriggerTime.Unix()] {
				t.Fatalf("fire time %v backfilled twice", m.TriggerTime)
			}
			seen[m.TriggerTime.Unix()] = true
		}
	}
	if len(seen) != 1200 {
		t.Fatalf("%d of 1,200 fire times backfilled", len(seen))
	}
}
