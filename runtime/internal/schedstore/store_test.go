package schedstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/redis/go-redis/v9"
)

var ctx = context.Background()

var t0 = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

// clock is a shared fake "now" for several stores (instances).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// world is one Redis shared by instances that each have their own Store.
type world struct {
	t   *testing.T
	srv *redistest.Server
	rdb redis.UniversalClient
	clk *clock
}

// newWorld gives t a private redis-server, and runs t in parallel with the
// package's other tests on theirs.
func newWorld(t *testing.T, opts ...redistest.Options) *world {
	redistest.Parallel(t)
	s := redistest.Start(t, opts...)
	return &world{t: t, srv: s, rdb: s.Client(), clk: &clock{t: t0}}
}

func (w *world) store() *Store {
	return New(w.rdb, Config{Layout: testLayout(), Now: w.clk.Now, InstanceTTL: 15 * time.Second, RetireGrace: time.Hour})
}

// instance starts an instance: a heartbeat, then its registrations.
func (w *world) instance(id, version string, defs ...Definition) (*Store, Instance) {
	w.t.Helper()
	st := w.store()
	inst := Instance{ID: id, Host: "host-" + id, PID: 100, Version: version, Started: w.clk.Now(), Declares: len(defs) > 0}
	if _, err := st.Heartbeat(ctx, inst); err != nil {
		w.t.Fatal(err)
	}
	if len(defs) > 0 {
		if _, err := st.Register(ctx, inst.Declarer(), defs); err != nil {
			w.t.Fatal(err)
		}
	}
	return st, inst
}

func def(id, spec string) Definition {
	return Definition{
		ID: id, Kind: "cron", Spec: spec, Zone: "Europe/Paris", Policy: "smartPolicy",
		Jobs:   []Job{{Name: "main", Kind: "report", Payload: []byte(`{"n":1}`), Options: map[string]string{"queue": "low"}}},
		Source: "report.go:12",
	}
}

func mustGet(t *testing.T, st *Store, id string) Schedule {
	t.Helper()
	sc, err := st.Get(ctx, id)
	if err != nil {
		t.Fatalf("Get(%q): %v", id, err)
	}
	return sc
}

func TestRegisterStoresTheDefinitionAndWhoDeclaredIt(t *testing.T) {
	w := newWorld(t)
	d := def("nightly", "0 0 2 * * ?")
	d.Group, d.Isolated, d.Overlap = "reports", true, "skip"
	d.Jobs = append(d.Jobs, Job{Name: "second", Kind: "cleanup"})
	st, inst := w.instance("a", "v1.0.0")
	res, err := st.Register(ctx, inst.Declarer(), []Definition{d})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcomes["nightly"] != Created {
		t.Fatalf("outcome = %v, want created", res.Outcomes["nightly"])
	}
	sc := mustGet(t, st, "nightly")
	if sc.Definition.Hash() != d.Hash() || sc.DefHash != d.Hash() || sc.Source != d.Source || !sc.Isolated {
		t.Fatalf("stored definition differs:\n got %+v\nwant %+v", sc.Definition, d)
	}
	if !slices.EqualFunc(sc.Jobs, d.Jobs, func(a, b Job) bool { return a.Name == b.Name && string(a.Payload) == string(b.Payload) }) {
		t.Fatalf("jobs = %+v", sc.Jobs)
	}
	if sc.DeclaredBy != inst.Declarer() || !sc.Created.Equal(t0) || !sc.DefChanged.Equal(t0) {
		t.Fatalf("declared by %+v created %v changed %v", sc.DeclaredBy, sc.Created, sc.DefChanged)
	}

	// Registering the same thing again changes nothing.
	res, _ = st.Register(ctx, inst.Declarer(), []Definition{d})
	if res.Outcomes["nightly"] != Current {
		t.Fatalf("re-register outcome = %v, want current", res.Outcomes["nightly"])
	}
	all, err := st.List(ctx)
	if err != nil || len(all) != 1 || all[0].ID != "nightly" {
		t.Fatalf("List = %v, %v", all, err)
	}
}

