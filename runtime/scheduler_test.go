package chronos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/cron"
	"github.com/chronos-go/chronos/runtime/internal/firing"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// tick is the task args of the scheduler tests.
type tick struct {
	N int `json:"n"`
}

func (tick) Kind() string { return "tick" }

// logBuffer collects log output for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// schedEnv is a private Redis for scheduler tests (a cluster with
// CHRONOS_TEST_CLUSTER=1: TestRedis).
type schedEnv struct {
	t     *testing.T
	redis *TestRedis
	rdb   redis.UniversalClient
	insp  *Inspector
	logs  *logBuffer
}

// newSchedEnv gives t a private redis-server, and runs t in parallel with
// the package's other tests on theirs.
func newSchedEnv(t *testing.T, opts ...redistest.Options) *schedEnv {
	t.Helper()
	s := StartTestRedis(t, opts...)
	c := s.NewClient()
	MarkTestLayout(t, c, "")
	return &schedEnv{t: t, redis: s, rdb: c, insp: NewInspector(c), logs: &logBuffer{}}
}

// scheduler returns a scheduler on its own connection pool, with a short
// lease, registered by reg, not started.
func (e *schedEnv) scheduler(id string, cfg SchedulerConfig, reg func(*Scheduler)) *Scheduler {
	e.t.Helper()
	cfg.InstanceID = id
	if cfg.LeaderTTL == 0 {
		cfg.LeaderTTL = time.Second
	}
	cfg.Logger = slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test_instance", id)
	s := NewScheduler(e.redis.NewClient(), cfg)
	if reg != nil {
		reg(s)
	}
	return s
}

// start starts s and shuts it down when the test ends.
func (e *schedEnv) start(s *Scheduler) *Scheduler {
	e.t.Helper()
	if err := s.Start(context.Background()); err != nil {
		e.t.Fatalf("Start: %v", err)
	}
	e.t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// tasks returns the tasks of queue, in its stream and in its delayed set
// (where the leader puts a trigger it fires ahead: SchedulerConfig.FireAhead),
// in every partition.
func (e *schedEnv) tasks(queue string) []*rdb.Message {
	e.t.Helper()
	ctx := context.Background()
	var raw []string
	for _, k := range queueKeys(e.t, e.rdb) {
		xs, err := e.rdb.XRange(ctx, k.Stream(queue), "-", "+").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			e.t.Fatalf("XRANGE: %v", err)
		}
		for _, x := range xs {
			raw = append(raw, x.Values["m"].(string))
		}
		delayed, err := e.rdb.ZRange(ctx, k.Delayed(queue), 0, -1).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			e.t.Fatalf("ZRANGE: %v", err)
		}
		raw = append(raw, delayed...)
	}
	var out []*rdb.Message
	for _, r := range raw {
		m, err := rdb.Decode([]byte(r))
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// holdLease makes this test the leader of every partition of the default
// namespace by setting the leases itself, so it can fire through the
// fenced script without an election.
func holdLease(t testing.TB, c redis.UniversalClient) leader.Term {
	t.Helper()
	tok := "1:test-lease:" + strings.ReplaceAll(t.Name(), "/", "-")
	st := testStore(t, c)
	for p := range st.Partitions() {
		if err := c.Set(context.Background(), st.Lease(p).Lock, tok, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return leader.Term{Token: tok, Epoch: 1}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLeader waits until every partition is led by one of ss, and returns
// the leader of partition 0.
func waitLeader(t *testing.T, ss ...*Scheduler) *Scheduler {
	t.Helper()
	var l *Scheduler
	waitUntil(t, "a leader of every partition", func() bool {
		l = nil
		var n int
		for _, s := range ss {
			if s.parts == nil {
				continue
			}
			n = len(s.parts.electors)
		}
		for p := range n {
			led := false
			for _, s := range ss {
				if s.parts == nil {
					continue
				}
				if _, ok := s.parts.electors[p].Current(); ok {
					led = true
					if p == 0 {
						l = s
					}
				}
			}
			if !led {
				return false
			}
		}
		return l != nil
	})
	return l
}

// waitLeaderOf waits until one of ss leads the partition of schedule id,
// and returns it.
func waitLeaderOf(t *testing.T, id string, ss ...*Scheduler) *Scheduler {
	t.Helper()
	var l *Scheduler
	waitUntil(t, "a leader of "+id, func() bool {
		for _, s := range ss {
			if s.leads(id) {
				l = s
				return true
			}
		}
		return false
	})
	return l
}

// triggerTimes returns the trigger times (unix seconds) of the tasks of
// schedule id, failing the test on any duplicate.
func triggerTimes(t *testing.T, ms []*rdb.Message, id string) []int64 {
	t.Helper()
	seen := map[int64]bool{}
	var out []int64
	for _, m := range ms {
		if m.ScheduleID != id {
			continue
		}
		sec := m.TriggerTime / 1000
		if seen[sec] {
			t.Fatalf("trigger %v of %s enqueued twice", time.Unix(sec, 0).UTC(), id)
		}
		seen[sec] = true
		out = append(out, sec)
	}
	slices.Sort(out)
	return out
}

func TestRegisterRejectsBadSchedulesWithTheEngineError(t *testing.T) {
	s := NewScheduler(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), SchedulerConfig{})
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"bad cron", RegisterCron(s, "0 0 25 * * ?", tick{}), "hour"},
		{"sub-second interval", RegisterInterval(s, 500*time.Millisecond, tick{}), "1s minimum"},
		{"simple policy on cron", RegisterCron(s, "0 0 2 * * ?", tick{}, WithMisfire("fireNow")), "applies to simple"},
		{"cron policy on interval", RegisterInterval(s, time.Minute, tick{}, WithMisfire("doNothing")), "applies to cron"},
		{"zone on interval", RegisterInterval(s, time.Minute, tick{}, WithTimeZone("Europe/Paris")), "only cron"},
		{"unknown zone", RegisterCron(s, "0 0 2 * * ?", tick{}, WithTimeZone("Mars/Olympus")), "Mars/Olympus"},
		{"simple sub-second", RegisterSimple(s, Simple{Every: time.Millisecond, Repeat: 3}, tick{}), "1s minimum"},
		{"dedup on a schedule", RegisterInterval(s, time.Minute, tick{}, WithDedupKey("k", time.Hour)), "WithDedupKey"},
		{"braces in ID", RegisterInterval(s, time.Minute, tick{}, WithScheduleID("a{b}")), "braces"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, c.err, c.want)
		}
	}
	var syn *cron.SyntaxError
	if err := RegisterCron(s, "0 0 25 * * ?", tick{}); !errors.As(err, &syn) || syn.Field != cron.Hour {
		t.Errorf("bad cron: %v, want a *cron.SyntaxError on the hour field", err)
	}
	if err := RegisterInterval(s, 500*time.Millisecond, tick{}); !errors.Is(err, trigger.ErrSubSecondInterval) {
		t.Errorf("sub-second interval: %v, want trigger.ErrSubSecondInterval", err)
	}
	if err := RegisterCron(s, "0 0 2 * * ?", tick{}, WithMisfire("fireNow")); !errors.Is(err, trigger.ErrPolicyKind) {
		t.Errorf("simple policy on cron: %v, want trigger.ErrPolicyKind", err)
	}
	if err := RegisterInterval(s, time.Minute, tick{}, WithScheduleID("x")); err != nil {
		t.Fatal(err)
	}
	if err := RegisterInterval(s, time.Minute, tick{}, WithScheduleID("x")); err == nil {
		t.Error("the same ID registered twice: no error")
	}
	// Two schedules of one kind and trigger get the same default ID: the
	// error names the fix.
	_ = RegisterCron(s, "0 0 3 * * ?", tick{N: 1})
	err := RegisterCron(s, "0 0 3 * * ?", tick{N: 2})
	if err == nil || !strings.Contains(err.Error(), "registered twice") || !strings.Contains(err.Error(), "WithScheduleID") {
		t.Errorf("same kind and trigger, other args: %v, want an error pointing at WithScheduleID", err)
	}
}

