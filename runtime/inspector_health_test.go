package chronos

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// These tests hold ScheduleHealth to the definitions of Health and
// HealthState (and docs/health.md). They write the registry and the run
// records as the scheduler and the servers do, and evaluate health at
// chosen moments; the tests at the end run a real scheduler instead.

// declare registers defs in the registry as an instance would.
func (e *schedEnv) declare(defs ...schedstore.Definition) {
	e.t.Helper()
	d := schedstore.Declarer{InstanceID: "declarer", Version: "v1", Started: time.Now()}
	if _, err := testStore(e.t, e.rdb).Register(context.Background(), d, defs); err != nil {
		e.t.Fatal(err)
	}
}

// everyMinute is a schedule firing every minute whose jobs enqueue kinds
// (one job "main" of kind tick without any).
func everyMinute(id string, kinds ...string) schedstore.Definition {
	d := schedstore.Definition{ID: id, Kind: defKindInterval, Spec: time.Minute.String()}
	if len(kinds) == 0 {
		kinds = []string{"tick"}
	}
	for _, kind := range kinds {
		name := mainJob
		if len(kinds) > 1 {
			name, d.Group = kind, id
		}
		d.Jobs = append(d.Jobs, schedstore.Job{Name: name, Kind: kind})
	}
	return d
}

// ran records a finished run of schedule id's kind that started at start
// and took a second.
func (e *schedEnv) ran(kind, id, status string, start time.Time, errText string) {
	e.t.Helper()
	rec := &rdb.RunRecord{TaskID: "t-" + start.Format("150405.000"), Queue: DefaultQueue, Status: status, Attempt: 1,
		Start: start, Duration: time.Second, Error: errText, ScheduleID: id}
	if err := e.insp.queue.AppendRun(context.Background(), kind, rec, 10_000); err != nil {
		e.t.Fatal(err)
	}
}

// healthAt returns the health of schedule id at now.
func (e *schedEnv) healthAt(now time.Time, id string) *Health {
	e.t.Helper()
	hs, err := e.insp.scheduleHealth(context.Background(), now, []string{id})
	if err != nil {
		e.t.Fatal(err)
	}
	h := hs[id]
	if h == nil {
		e.t.Fatalf("no health for %q", id)
	}
	return h
}