func TestRegisterRejectsInvalidDefinitions(t *testing.T) {
	w := newWorld(t)
	st, inst := w.instance("a", "v1")
	for name, d := range map[string]Definition{
		"no id":    {Kind: "cron", Spec: "x", Jobs: []Job{{Name: "j", Kind: "k"}}},
		"braces":   {ID: "a{b}", Kind: "cron", Spec: "x", Jobs: []Job{{Name: "j", Kind: "k"}}},
		"no jobs":  {ID: "a", Kind: "cron", Spec: "x"},
		"dup jobs": {ID: "a", Kind: "cron", Spec: "x", Jobs: []Job{{Name: "j", Kind: "k"}, {Name: "j", Kind: "k"}}},
		"no spec":  {ID: "a", Kind: "cron", Jobs: []Job{{Name: "j", Kind: "k"}}},
		"job kind": {ID: "a", Kind: "cron", Spec: "x", Jobs: []Job{{Name: "j"}}},
	} {
		if _, err := st.Register(ctx, inst.Declarer(), []Definition{d}); !errors.Is(err, ErrInvalidDefinition) {
			t.Errorf("%s: %v, want ErrInvalidDefinition", name, err)
		}
	}
	if _, err := st.Register(ctx, inst.Declarer(), []Definition{def("x", "a"), def("x", "b")}); !errors.Is(err, ErrInvalidDefinition) {
		t.Errorf("same ID twice: %v, want ErrInvalidDefinition", err)
	}
}

func TestHigherVersionWinsAndAnOldRestartDoesNotTakeItBack(t *testing.T) {
	w := newWorld(t)
	old, oldInst := w.instance("old-1", "v1.9.0", def("s", "0 0 * * * ?"))
	sc := mustGet(t, old, "s")
	if sc.Spec != "0 0 * * * ?" {
		t.Fatalf("spec %q", sc.Spec)
	}

	// The rolling deploy starts a v1.10.0 instance with a new spec.
	w.clk.Advance(5 * time.Second)
	newer, newInst := w.instance("new-1", "v1.10.0")
	res, err := newer.Register(ctx, newInst.Declarer(), []Definition{def("s", "0 30 * * * ?")})
	if err != nil || res.Outcomes["s"] != Changed {
		t.Fatalf("newer register: %v %v, want changed", res.Outcomes, err)
	}
	sc = mustGet(t, old, "s")
	if sc.Spec != "0 30 * * * ?" || sc.DeclaredBy.InstanceID != "new-1" || !sc.DefChanged.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("after newer register: spec %q by %q changed %v", sc.Spec, sc.DeclaredBy.InstanceID, sc.DefChanged)
	}

	// An old-version instance restarts mid-deploy (later start time): the
	// newer definition stays, and the disagreement is reported.
	w.clk.Advance(5 * time.Second)
	_, oldInst = w.instance("old-2", "v1.9.0")
	res, err = old.Register(ctx, oldInst.Declarer(), []Definition{def("s", "0 0 * * * ?")})
	if err != nil || res.Outcomes["s"] != Outranked || !slices.Equal(res.Conflicts, []string{"s"}) {
		t.Fatalf("old restart: %v conflicts %v err %v", res.Outcomes, res.Conflicts, err)
	}
	if sc = mustGet(t, old, "s"); sc.Spec != "0 30 * * * ?" {
		t.Fatalf("old restart took the schedule back: %q", sc.Spec)
	}
}

func TestSameVersionLaterStartWins(t *testing.T) {
	w := newWorld(t)
	st, _ := w.instance("a", "v2", def("s", "first"))
	w.clk.Advance(time.Second)
	w.instance("b", "v2", def("s", "second"))
	if sc := mustGet(t, st, "s"); sc.Spec != "second" || sc.DeclaredBy.InstanceID != "b" {
		t.Fatalf("spec %q by %q; want the later instance's", sc.Spec, sc.DeclaredBy.InstanceID)
	}
}