func TestEachSchedulerHasItsOwnDefaultInstanceID(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	a, b := NewScheduler(c, SchedulerConfig{}), NewScheduler(c, SchedulerConfig{})
	if a.InstanceID() == "" || a.InstanceID() == b.InstanceID() {
		t.Fatalf("instance IDs %q and %q: want two different ones", a.InstanceID(), b.InstanceID())
	}
	if got := NewScheduler(c, SchedulerConfig{InstanceID: "pinned"}).InstanceID(); got != "pinned" {
		t.Errorf("InstanceID = %q, want the configured one", got)
	}
}

// The start context bounds registering, as for Server.Start: the usual
// WithTimeout + defer cancel() must not stop the scheduler.
func TestTheSchedulerStartContextBoundsOnlyTheStart(t *testing.T) {
	e := newSchedEnv(t)
	s := e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{}, WithScheduleID("every-second"))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	cancel()
	waitLeader(t, s)
	waitUntil(t, "two firings after the start context ended", func() bool { return len(e.tasks(DefaultQueue)) >= 2 })
}

func TestDefaultScheduleIDFollowsTheDocumentedRule(t *testing.T) {
	s := NewScheduler(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), SchedulerConfig{})
	_ = RegisterCron(s, "0 0 * * *", tick{}, WithTimeZone("Europe/Paris"))
	_ = RegisterInterval(s, 30*time.Second, tick{})
	_ = RegisterSimple(s, Simple{Every: time.Minute, Repeat: -1, StartDelay: time.Second}, tick{})
	var ids []string
	for _, d := range s.decls {
		ids = append(ids, d.ID)
	}
	want := []string{"tick@cron:0 0 * * *@Europe/Paris", "tick@every:30s", "tick@simple:every=1m0s;repeat=-1;delay=1s"}
	if !slices.Equal(ids, want) {
		t.Fatalf("IDs = %q, want %q", ids, want)
	}
}

func TestRegisteringAfterStartFails(t *testing.T) {
	e := newSchedEnv(t)
	s := e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		_ = RegisterCron(s, "0 0 2 * * ?", tick{}, WithScheduleID("nightly"))
	}))
	if err := RegisterInterval(s, time.Minute, tick{}); !errors.Is(err, ErrSchedulerStarted) {
		t.Fatalf("RegisterInterval after Start: %v, want ErrSchedulerStarted", err)
	}
	g := NewGroup(s, "late", CronTrigger("0 0 3 * * ?"))
	if err := AddJob(g, "job", tick{}); !errors.Is(err, ErrSchedulerStarted) {
		t.Fatalf("AddJob after Start: %v, want ErrSchedulerStarted", err)
	}
	if err := s.Start(context.Background()); !errors.Is(err, ErrSchedulerStarted) {
		t.Fatalf("second Start: %v, want ErrSchedulerStarted", err)
	}
}