// firstFire is the fire time schedule id waits for before it ever fired.
func (e *schedEnv) firstFire(id string) time.Time {
	e.t.Helper()
	info, err := e.insp.Schedule(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return info.NextFire
}

func wantState(t *testing.T, what string, h *Health, state HealthState, reason ...string) {
	t.Helper()
	if h.State != state {
		t.Fatalf("%s: state %s (%s), want %s", what, h.State, h.Reason, state)
	}
	for _, r := range reason {
		if !strings.Contains(h.Reason, r) {
			t.Errorf("%s: reason %q lacks %q", what, h.Reason, r)
		}
	}
}

func TestAScheduleIsLateOnceAFireTimeIsLateAfterPastWithNothingEnqueued(t *testing.T) {
	e := newSchedEnv(t)
	d := everyMinute("reports")
	d.LateAfter = 5 * time.Minute
	e.declare(d, everyMinute("defaults"))
	due := e.firstFire("reports")

	h := e.healthAt(due.Add(-time.Second), "reports")
	wantState(t, "before the fire time", h, HealthOK)
	if h.Lateness != 0 || h.LateAfter != 5*time.Minute || h.FailingAfter != DefaultFailingAfter {
		t.Fatalf("before the fire time: %+v", h)
	}
	h = e.healthAt(due.Add(5*time.Minute), "reports")
	wantState(t, "LateAfter past the fire time", h, HealthOK)
	if h.Lateness != 5*time.Minute {
		t.Fatalf("lateness %v, want 5m", h.Lateness)
	}
	h = e.healthAt(due.Add(5*time.Minute+time.Millisecond), "reports")
	wantState(t, "just over LateAfter", h, HealthLate, "fire time "+fmtHealthTime(due), "nothing was enqueued", "late after 5m0s")
	if !h.Since.Equal(due) || h.Lateness != 5*time.Minute+time.Millisecond {
		t.Fatalf("late since %v by %v; want since %v", h.Since, h.Lateness, due)
	}

	// Without options: late one minute after the fire time.
	h = e.healthAt(e.firstFire("defaults").Add(time.Minute+time.Millisecond), "defaults")
	wantState(t, "defaults", h, HealthLate)
	if h.LateAfter != DefaultLateAfter || DefaultLateAfter != time.Minute {
		t.Fatalf("late after %v, want the default, a minute", h.LateAfter)
	}
}

func TestAPausedScheduleIsPausedAndCountsLatenessFromTheEndOfItsPause(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	e.declare(everyMinute("paused"), everyMinute("timed"))
	due := e.firstFire("paused")
	long := due.Add(time.Hour)

	if err := e.insp.PauseSchedule(ctx, "paused", PauseOptions{Who: "alice", Note: "migration"}); err != nil {
		t.Fatal(err)
	}
	h := e.healthAt(long, "paused")
	wantState(t, "paused an hour after its fire time", h, HealthPaused, "by alice", "migration")
	if h.Lateness != 0 || h.Since.IsZero() {
		t.Fatalf("paused: %+v; want no lateness, since the pause", h)
	}

	// Resumed an hour after the fire time: the fire times missed while
	// paused are not late; the schedule has LateAfter from the resume to
	// fire.
	resumer := schedstore.New(e.rdb, schedstore.Config{Layout: testLayout(t, e.rdb, ""), Now: func() time.Time { return long }})
	if ok, err := resumer.Resume(ctx, "paused", ""); !ok || err != nil {
		t.Fatalf("Resume = %v, %v", ok, err)
	}
	wantState(t, "just resumed", e.healthAt(long.Add(time.Minute-time.Second), "paused"), HealthOK)
	wantState(t, "a minute after the resume", e.healthAt(long.Add(time.Minute+time.Second), "paused"), HealthLate)

	// A pause whose Until passed is no pause; lateness counts from Until.
	until := due.Add(30 * time.Minute)
	if err := e.insp.PauseSchedule(ctx, "timed", PauseOptions{Until: until}); err != nil {
		t.Fatal(err)
	}
	wantState(t, "before Until", e.healthAt(until.Add(-time.Second), "timed"), HealthPaused, "until "+fmtHealthTime(until))
	h = e.healthAt(until.Add(30*time.Second), "timed")
	wantState(t, "30s after Until", h, HealthOK)
	if h.Lateness != 30*time.Second {
		t.Fatalf("lateness %v 30s after the pause expired, want 30s", h.Lateness)
	}
	wantState(t, "LateAfter after Until", e.healthAt(until.Add(time.Minute+time.Second), "timed"), HealthLate)
}

func TestAGroupWithEveryJobPausedIsPaused(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	e.declare(everyMinute("nightly", "users", "orders"))
	if err := e.insp.PauseSchedule(ctx, "nightly", PauseOptions{Job: "users"}); err != nil {
		t.Fatal(err)
	}
	late := e.firstFire("nightly").Add(time.Hour)
	wantState(t, "one job paused", e.healthAt(late, "nightly"), HealthLate)
	if err := e.insp.PauseSchedule(ctx, "nightly", PauseOptions{Job: "orders"}); err != nil {
		t.Fatal(err)
	}
	wantState(t, "both jobs paused", e.healthAt(late, "nightly"), HealthPaused, "all 2 jobs paused")
}

func TestARetiredScheduleIsRetiredWhateverItsFireTimeAndRuns(t *testing.T) {
	e := newSchedEnv(t)
	e.declare(everyMinute("old"))
	due := e.firstFire("old")
	for k := range 3 {
		e.ran("tick", "old", rdb.RunDead, due.Add(time.Duration(k)*time.Second), "boom")
	}
	if err := e.insp.RetireSchedule(context.Background(), "old", "bob"); err != nil {
		t.Fatal(err)
	}
	h := e.healthAt(due.Add(time.Hour), "old")
	wantState(t, "retired", h, HealthRetired, "retired by bob")
	if h.Lateness != 0 || h.Since.IsZero() || h.Failures != 3 || h.LastOutcome != rdb.RunDead {
		t.Fatalf("retired: %+v; want no lateness, since the retirement, its runs still reported", h)
	}
}

func TestAScheduleIsFailingWhenItsLastFailingAfterRunsFailed(t *testing.T) {
	e := newSchedEnv(t)
	d := everyMinute("flaky")
	d.FailingAfter = 3
	e.declare(d, everyMinute("neighbour"))
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond) // the records' precision
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

	e.ran("tick", "flaky", rdb.RunSuccess, at(0), "")
	e.ran("tick", "flaky", rdb.RunRetry, at(1), "timeout")
	e.ran("tick", "flaky", rdb.RunDead, at(2), "timeout")
	e.ran("tick", "neighbour", rdb.RunSuccess, at(3), "") // another schedule's run of the same kind
	now := at(10)
	h := e.healthAt(now, "flaky")
	wantState(t, "two failures", h, HealthOK, "2 of 3 failed runs in a row")
	if h.Failures != 2 || h.LastOutcome != rdb.RunDead || !h.LastSuccess.Equal(at(0).Add(time.Second)) || !h.LastRun.Equal(at(2).Add(time.Second)) {
		t.Fatalf("two failures: %+v", h)
	}

	e.ran("tick", "flaky", rdb.RunRetry, at(4), "connection refused\nat line 3")
	h = e.healthAt(now, "flaky")
	wantState(t, "three failures", h, HealthFailing, "last 3 runs of tick failed", "retry at "+fmtHealthTime(at(4).Add(time.Second)), "connection refused at line 3")
	if h.Failures != 3 || !h.Since.Equal(at(1)) || h.LastOutcome != rdb.RunRetry {
		t.Fatalf("failing: %+v; want 3 failures since the first one's start", h)
	}

	e.ran("tick", "flaky", rdb.RunSuccess, at(5), "")
	h = e.healthAt(now, "flaky")
	wantState(t, "after a success", h, HealthOK)
	if h.Failures != 0 || h.Reason != "" || h.LastOutcome != rdb.RunSuccess || !h.LastSuccess.Equal(at(5).Add(time.Second)) {
		t.Fatalf("after a success: %+v", h)
	}
}