func TestRollbackTakesEffectWhenTheNewerInstancesAreGone(t *testing.T) {
	w := newWorld(t)
	old, oldInst := w.instance("old", "v1", def("s", "v1 spec"))
	w.instance("new", "v2", def("s", "v2 spec"))
	if sc := mustGet(t, old, "s"); sc.Spec != "v2 spec" {
		t.Fatalf("spec %q", sc.Spec)
	}
	// The v2 instance is rolled back: it stops heartbeating; the old one
	// keeps going. Once v2's heartbeat has expired, a sweep hands the
	// schedule back to the best live declarer.
	w.clk.Advance(10 * time.Second)
	old.Heartbeat(ctx, oldInst)
	if res, _ := old.Sweep(ctx); len(res.Handed) != 0 {
		t.Fatalf("handed over while v2 still live: %v", res.Handed)
	}
	w.clk.Advance(10 * time.Second)
	old.Heartbeat(ctx, oldInst)
	res, err := old.Sweep(ctx)
	if err != nil || !slices.Equal(res.Handed, []string{"s"}) || res.Live != 1 {
		t.Fatalf("sweep = %+v, %v; want s handed over, 1 live", res, err)
	}
	if sc := mustGet(t, old, "s"); sc.Spec != "v1 spec" || sc.DeclaredBy.InstanceID != "old" {
		t.Fatalf("after rollback: spec %q by %q", sc.Spec, sc.DeclaredBy.InstanceID)
	}
}

func TestScheduleAddedByANewerInstanceIsVisibleToAnOlderLeader(t *testing.T) {
	w := newWorld(t)
	older, olderInst := w.instance("old-leader", "v1", def("known", "a"))
	// A v2 instance adds a schedule with a job kind v1 has never heard of.
	added := def("added-in-v2", "0 15 * * * ?")
	added.Jobs = []Job{{Name: "main", Kind: "new-task-kind", Payload: []byte(`{"fresh":true}`)}}
	w.instance("new", "v2", def("known", "a"), added)

	// The older leader fires from the registry, so it sees the whole
	// definition, payload included, and its sweeps keep it.
	all, err := older.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != "added-in-v2" {
		t.Fatalf("older leader lists %d schedules: %+v", len(all), all)
	}
	if j := all[0].Jobs[0]; j.Kind != "new-task-kind" || string(j.Payload) != `{"fresh":true}` {
		t.Fatalf("job as the older leader sees it: %+v", j)
	}
	w.clk.Advance(2 * time.Hour) // past RetireGrace, with both instances alive
	older.Heartbeat(ctx, olderInst)
	w.store().Heartbeat(ctx, Instance{ID: "new", Version: "v2", Started: t0})
	res, err := older.Sweep(ctx)
	if err != nil || len(res.Retired)+len(res.Deleted) != 0 {
		t.Fatalf("sweep by the older leader = %+v, %v; want nothing retired", res, err)
	}
}