func TestRegistryShowsSchedulesBeforeTheyEverFire(t *testing.T) {
	e := newSchedEnv(t)
	e.start(e.scheduler("a", SchedulerConfig{Version: "v1.2.0"}, func(s *Scheduler) {
		if err := RegisterCron(s, "0 0 2 * * ?", tick{N: 1}, WithScheduleID("nightly"), WithTimeZone("Europe/Paris"),
			WithMisfire("doNothing"), WithSource("jobs.go", 12), WithQueue("reports")); err != nil {
			t.Fatal(err)
		}
		g := NewGroup(s, "exports", SimpleTrigger(Simple{Every: time.Hour, Repeat: -1, StartDelay: time.Minute}))
		if err := AddJob(g, "users", tick{N: 2}); err != nil {
			t.Fatal(err)
		}
		if err := AddJob(g, "orders", tick{N: 3}, WithQueue("slow")); err != nil {
			t.Fatal(err)
		}
	}))
	ctx := context.Background()
	list, err := e.insp.Schedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("%d schedules listed, want 2", len(list))
	}
	ex, n := list[0], list[1]
	paris, _ := time.LoadLocation("Europe/Paris")
	if n.ID != "nightly" || n.Spec != "0 0 2 * * ?" || n.TimeZone != "Europe/Paris" || n.Misfire != "doNothing" ||
		n.Source != "jobs.go:12" || n.Jobs[0].Queue != "reports" || !n.LastFired.IsZero() {
		t.Errorf("nightly = %+v", n)
	}
	if h := n.NextFire.In(paris); h.Hour() != 2 || h.Minute() != 0 || !n.NextFire.After(time.Now()) {
		t.Errorf("nightly next fire %v, want the next 02:00 in Paris", n.NextFire.In(paris))
	}
	if ex.Group != "exports" || len(ex.Jobs) != 2 || ex.Jobs[1].Queue != "slow" || ex.Trigger != "simple" {
		t.Errorf("exports = %+v", ex)
	}
	times, err := e.insp.NextFireTimes(ctx, "exports", 3)
	if err != nil || len(times) != 3 || times[1].Sub(times[0]) != time.Hour {
		t.Errorf("NextFireTimes = %v, %v; want 3 an hour apart", times, err)
	}
	insts, err := e.insp.SchedulerInstances(ctx)
	if err != nil || len(insts) != 1 || insts[0].ID != "a" || insts[0].Version != "v1.2.0" || insts[0].PID == 0 {
		t.Fatalf("instances = %+v, %v", insts, err)
	}
	waitUntil(t, "leader visible", func() bool { l, _ := e.insp.SchedulerLeader(ctx); return l != nil && l.InstanceID == "a" })
}

func TestEachTriggerIsEnqueuedOnceThroughGracefulHandoffs(t *testing.T) {
	e := newSchedEnv(t)
	var ss []*Scheduler
	for i := range 3 {
		ss = append(ss, e.start(e.scheduler(fmt.Sprintf("i%d", i), SchedulerConfig{}, func(s *Scheduler) {
			if err := RegisterInterval(s, time.Second, tick{}, WithScheduleID("every-second")); err != nil {
				t.Fatal(err)
			}
		})))
	}
	count := func() int { return len(e.tasks(DefaultQueue)) }
	for range 2 {
		l := waitLeaderOf(t, "every-second", ss...)
		n := count()
		waitUntil(t, "firings", func() bool { return count() >= n+3 })
		if err := l.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		ss = slices.DeleteFunc(ss, func(s *Scheduler) bool { return s == l })
	}
	waitLeaderOf(t, "every-second", ss...)
	n := count()
	waitUntil(t, "firings after two handoffs", func() bool { return count() >= n+2 })
	secs := triggerTimes(t, e.tasks(DefaultQueue), "every-second")
	for i := 1; i < len(secs); i++ {
		if secs[i] != secs[i-1]+1 {
			t.Fatalf("trigger %v missing after graceful handoffs: %v", time.Unix(secs[i-1]+1, 0).UTC(), secs)
		}
	}
	for _, m := range e.tasks(DefaultQueue) {
		if m.Kind != "tick" || m.TriggerTime%1000 != 0 {
			t.Fatalf("task %+v: want kind tick and a whole-second trigger", m)
		}
	}
}

func TestStaleLeaderIsFencedAndEnqueuesNothing(t *testing.T) {
	e := newSchedEnv(t)
	s := e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		_ = RegisterCron(s, "0 0 2 1 1 ?", tick{}, WithScheduleID("yearly"))
	}))
	waitLeader(t, s)
	term, _ := s.electorOf("yearly").Current()
	ctx := context.Background()
	// Another instance takes the lease (as after this one stalled past it).
	if err := e.rdb.Set(ctx, leaseOf(t, e.rdb, "yearly").Lock, "999:other:x", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	p := mustPlan(t, e, "yearly")
	slot := time.Date(2030, 1, 1, 2, 0, 0, 0, time.UTC)
	st := trigger.State{Prev: slot, Next: slot.AddDate(1, 0, 0)}
	res := s.fire(ctx, term, []*fireReq{{id: "yearly", plan: p, slot: slot, at: slot, dedup: dedupKey("yearly", slot), state: &st}})
	if !errors.Is(res[0].Err, leader.ErrFenced) {
		t.Fatalf("fire with a stale token: %+v, want ErrFenced", res[0])
	}
	if n := len(e.tasks(DefaultQueue)); n != 0 {
		t.Fatalf("a fenced leader enqueued %d tasks", n)
	}
	if ok, _ := e.rdb.Exists(ctx, QueueKeysOf(t, e.rdb, "yearly").Dedup(dedupKey("yearly", slot))).Result(); ok != 0 {
		t.Fatal("a fenced leader claimed the dedup key")
	}
}