// A group is failing when one of its jobs keeps failing, even while the
// others succeed: its runs are counted per task kind.
func TestAGroupIsFailingWhenTheRunsOfOneOfItsKindsFail(t *testing.T) {
	e := newSchedEnv(t)
	e.declare(everyMinute("nightly", "export", "cleanup"))
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for k := range 3 {
		at := t0.Add(time.Duration(k) * time.Minute)
		e.ran("export", "nightly", rdb.RunDead, at, "disk full")
		e.ran("cleanup", "nightly", rdb.RunSuccess, at.Add(time.Second), "")
	}
	h := e.healthAt(t0.Add(10*time.Minute), "nightly")
	wantState(t, "export failing, cleanup fine", h, HealthFailing, "runs of export failed", "disk full")
	if h.LastOutcome != rdb.RunSuccess {
		t.Fatalf("last outcome %q, want the cleanup's success (the newest run)", h.LastOutcome)
	}
}

// An operator who pauses a failing schedule has seen it: it is paused.
func TestPausedTakesPrecedenceOverFailing(t *testing.T) {
	e := newSchedEnv(t)
	e.declare(everyMinute("broken"))
	due := e.firstFire("broken")
	for k := range 3 {
		e.ran("tick", "broken", rdb.RunDead, due.Add(-time.Duration(k+1)*time.Minute), "boom")
	}
	wantState(t, "failing", e.healthAt(due, "broken"), HealthFailing)
	if err := e.insp.PauseSchedule(context.Background(), "broken", PauseOptions{}); err != nil {
		t.Fatal(err)
	}
	if h := e.healthAt(due, "broken"); h.State != HealthPaused || h.Failures != 3 {
		t.Fatalf("paused while failing: %+v; want paused, its failures still counted", h)
	}
}

func TestLateTakesPrecedenceOverFailing(t *testing.T) {
	e := newSchedEnv(t)
	e.declare(everyMinute("broken"))
	due := e.firstFire("broken")
	for k := range 3 {
		e.ran("tick", "broken", rdb.RunDead, due.Add(-time.Duration(k+1)*time.Minute), "boom")
	}
	wantState(t, "failing, before the fire time", e.healthAt(due, "broken"), HealthFailing)
	h := e.healthAt(due.Add(2*time.Minute), "broken")
	wantState(t, "failing and late", h, HealthLate)
	if h.Failures != 3 {
		t.Fatalf("failures %d, want 3 reported with the late state", h.Failures)
	}
}