// A schedule that no live instance declares any more is retired once a
// second sweep, a heartbeat later, still finds it undeclared: the leader
// stops firing it and its state is kept, as a tombstone, until RetireGrace
// after its last declaration, when it is deleted. A rollback that declares
// it again revives it with its state.
func TestAnUndeclaredScheduleIsRetiredThenDeletedAfterTheGracePeriod(t *testing.T) {
	w := newWorld(t)
	st, inst := w.instance("stays", "v1", def("kept", "a"))
	w.instance("leaves", "v1", def("kept", "a"), def("dropped", "b"))
	if err := st.SaveState(ctx, holdLease(t, w), "dropped", TriggerState{Prev: t0, Next: t0.Add(time.Minute)}, "fired"); err != nil {
		t.Fatal(err)
	}
	if err := st.Deregister(ctx, "leaves"); err != nil {
		t.Fatal(err)
	}
	sweep := func() SweepResult {
		t.Helper()
		st.Heartbeat(ctx, inst)
		res, err := st.Sweep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := sweep(); len(res.Retired)+len(res.Deleted) != 0 {
		t.Fatalf("retired at the first look: %+v", res)
	}
	w.clk.Advance(5 * time.Second) // a heartbeat (InstanceTTL/3)
	if res := sweep(); !slices.Equal(res.Retired, []string{"dropped"}) || len(res.Deleted) != 0 {
		t.Fatalf("second look = %+v, want dropped retired", res)
	}
	sc := mustGet(t, st, "dropped")
	if !sc.Retired.Equal(w.clk.Now()) || sc.RetiredBy != "" || !sc.State.Prev.Equal(t0) {
		t.Fatalf("tombstone = retired %v by %q, prev %v; want retired now with its state", sc.Retired, sc.RetiredBy, sc.State.Prev)
	}
	if res := sweep(); len(res.Retired) != 0 {
		t.Fatalf("retired again: %v", res.Retired)
	}
	w.clk.Advance(59 * time.Minute)
	if res := sweep(); len(res.Deleted) != 0 {
		t.Fatalf("deleted within the grace period: %v", res.Deleted)
	}
	w.clk.Advance(2 * time.Minute)
	if res := sweep(); !slices.Equal(res.Deleted, []string{"dropped"}) {
		t.Fatalf("deleted %v, want [dropped]", res.Deleted)
	}
	if _, err := st.Get(ctx, "dropped"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(dropped) after deletion: %v", err)
	}
	mustGet(t, st, "kept")
}

func TestARetiredScheduleDeclaredAgainIsRevivedWithItsState(t *testing.T) {
	w := newWorld(t)
	st, inst := w.instance("stays", "v1", def("kept", "a"))
	w.instance("v2", "v2", def("kept", "a"), def("rolled-back", "b"))
	if err := st.SaveState(ctx, holdLease(t, w), "rolled-back", TriggerState{Prev: t0, Next: t0.Add(time.Minute)}, "fired"); err != nil {
		t.Fatal(err)
	}
	if err := st.Deregister(ctx, "v2"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		st.Heartbeat(ctx, inst)
		mustSweep(t, st)
		w.clk.Advance(5 * time.Second)
	}
	if sc := mustGet(t, st, "rolled-back"); sc.Retired.IsZero() {
		t.Fatal("not retired")
	}
	// The v2 instance comes back (a rollback of the rollback): its
	// registration revives the schedule with its state.
	back, _ := w.instance("v2-again", "v2", def("kept", "a"), def("rolled-back", "b"))
	res, err := back.Register(ctx, Declarer{InstanceID: "v2-again", Version: "v2", Started: t0}, []Definition{def("kept", "a"), def("rolled-back", "b")})
	if err != nil {
		t.Fatal(err)
	}
	_ = res
	sc := mustGet(t, st, "rolled-back")
	if !sc.Retired.IsZero() || !sc.State.Prev.Equal(t0) {
		t.Fatalf("after a new declaration: retired %v, prev %v; want in force with its state", sc.Retired, sc.State.Prev)
	}
}

func TestHeartbeatsTrackLiveInstancesAndAgeOutStaleOnes(t *testing.T) {
	w := newWorld(t)
	st, a := w.instance("a", "v1")
	_, b := w.instance("b", "v1")
	b.Leader = true
	st.Heartbeat(ctx, b)
	got, err := st.Instances(ctx)
	if err != nil || len(got) != 2 || got[0].ID != "a" || !got[1].Leader || got[1].Host != "host-b" || got[1].PID != 100 {
		t.Fatalf("Instances = %+v, %v", got, err)
	}
	w.clk.Advance(16 * time.Second) // b stops; a heartbeats
	res, err := st.Heartbeat(ctx, a)
	if err != nil || res.Aged != 1 {
		t.Fatalf("heartbeat aged out %d, %v; want 1 (b)", res.Aged, err)
	}
	got, _ = st.Instances(ctx)
	if len(got) != 1 || got[0].ID != "a" || !got[0].LastSeen.Equal(w.clk.Now()) {
		t.Fatalf("Instances = %+v, want only a, seen now", got)
	}
}

func TestPausesAreDurableAndCanEndOnTheirOwn(t *testing.T) {
	w := newWorld(t)
	g := def("group", "x")
	g.Jobs = append(g.Jobs, Job{Name: "extra", Kind: "other"})
	st, _ := w.instance("a", "v1", g)

	until := t0.Add(time.Hour)
	if err := st.Pause(ctx, "group", Pause{Note: "maintenance", Who: "ops", Until: until}); err != nil {
		t.Fatal(err)
	}
	sc := mustGet(t, st, "group")
	if !sc.Paused(t0) || sc.State.Pause.Note != "maintenance" || sc.State.Pause.Who != "ops" || !sc.State.Pause.Until.Equal(until) {
		t.Fatalf("pause = %+v", sc.State.Pause)
	}
	if sc.Paused(until) {
		t.Fatal("pause still in force at its Until")
	}
	if ok, _ := st.Resume(ctx, "group", ""); !ok {
		t.Fatal("Resume reported no pause")
	}
	if sc = mustGet(t, st, "group"); sc.Paused(t0) {
		t.Fatal("still paused after Resume")
	}

	if err := st.Pause(ctx, "group", Pause{Job: "extra", Who: "ops"}); err != nil {
		t.Fatal(err)
	}
	sc = mustGet(t, st, "group")
	if !sc.JobPaused("extra", t0) || sc.JobPaused("main", t0) || sc.Paused(t0) {
		t.Fatalf("job pauses = %+v", sc.State.JobPauses)
	}
	// A redeploy re-registers the definition; the pause stays.
	st.Register(ctx, Declarer{InstanceID: "a", Version: "v1", Started: t0}, []Definition{g})
	if !mustGet(t, st, "group").JobPaused("extra", t0) {
		t.Fatal("job pause lost by re-registration")
	}
	if ok, _ := st.Resume(ctx, "group", "extra"); !ok {
		t.Fatal("Resume of the job reported no pause")
	}

	if err := st.Pause(ctx, "group", Pause{Job: "nope"}); !errors.Is(err, ErrNoSuchJob) {
		t.Fatalf("pause of unknown job: %v", err)
	}
	if err := st.Pause(ctx, "missing", Pause{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("pause of unknown schedule: %v", err)
	}
}

func TestRequestsSurviveARedisRestartUntilCompleted(t *testing.T) {
	w := newWorld(t, redistest.Options{AOF: true})
	st, _ := w.instance("a", "v1", def("s", "x"))
	trig, err := st.RequestTrigger(ctx, "s", "alice")
	if err != nil {
		t.Fatal(err)
	}
	w.clk.Advance(time.Millisecond)
	from, to := t0.Add(-48*time.Hour), t0.Add(-24*time.Hour)
	back, err := st.RequestBackfill(ctx, "s", from, to, 2, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RequestTrigger(ctx, "missing", "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("request for unknown schedule: %v", err)
	}
	if _, err := st.RequestBackfill(ctx, "s", to, from, 0, "x"); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("backfill with from > to: %v", err)
	}

	w.srv.Kill()
	w.srv.Restart()

	got, err := st.Requests(ctx, 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("Requests after restart = %+v, %v", got, err)
	}
	if got[0].ID != trig.ID || got[0].Kind != KindTriggerNow || got[0].Who != "alice" {
		t.Fatalf("first request = %+v, want the trigger", got[0])
	}
	if got[1].ID != back.ID || got[1].Kind != KindBackfill || !got[1].From.Equal(from) || !got[1].To.Equal(to) {
		t.Fatalf("second request = %+v, want the backfill", got[1])
	}
	if ok, err := st.CompleteRequest(ctx, trig); !ok || err != nil {
		t.Fatalf("CompleteRequest = %v, %v", ok, err)
	}
	if ok, _ := st.CompleteRequest(ctx, trig); ok {
		t.Fatal("a request completed twice")
	}
	if got, _ = st.Requests(ctx, 10); len(got) != 1 || got[0].ID != back.ID {
		t.Fatalf("Requests after completion = %+v", got)
	}
}

// Requests made one after another in the same millisecond, as a program
// triggering a schedule and then backfilling it makes them, are listed,
// and so carried out, in the order they were made, not in the order of
// random ID suffixes.
func TestRequestsOfOneMillisecondKeepTheOrderTheyWereMadeIn(t *testing.T) {
	w := newWorld(t)
	st, _ := w.instance("a", "v1", def("s", "x"), def("t", "x"))
	var made []string
	for i := range 20 {
		id := []string{"s", "t"}[i%2] // two schedules, in one partition or two
		var r Request
		var err error
		if i%3 == 0 {
			r, err = st.RequestBackfill(ctx, id, t0.Add(-time.Hour), t0, 1, "test")
		} else {
			r, err = st.RequestTrigger(ctx, id, "test")
		}
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, r.ID)
	}
	got, err := st.Requests(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, r := range got {
		listed = append(listed, r.ID)
	}
	if !slices.Equal(listed, made) {
		t.Fatalf("requests listed in the order\n%v\nmade in the order\n%v", listed, made)
	}
}

func TestSaveStateIsFencedAndNeverMovesBack(t *testing.T) {
	w := newWorld(t)
	st, _ := w.instance("a", "v1", def("s", "x"))
	cur := leader.Term{Token: "7:a:n1", Epoch: 7}
	stale := leader.Term{Token: "6:b:n2", Epoch: 6}
	for _, id := range []string{"s", "missing"} {
		w.rdb.Set(ctx, st.Lease(st.PartitionOf(id)).Lock, cur.Token, time.Minute)
	}

	at := t0.Add(time.Hour)
	ts := TriggerState{Prev: at, Next: at.Add(time.Hour), Start: t0, TimesTriggered: 3, RepeatCount: 10}
	if err := st.SaveState(ctx, cur, "s", ts, "enqueued"); err != nil {
		t.Fatal(err)
	}
	later := ts
	later.Prev, later.Next = at.Add(time.Hour), at.Add(2*time.Hour)
	if err := st.SaveState(ctx, stale, "s", later, "enqueued"); !errors.Is(err, leader.ErrFenced) {
		t.Fatalf("save with a stale term: %v, want ErrFenced", err)
	}
	earlier := ts
	earlier.Prev = at.Add(-time.Hour)
	if err := st.SaveState(ctx, cur, "s", earlier, "late"); !errors.Is(err, ErrStale) {
		t.Fatalf("save of an earlier firing: %v, want ErrStale", err)
	}
	if err := st.SaveState(ctx, cur, "missing", ts, ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("save for unknown schedule: %v", err)
	}
	sc := mustGet(t, st, "s")
	if sc.State.TriggerState != ts || sc.State.LastOutcome != "enqueued" || !sc.State.Saved.Equal(t0) {
		t.Fatalf("state = %+v, want %+v", sc.State, ts)
	}

	// A doNothing evaluation moves Next without firing: same Prev is fine,
	// and completing the trigger is recorded.
	done := ts
	done.Next, done.Complete = time.Time{}, true
	if err := st.SaveState(ctx, cur, "s", done, "misfire:doNothing"); err != nil {
		t.Fatal(err)
	}
	if sc = mustGet(t, st, "s"); sc.State.TriggerState != done {
		t.Fatalf("state = %+v, want %+v", sc.State.TriggerState, done)
	}
}

func TestVersionsCompareInNaturalOrder(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"v1.10.0", "v1.9.0", 1},
		{"v1.2.0", "v1.2.0", 0},
		{"", "v0", -1},
		{"build-100", "build-99", 1},
		{"v2.0.0-rc1", "v2.0.0", 1}, // not semver: longer wins on a common prefix
		{"1.02", "1.2", 0},
		{"a", "b", -1},
	} {
		if got := compareVersions(c.a, c.b); got != c.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// holdLease makes the test the leader of every partition by setting the
// leases itself, for writes that go through the fence.
func holdLease(t *testing.T, w *world) leader.Term {
	t.Helper()
	term := leader.Term{Token: "1:test:lease", Epoch: 1}
	st := w.store()
	for p := range st.Partitions() {
		if err := w.rdb.Set(ctx, st.Lease(p).Lock, term.Token, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return term
}