// mustPlan compiles schedule id as the registry holds it.
func mustPlan(t *testing.T, e *schedEnv, id string) *plan {
	t.Helper()
	sc, err := e.insp.getSchedule(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile(sc.Definition, sc.Created)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSameTokenOnTwoSchedulersEnqueuesATriggerOnce(t *testing.T) {
	e := newSchedEnv(t)
	reg := func(s *Scheduler) { _ = RegisterCron(s, "0 0 2 1 1 ?", tick{}, WithScheduleID("yearly")) }
	a := e.start(e.scheduler("a", SchedulerConfig{}, reg))
	b := e.scheduler("b", SchedulerConfig{}, reg) // never elected: it borrows a's token
	b.store = a.store
	waitLeader(t, a)
	term, _ := a.electorOf("yearly").Current()
	p := mustPlan(t, e, "yearly")
	slot := time.Now().Add(time.Hour).Truncate(time.Second)
	req := func() []*fireReq {
		st := trigger.State{Prev: slot, Next: slot.AddDate(1, 0, 0)}
		return []*fireReq{{id: "yearly", plan: p, slot: slot, at: slot, dedup: dedupKey("yearly", slot), state: &st}}
	}
	ctx := context.Background()
	first := a.fire(ctx, term, req())
	second := b.fire(ctx, term, req())
	if first[0].Status != fireFired || second[0].Status != fireDuplicate {
		t.Fatalf("statuses = %q then %q, want fired then duplicate", first[0].Status, second[0].Status)
	}
	if n := len(e.tasks(DefaultQueue)); n != 1 {
		t.Fatalf("%d tasks for one trigger, want 1", n)
	}
}

// primeState registers id through a first scheduler, stops it, and moves
// the stored trigger state into the past, as after an outage: next fire
// ago, last fired one slot before.
func primeState(t *testing.T, e *schedEnv, id string, reg func(*Scheduler), next, prev time.Time) {
	t.Helper()
	s := e.scheduler("primer", SchedulerConfig{}, reg)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := testStore(t, e.rdb).SchedKey(id)
	err := e.rdb.HSet(ctx, key, "next_fire", next.UnixMilli(), "last_fired", prev.UnixMilli(),
		"trigger_start", prev.Add(-time.Hour).UnixMilli(), "repeat_count", -1, "times_triggered", 5,
		"state_saved", time.Now().Add(time.Second).UnixMilli(), "created", prev.Add(-time.Hour).UnixMilli()).Err()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range queueKeys(t, e.rdb) {
		e.rdb.Del(ctx, k.Stream(DefaultQueue))
	}
}

func TestCatchupAfterAnOutageFollowsThePolicy(t *testing.T) {
	// Every minute; the last firing was 10 minutes ago.
	now := time.Now().UTC()
	next := now.Truncate(time.Minute).Add(-9 * time.Minute)
	latest := now.Truncate(time.Minute)
	cases := []struct {
		policy string
		want   []time.Time // trigger times enqueued by catch-up
	}{
		{"ignoreMisfires", []time.Time{latest.Add(-2 * time.Minute), latest.Add(-time.Minute), latest}}, // capped at 3, newest kept
		{"fireOnceNow", []time.Time{latest}},
		{"smartPolicy", []time.Time{latest}},
		{"doNothing", nil},
	}
	for _, c := range cases {
		t.Run(c.policy, func(t *testing.T) {
			if time.Until(latest.Add(time.Minute)) < 5*time.Second {
				t.Skip("too close to a minute boundary for a deterministic expectation")
			}
			e := newSchedEnv(t)
			reg := func(s *Scheduler) {
				_ = RegisterCron(s, "0 * * * * ?", tick{}, WithScheduleID("minutely"), WithMisfire(c.policy))
			}
			primeState(t, e, "minutely", reg, next, next.Add(-time.Minute))
			s := e.start(e.scheduler("b", SchedulerConfig{MaxCatchup: 3}, reg))
			waitLeader(t, s)
			waitUntil(t, "catch-up evaluated", func() bool {
				info, err := e.insp.Schedule(context.Background(), "minutely")
				return err == nil && info.NextFire.After(now)
			})
			var got []time.Time
			for _, m := range e.tasks(DefaultQueue) {
				got = append(got, time.UnixMilli(m.TriggerTime).UTC())
			}
			if !slices.EqualFunc(got, c.want, time.Time.Equal) {
				t.Fatalf("%s: enqueued triggers %v, want %v\n%s", c.policy, got, c.want, e.logs)
			}
			if !strings.Contains(e.logs.String(), "catch-up") {
				t.Errorf("catch-up decision not logged:\n%s", e.logs)
			}
		})
	}
}

func TestPausedScheduleDoesNotFireAndResumesPerPolicy(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	s := e.start(e.scheduler("a", SchedulerConfig{MisfireThreshold: time.Second}, func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{}, WithScheduleID("sec"))
	}))
	waitLeader(t, s)
	waitUntil(t, "first firings", func() bool { return len(e.tasks(DefaultQueue)) >= 2 })
	if err := e.insp.PauseSchedule(ctx, "sec", PauseOptions{Note: "maintenance", Who: "test"}); err != nil {
		t.Fatal(err)
	}
	info, _ := e.insp.Schedule(ctx, "sec")
	if info.Paused == nil || info.Paused.Note != "maintenance" {
		t.Fatalf("paused = %+v", info.Paused)
	}
	time.Sleep(1500 * time.Millisecond) // let the leader see the pause
	before := len(e.tasks(DefaultQueue))
	pausedAt := time.Now()
	time.Sleep(3 * time.Second)
	if n := len(e.tasks(DefaultQueue)); n != before {
		t.Fatalf("%d firings while paused", n-before)
	}
	if ok, err := e.insp.ResumeSchedule(ctx, "sec", ""); !ok || err != nil {
		t.Fatalf("Resume = %v, %v", ok, err)
	}
	waitUntil(t, "firing after resume", func() bool { return len(e.tasks(DefaultQueue)) > before+1 })
	// smartPolicy on a repeat-forever interval is rescheduleNextWithRemainingCount:
	// the slots missed while paused (more than the threshold ago) are not run.
	for _, sec := range triggerTimes(t, e.tasks(DefaultQueue), "sec") {
		at := time.Unix(sec, 0)
		if at.After(pausedAt.Add(time.Second)) && at.Before(pausedAt.Add(2*time.Second)) {
			t.Errorf("slot %v missed during the pause was fired on resume", at)
		}
	}
}