// An isolated schedule's state lives in its instances: it is late when no
// instance recorded a firing for LateAfter past the fire time that
// follows the newest record.
func TestAnIsolatedScheduleIsLateWhenNoInstanceFiredIt(t *testing.T) {
	e := newSchedEnv(t)
	d := everyMinute("local-logs")
	d.Isolated = true
	e.declare(d)
	sc, err := testStore(t, e.rdb).Get(context.Background(), "local-logs")
	if err != nil {
		t.Fatal(err)
	}
	first := sc.DefChanged.Truncate(time.Minute).Add(time.Minute)
	wantState(t, "no firing yet, before the first fire time's grace", e.healthAt(first.Add(time.Minute), "local-logs"), HealthOK)
	h := e.healthAt(first.Add(time.Minute+time.Second), "local-logs")
	wantState(t, "never fired", h, HealthLate, "no instance fired it")
	if !h.Since.Equal(first) {
		t.Fatalf("late since %v, want the first fire time %v", h.Since, first)
	}

	slot := first.Add(10 * time.Minute)
	rec := schedstore.FiringRecord{At: slot, Slot: slot, Source: "isolated", Instance: "iso-a"}
	if err := testStore(t, e.rdb).AppendHistory(context.Background(), "local-logs", rec, 10); err != nil {
		t.Fatal(err)
	}
	wantState(t, "fired at the slot", e.healthAt(slot.Add(2*time.Minute), "local-logs"), HealthOK)
	h = e.healthAt(slot.Add(2*time.Minute+time.Second), "local-logs")
	wantState(t, "nothing since the slot", h, HealthLate)
	if !h.Since.Equal(slot.Add(time.Minute)) {
		t.Fatalf("late since %v, want the slot after the last firing", h.Since)
	}
}

func TestScheduleHealthLeavesOutUnknownIDsAndReadsAllWithoutIDs(t *testing.T) {
	e := newSchedEnv(t)
	e.declare(everyMinute("a"), everyMinute("b"))
	ctx := context.Background()
	hs, err := e.insp.ScheduleHealth(ctx, "a", "nope")
	if err != nil || len(hs) != 1 || hs["a"] == nil {
		t.Fatalf("ScheduleHealth(a, nope) = %v, %v; want a only", hs, err)
	}
	hs, err = e.insp.ScheduleHealth(ctx)
	if err != nil || len(hs) != 2 || hs["a"] == nil || hs["b"] == nil {
		t.Fatalf("ScheduleHealth() = %v, %v; want a and b", hs, err)
	}
}

// roundTrips counts the commands and pipelines a client sends, leaving out
// the handshake of each new connection.
type roundTrips struct{ n atomic.Int64 }

func handshake(cmd redis.Cmder) bool { return cmd.Name() == "hello" || cmd.Name() == "client" }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !handshake(cmd) {
			r.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && !handshake(cmds[0]) {
			r.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// The cost ScheduleHealth documents: a fixed number of round trips for
// any number of schedules, and a kind's older records read only when its
// newest do not show each of its schedules succeed.
func TestScheduleHealthCostsAFixedNumberOfRoundTrips(t *testing.T) {
	e := newSchedEnv(t)
	var defs []schedstore.Definition
	for k := range 50 {
		d := everyMinute("s" + string(rune('a'+k%26)) + string(rune('a'+k/26)))
		d.Isolated = k%2 == 0
		defs = append(defs, d)
	}
	defs = append(defs, everyMinute("busy"), everyMinute("rare"), everyMinute("lost"))
	e.declare(defs...)
	// rare's success is among the newest 1,000 records of tick, but not
	// the newest 100; lost's is beyond.
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond) // the records' precision
	e.ran("tick", "lost", rdb.RunSuccess, t0.Add(-time.Minute), "")
	for k := range 30 {
		e.ran("tick", "busy", rdb.RunSuccess, t0.Add(-time.Duration(k+1)*time.Millisecond), "")
	}
	e.ran("tick", "rare", rdb.RunSuccess, t0, "")
	for k := range healthRunDepth - 30 {
		e.ran("tick", "busy", rdb.RunSuccess, t0.Add(time.Duration(k+1)*time.Millisecond), "")
	}

	c := e.redis.NewClient()
	var rt roundTrips
	c.AddHook(&rt)
	insp := NewInspector(c)
	// An Inspector reads the namespace's layout once, at its first use.
	if _, err := insp.ScheduleHealth(context.Background()); err != nil {
		t.Fatal(err)
	}
	rt.n.Store(0)
	hs, err := insp.ScheduleHealth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// List (2: the partitions' indexes, then the schedules), the isolated
	// schedules' newest firings (1), the newest runs (1), the older runs
	// of tick for rare (1).
	if got := rt.n.Load(); got != 5 {
		t.Errorf("%d round trips for %d schedules, want 5", got, len(hs))
	}
	if h := hs["rare"]; !h.LastSuccess.Equal(t0.Add(time.Second)) {
		t.Errorf("rare: last success %v, want %v from beyond the first %d records", h.LastSuccess, t0.Add(time.Second), healthRunScan)
	}
	if h := hs["lost"]; !h.LastSuccess.IsZero() || h.LastOutcome != "" {
		t.Errorf("lost: %+v; want nothing known beyond the newest %d records", h, healthRunDepth)
	}
}