func TestOverlapSkipRecordsSkippedFiringsAndResumesAfterTheRun(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{}, WithScheduleID("slow"), WithOverlap(OverlapSkip))
	}))
	waitUntil(t, "skipped firings", func() bool {
		h, _ := e.insp.ScheduleHistory(ctx, "slow", 0)
		return len(h) >= 3
	})
	if n := len(e.tasks(DefaultQueue)); n != 1 {
		t.Fatalf("%d tasks queued with OverlapSkip and no worker, want 1", n)
	}
	h, _ := e.insp.ScheduleHistory(ctx, "slow", 0)
	if h[0].Jobs[0].Result != "skipped" || h[len(h)-1].Jobs[0].Result != "enqueued" {
		t.Fatalf("history = %+v, want enqueued first, skipped since", h)
	}
	if !strings.Contains(e.logs.String(), "skipped by overlap") {
		t.Error("overlap skip not logged")
	}
	// An operator who knows the queued run is gone can clear the marker.
	e.rdb.Del(ctx, QueueKeysOf(t, e.rdb, "slow").Stream(DefaultQueue))
	if err := e.insp.ClearOverlap(ctx, "slow", ""); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a firing enqueued after the marker was cleared", func() bool { return len(e.tasks(DefaultQueue)) == 1 })
	// Once the run finishes, the next firing enqueues again.
	done := make(chan struct{}, 100)
	mux := NewMux()
	AddHandler(mux, func(context.Context, *Task[tick]) error { done <- struct{}{}; return nil })
	srv := NewServer(e.rdb, ServerConfig{Logger: slog.New(slog.DiscardHandler)})
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(ctx)
	for range 2 {
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("no run after the previous one finished")
		}
	}
}

func TestOverlapBufferOneKeepsOneWaitingAndNeverOverlaps(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{}, WithScheduleID("buf"), WithOverlap(OverlapBufferOne))
	}))
	waitUntil(t, "three firings", func() bool {
		h, _ := e.insp.ScheduleHistory(ctx, "buf", 0)
		return len(h) >= 3
	})
	h, _ := e.insp.ScheduleHistory(ctx, "buf", 0)
	n := len(h)
	if h[n-1].Jobs[0].Result != "enqueued" || h[n-2].Jobs[0].Result != "buffered" || h[n-3].Jobs[0].Result != "skipped" {
		t.Fatalf("history oldest first = %v, %v, %v; want enqueued, buffered, skipped",
			h[n-1].Jobs[0].Result, h[n-2].Jobs[0].Result, h[n-3].Jobs[0].Result)
	}
	if q := len(e.tasks(DefaultQueue)); q != 1 {
		t.Fatalf("%d tasks queued, want 1 (one more buffered)", q)
	}
	var mu sync.Mutex
	running, most := 0, 0
	done := make(chan string, 100)
	mux := NewMux()
	AddHandler(mux, func(_ context.Context, t *Task[tick]) error {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(1500 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		done <- t.ID
		return nil
	})
	srv := NewServer(e.rdb, ServerConfig{Concurrency: 4, Logger: slog.New(slog.DiscardHandler)})
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(ctx)
	buffered := h[n-2].Jobs[0].TaskID
	for seen := false; !seen; {
		select {
		case id := <-done:
			seen = id == buffered
		case <-time.After(20 * time.Second):
			t.Fatal("the buffered firing never ran")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if most > 1 {
		t.Fatalf("%d runs of a bufferOne schedule overlapped", most)
	}
}

func TestTriggerNowAndBackfillAreCarriedOutOnce(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	s := e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		_ = RegisterCron(s, "0 0 * * * ?", tick{}, WithScheduleID("hourly"))
	}))
	waitLeader(t, s)
	// The two requests are often made in the same millisecond; the leader
	// still carries them out in the order they were made, so the
	// triggered task comes first in the queue.
	requested := time.Now().UnixMilli()
	if _, err := e.insp.TriggerSchedule(ctx, "hourly", "test"); err != nil {
		t.Fatal(err)
	}
	to := time.Now().Truncate(time.Hour)
	if _, err := e.insp.BackfillSchedule(ctx, "hourly", to.Add(-2*time.Hour), to, BackfillOptions{Who: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.insp.TriggerSchedule(ctx, "nope", "test"); !errors.Is(err, ErrScheduleNotFound) {
		t.Fatalf("trigger of a missing schedule: %v", err)
	}
	waitUntil(t, "requests done", func() bool { n, _ := e.insp.PendingRequests(ctx); return n == 0 })
	ms := e.tasks(DefaultQueue)
	if len(ms) != 4 {
		t.Fatalf("%d tasks, want 1 triggered + 3 backfilled", len(ms))
	}
	var all []int64
	for _, m := range ms {
		all = append(all, m.TriggerTime)
	}
	if all[0] < requested {
		t.Fatalf("first task's trigger %d is not the trigger-now requested first, at or after %d (all: %v)", all[0], requested, all)
	}
	want := []int64{to.Add(-2 * time.Hour).UnixMilli(), to.Add(-time.Hour).UnixMilli(), to.UnixMilli()}
	if !slices.Equal(all[1:], want) {
		t.Fatalf("backfilled triggers %v, want %v", all[1:], want)
	}
}

func TestPausedJobOfAGroupIsLeftOutOfItsFirings(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		g := NewGroup(s, "pair", SimpleTrigger(Simple{Every: time.Second, Repeat: -1}))
		if err := AddJob(g, "first", tick{N: 1}); err != nil {
			t.Fatal(err)
		}
		if err := AddJob(g, "second", tick{N: 2}); err != nil {
			t.Fatal(err)
		}
	}))
	waitUntil(t, "a firing of both jobs", func() bool { return len(e.tasks(DefaultQueue)) >= 2 })
	if err := e.insp.PauseSchedule(ctx, "pair", PauseOptions{Job: "second", Note: "flaky"}); err != nil {
		t.Fatal(err)
	}
	if err := e.insp.PauseSchedule(ctx, "pair", PauseOptions{Job: "third"}); err == nil {
		t.Fatal("pausing a job the group does not have: no error")
	}
	info, _ := e.insp.Schedule(ctx, "pair")
	if info.Jobs[1].Paused == nil || info.Jobs[1].Paused.Note != "flaky" || info.Jobs[0].Paused != nil {
		t.Fatalf("jobs = %+v", info.Jobs)
	}
	waitUntil(t, "firings with the second job left out", func() bool {
		h, _ := e.insp.ScheduleHistory(ctx, "pair", 2)
		return len(h) == 2 && len(h[0].Jobs) == 1 && len(h[1].Jobs) == 1
	})
	h, _ := e.insp.ScheduleHistory(ctx, "pair", 1)
	if h[0].Jobs[0].Job != "first" || h[0].Jobs[0].Result != "enqueued" {
		t.Fatalf("last firing = %+v, want only the first job", h[0].Jobs)
	}
}

// An operator's request overrides a pause of the whole schedule, which
// they named, but not a job switched off inside a group.
func TestRequestsFireAPausedScheduleButLeaveItsPausedJobsOut(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	s := e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		g := NewGroup(s, "pair", CronTrigger("0 0 * * * ?"))
		if err := AddJob(g, "first", tick{N: 1}); err != nil {
			t.Fatal(err)
		}
		if err := AddJob(g, "second", tick{N: 2}); err != nil {
			t.Fatal(err)
		}
	}))
	waitLeader(t, s)
	if err := e.insp.PauseSchedule(ctx, "pair", PauseOptions{Job: "second"}); err != nil {
		t.Fatal(err)
	}
	if err := e.insp.PauseSchedule(ctx, "pair", PauseOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.insp.TriggerSchedule(ctx, "pair", "test"); err != nil {
		t.Fatal(err)
	}
	to := time.Now().Truncate(time.Hour)
	if _, err := e.insp.BackfillSchedule(ctx, "pair", to.Add(-time.Hour), to, BackfillOptions{Who: "test"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "requests done", func() bool { n, _ := e.insp.PendingRequests(ctx); return n == 0 })
	ms := e.tasks(DefaultQueue)
	if len(ms) != 3 {
		t.Fatalf("%d tasks, want the first job's: 1 triggered + 2 backfilled", len(ms))
	}
	for _, m := range ms {
		if string(m.Args) != `{"n":1}` {
			t.Fatalf("task of the paused job enqueued: %s", m.Args)
		}
	}
}

func TestScheduleAddedByANewerInstanceFiresUnderAnOlderLeader(t *testing.T) {
	e := newSchedEnv(t)
	old := e.start(e.scheduler("old", SchedulerConfig{Version: "v1.0.0"}, func(s *Scheduler) {
		_ = RegisterCron(s, "0 0 2 * * ?", tick{}, WithScheduleID("nightly"))
	}))
	waitLeader(t, old)
	e.start(e.scheduler("new", SchedulerConfig{Version: "v1.1.0"}, func(s *Scheduler) {
		_ = RegisterCron(s, "0 0 2 * * ?", tick{}, WithScheduleID("nightly"))
		_ = RegisterInterval(s, time.Second, tick{N: 7}, WithScheduleID("added-in-v1.1"))
	}))
	waitUntil(t, "the new schedule's firings", func() bool {
		return len(triggerTimes(t, e.tasks(DefaultQueue), "added-in-v1.1")) >= 2
	})
	if !old.leads("added-in-v1.1") {
		t.Fatal("the old instance does not lead the new schedule's partition; the test did not show what it means to")
	}
}

func TestLosingTheLeaseStopsFiringAndRegainingItCatchesUp(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	s := e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{}, WithScheduleID("sec"))
	}))
	waitLeader(t, s)
	waitUntil(t, "firings", func() bool { return len(e.tasks(DefaultQueue)) >= 2 })

	// Another holder takes the lease for 3s: the scheduler must step down at
	// its next renewal and enqueue nothing while it is not the leader.
	lock := leaseOf(t, e.rdb, "sec").Lock
	if err := e.rdb.Set(ctx, lock, "999:intruder:x", 3*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "step-down", func() bool { return !s.leads("sec") })
	before := len(e.tasks(DefaultQueue))
	for e.rdb.Get(ctx, lock).Val() == "999:intruder:x" {
		if n := len(e.tasks(DefaultQueue)); n != before {
			t.Fatalf("%d tasks enqueued while another instance held the lease", n-before)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitLeader(t, s)
	resumed := time.Now()
	waitUntil(t, "firing again", func() bool {
		secs := triggerTimes(t, e.tasks(DefaultQueue), "sec")
		return len(secs) > 0 && time.Unix(secs[len(secs)-1], 0).After(resumed)
	})
	// The slots missed while another held the lease (less than the
	// misfire threshold ago) are fired late, at their own trigger times.
	secs := triggerTimes(t, e.tasks(DefaultQueue), "sec")
	for i := 1; i < len(secs); i++ {
		if secs[i] != secs[i-1]+1 {
			t.Fatalf("trigger %v never enqueued: %v", time.Unix(secs[i-1]+1, 0).UTC(), secs)
		}
	}
	if !strings.Contains(e.logs.String(), "lost leadership") || !strings.Contains(e.logs.String(), "became leader") {
		t.Errorf("leadership changes not logged:\n%s", e.logs)
	}
}

func TestWallClockJumpIsCaughtUpPerPolicyWithoutABurst(t *testing.T) {
	for _, c := range []struct {
		policy string
		want   int // firings for the 5 minutes the clock jumped over
	}{
		{"ignoreMisfires", 4}, // replayed, capped at MaxCatchup, newest kept
		{"smartPolicy", 0},    // rescheduleNextWithRemainingCount: skipped
	} {
		t.Run(c.policy, func(t *testing.T) {
			e := newSchedEnv(t)
			clk := firing.NewManualClock(time.Now().Truncate(time.Second))
			s := e.scheduler("a", SchedulerConfig{MaxCatchup: 4}, func(s *Scheduler) {
				_ = RegisterInterval(s, time.Second, tick{}, WithScheduleID("sec"), WithMisfire(c.policy))
			})
			s.clock, s.now = clk, clk.Now
			e.start(s)
			waitLeader(t, s)
			// One firing loop per partition led, all on the manual clock:
			// each has one pending timer while it sleeps.
			loops := len(s.parts.electors)
			for range 3 {
				clk.BlockUntil(loops)
				clk.Advance(time.Second)
			}
			waitUntil(t, "firings on the manual clock", func() bool { return len(e.tasks(DefaultQueue)) >= 1 })
			clk.BlockUntil(loops)
			before := len(e.tasks(DefaultQueue))
			jumpedFrom := clk.Now()
			clk.StepWall(5 * time.Minute)
			clk.Advance(time.Second)
			waitUntil(t, "the jump noticed", func() bool { return strings.Contains(e.logs.String(), "wall-clock jump") })
			clk.BlockUntil(loops)
			clk.Advance(time.Second) // one more ordinary firing after the jump
			waitUntil(t, "the firing after the jump", func() bool {
				ms := e.tasks(DefaultQueue)
				return len(ms) > before && time.UnixMilli(ms[len(ms)-1].TriggerTime).After(jumpedFrom.Add(5*time.Minute))
			})
			var over int
			for _, m := range e.tasks(DefaultQueue)[before:] {
				if at := time.UnixMilli(m.TriggerTime); at.After(jumpedFrom.Add(time.Second)) && !at.After(jumpedFrom.Add(5*time.Minute+time.Second)) {
					over++
				}
			}
			if over != c.want {
				t.Fatalf("%s: %d firings for the jumped-over slots, want %d\n%s", c.policy, over, c.want, e.logs)
			}
			triggerTimes(t, e.tasks(DefaultQueue), "sec")
		})
	}
}

func TestRestartsDoNotMoveALongIntervalsNextFire(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	reg := func(s *Scheduler) { _ = RegisterInterval(s, 7*24*time.Hour, tick{}, WithScheduleID("weekly")) }
	var first time.Time
	for i := range 3 {
		s := e.scheduler(fmt.Sprintf("gen%d", i), SchedulerConfig{}, reg)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		waitLeader(t, s)
		info, err := e.insp.Schedule(ctx, "weekly")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = info.NextFire
		} else if !info.NextFire.Equal(first) {
			t.Fatalf("restart %d moved the next fire from %v to %v", i, first, info.NextFire)
		}
		if err := s.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if h, _ := e.insp.ScheduleHistory(ctx, "weekly", 0); len(h) != 0 {
		t.Fatalf("fired %d times on restarts", len(h))
	}
}

// A deploy whose build no longer declares a schedule stops it: once no
// live instance declares it, the leader retires it within a heartbeat or
// two and it fires no more; its state is kept, so a rollback resumes it.
func TestAScheduleRemovedFromTheCodeStopsAndARollbackResumesIt(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	v1 := func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{N: 1}, WithScheduleID("kept"))
		_ = RegisterInterval(s, time.Second, tick{N: 2}, WithScheduleID("removed"))
	}
	v2 := func(s *Scheduler) { _ = RegisterInterval(s, time.Second, tick{N: 1}, WithScheduleID("kept")) }
	fired := func(id string) int { return len(triggerTimes(t, e.tasks(DefaultQueue), id)) }

	a := e.start(e.scheduler("v1-a", SchedulerConfig{Version: "v1"}, v1))
	waitLeader(t, a)
	waitUntil(t, "removed to fire", func() bool { return fired("removed") >= 2 })

	// The deploy: a v2 instance starts, the v1 one stops.
	b := e.start(e.scheduler("v2-b", SchedulerConfig{Version: "v2"}, v2))
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, b)
	var info *ScheduleInfo
	waitUntil(t, "removed retired", func() bool {
		info, _ = e.insp.Schedule(ctx, "removed")
		return info != nil && !info.Retired.IsZero()
	})
	if info.RetiredBy != "" || !info.NextFire.IsZero() || info.LastFired.IsZero() {
		t.Errorf("retired schedule shows by %q, next %v, last %v; want retired by the sweep, no next fire, its last firing kept",
			info.RetiredBy, info.NextFire, info.LastFired)
	}
	lastFired := info.LastFired
	n := fired("removed")
	time.Sleep(2500 * time.Millisecond)
	if m := fired("removed"); m > n {
		t.Fatalf("%d firings of the retired schedule", m-n)
	}
	if strings.Count(e.logs.String(), "schedule retired") != 1 {
		t.Errorf("want one log line for the retirement:\n%s", e.logs)
	}
	if err := e.insp.RetireSchedule(ctx, "kept", "ops"); !errors.Is(err, ErrScheduleDeclared) || !strings.Contains(err.Error(), "v2-b") {
		t.Errorf("retiring a declared schedule = %v, want ErrScheduleDeclared naming v2-b", err)
	}

	// The rollback: a v1 instance declares it again, and it resumes from
	// its last firing (smartPolicy on an interval skips the missed slots).
	e.start(e.scheduler("v1-c", SchedulerConfig{Version: "v1"}, v1))
	waitUntil(t, "removed to fire again", func() bool { return fired("removed") > n })
	info, _ = e.insp.Schedule(ctx, "removed")
	if !info.Retired.IsZero() || info.LastFired.Before(lastFired) {
		t.Errorf("after the rollback: retired %v, last fired %v (was %v)", info.Retired, info.LastFired, lastFired)
	}
}

func TestAnOperatorRetiresAndDeletesAnUndeclaredSchedule(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	a := e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		_ = RegisterInterval(s, time.Hour, tick{}, WithScheduleID("old"))
	}))
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.insp.RetireSchedule(ctx, "old", "ops"); err != nil {
		t.Fatal(err)
	}
	if info, _ := e.insp.Schedule(ctx, "old"); info == nil || info.Retired.IsZero() || info.RetiredBy != "ops" {
		t.Fatalf("after RetireSchedule: %+v", info)
	}
	if err := e.insp.DeleteSchedule(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.insp.Schedule(ctx, "old"); !errors.Is(err, ErrScheduleNotFound) {
		t.Fatalf("after DeleteSchedule: %v", err)
	}
	if err := e.insp.RetireSchedule(ctx, "old", "ops"); !errors.Is(err, ErrScheduleNotFound) {
		t.Fatalf("retiring an unknown schedule: %v", err)
	}
}

// With FireAhead the leader enqueues each trigger before its fire time,
// into the delayed set with the fire time as its due time: the handler
// never starts before the trigger's second, and the task was written
// before it.
func TestTriggersFiredAheadNeverRunEarly(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	var mu sync.Mutex
	var early, ran []string
	mux := NewMux()
	AddHandler(mux, func(ctx context.Context, task *Task[tick]) error {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, task.ID)
		if now.Before(task.TriggerTime) {
			early = append(early, fmt.Sprintf("%v started %v early", task.TriggerTime, task.TriggerTime.Sub(now)))
		}
		if !time.UnixMilli(task.EnqueuedAt.UnixMilli()).Before(task.TriggerTime) {
			early = append(early, fmt.Sprintf("%v enqueued at %v, not ahead", task.TriggerTime, task.EnqueuedAt))
		}
		return nil
	})
	srv := NewServer(e.redis.NewClient(), ServerConfig{Logger: slog.New(slog.DiscardHandler)})
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	s := e.start(e.scheduler("a", SchedulerConfig{FireAhead: 300 * time.Millisecond}, func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{}, WithScheduleID("sec"))
	}))
	waitLeader(t, s)
	waitUntil(t, "four runs", func() bool { mu.Lock(); defer mu.Unlock(); return len(ran) >= 4 })
	mu.Lock()
	defer mu.Unlock()
	// The first firing of a term is a catch-up evaluated at the time, not
	// ahead: only the loop's firings are checked for being ahead.
	if len(early) > 1 {
		t.Fatalf("triggers fired ahead: %v", early)
	}
	for _, x := range early {
		if strings.Contains(x, "early") && strings.Contains(x, "started") {
			t.Fatalf("a handler ran before its trigger: %s", x)
		}
	}
}
