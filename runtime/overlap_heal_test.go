package chronos

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// The fire script drops an overlap marker whose task no longer exists
// anywhere (rdb/overlap.go) and never one whose task is queued, delayed,
// running or waiting to retry. The rig below fires one schedule's job
// through the script the leader runs, under a lease it holds itself, and
// plays the worker by hand, so each test decides where the previous run is
// when the next trigger fires.

const rigSchedule = "nightly"

type overlapRig struct {
	t    *testing.T
	ctx  context.Context
	c    redis.UniversalClient
	q    *rdb.RDB
	s    *Scheduler
	logs *logBuffer
	plan *plan
	slot time.Time
	term leader.Term
}

func newOverlapRig(t *testing.T, o Overlap, processIn time.Duration) *overlapRig {
	t.Helper()
	c := StartTestRedis(t).NewClient()
	logs := &logBuffer{}
	s := NewScheduler(c, SchedulerConfig{InstanceID: "rig", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	MarkTestLayout(t, c, "")
	s.store = testStore(t, c)                              // fire without Start
	q := &rdb.RDB{C: c, K: QueueKeysOf(t, c, rigSchedule)} // the schedule's partition
	r := &overlapRig{t: t, ctx: context.Background(), c: c, q: q, s: s, logs: logs,
		plan: &plan{overlap: o, jobs: []planJob{{Job: schedstore.Job{Name: mainJob, Kind: "tick", Payload: json.RawMessage(`{"n":1}`)},
			opts: &taskOptions{processIn: processIn}}}},
		slot: time.Now().Truncate(time.Second), term: holdLease(t, c)}
	if err := r.q.EnsureGroup(r.ctx, DefaultQueue); err != nil {
		t.Fatal(err)
	}
	return r
}

// fire fires the next trigger. It returns what became of the job, the ID
// of the task the firing stands for, and the IDs of the runs it cleared.
func (r *overlapRig) fire() (result, task string, cleared []string) {
	r.t.Helper()
	r.slot = r.slot.Add(time.Second)
	req := &fireReq{id: rigSchedule, plan: r.plan, slot: r.slot, at: r.slot, dedup: dedupKey(rigSchedule, r.slot), source: "trigger"}
	res := r.s.fire(r.ctx, r.term, []*fireReq{req})[0]
	if res.Err != nil || res.Status != fireFired || len(res.Jobs) != 1 {
		r.t.Fatalf("fire: %v, status %q, jobs %v", res.Err, res.Status, res.Jobs)
	}
	rec := r.lastRecord()
	for _, j := range rec.Jobs {
		switch {
		case j.Result == "cleared":
			cleared = append(cleared, j.TaskID)
		case task == "":
			task = j.TaskID
		}
	}
	var reported []string
	for _, c := range res.Cleared {
		reported = append(reported, c.Task)
	}
	if !slices.Equal(reported, cleared) {
		r.t.Fatalf("the script reported %v cleared, the history %v", reported, cleared)
	}
	return res.Jobs[0], task, cleared
}

// mustFire fires the next trigger and fails unless the job's result is want
// and exactly the runs clear were cleared. It returns the firing's task ID.
func (r *overlapRig) mustFire(want string, clear ...string) string {
	r.t.Helper()
	got, task, cleared := r.fire()
	if got != want || !slices.Equal(cleared, clear) {
		r.t.Fatalf("firing: %s with %v cleared; want %s with %v cleared", got, cleared, want, clear)
	}
	return task
}

func (r *overlapRig) lastRecord() *FiringRecord {
	r.t.Helper()
	h, err := NewInspector(r.c).ScheduleHistory(r.ctx, rigSchedule, 1)
	if err != nil || len(h) != 1 {
		r.t.Fatalf("history: %v, %d records", err, len(h))
	}
	return h[0]
}

// queued returns the IDs of the tasks in the queue's stream, in order.
func (r *overlapRig) queued() []string {
	r.t.Helper()
	var ids []string
	for _, x := range r.entries() {
		m, err := rdb.Decode([]byte(x.Values["m"].(string)))
		if err != nil {
			r.t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	return ids
}

func (r *overlapRig) entries() []redis.XMessage {
	r.t.Helper()
	xs, err := r.c.XRange(r.ctx, r.q.K.Stream(DefaultQueue), "-", "+").Result()
	if err != nil {
		r.t.Fatal(err)
	}
	return xs
}

// take fetches the next task as worker "w": it is running from then on.
func (r *overlapRig) take() rdb.Entry {
	r.t.Helper()
	es, _, err := r.q.Fetch(r.ctx, "w", []string{DefaultQueue}, 1)
	if err != nil || len(es) != 1 {
		r.t.Fatalf("fetch: %v, %d entries", err, len(es))
	}
	return es[0]
}

// finish ends a delivery the way the server does; due is the retry's.
func (r *overlapRig) finish(e rdb.Entry, o rdb.Outcome, due time.Time) rdb.FinishResult {
	r.t.Helper()
	m, err := rdb.Decode([]byte(e.Msg))
	if err != nil {
		r.t.Fatal(err)
	}
	f := &rdb.Finish{Queue: e.Queue, EntryID: e.ID, Outcome: o, TaskID: m.ID, Kind: m.Kind, DeadCap: 100, Overlap: m.Overlap}
	if o == rdb.Retry {
		m.Attempt++
		f.At = due
		if f.Msg, err = m.Encode(); err != nil {
			r.t.Fatal(err)
		}
	}
	res, err := r.q.Finish(r.ctx, "w", f)
	if err != nil {
		r.t.Fatal(err)
	}
	return res
}

// forward moves the delayed tasks due by at to the stream, as a server's
// forwarder does.
func (r *overlapRig) forward(at time.Time) {
	r.t.Helper()
	if _, _, err := r.q.Forward(r.ctx, DefaultQueue, at, 1000); err != nil {
		r.t.Fatal(err)
	}
}

// backlog enqueues n tasks of another kind to the same queue.
func (r *overlapRig) backlog(n int) {
	r.t.Helper()
	now := time.Now()
	for range n {
		m := &rdb.Message{ID: rdb.NewID(now), Kind: "other", Args: json.RawMessage(`{}`), Queue: DefaultQueue}
		b, err := m.Encode()
		if err != nil {
			r.t.Fatal(err)
		}
		if _, _, err := r.q.Enqueue(r.ctx, DefaultQueue, b, m.ID, time.Time{}, now, "", 0); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *overlapRig) do(cmd ...any) {
	r.t.Helper()
	if err := r.c.Do(r.ctx, cmd...).Err(); err != nil {
		r.t.Fatalf("%v: %v", cmd, err)
	}
}

func TestOverlapCheckKeepsARunWhereverItIs(t *testing.T) {
	hour := time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name      string
		processIn time.Duration
		stages    []string
	}{
		{"enqueued at once", 0, []string{"queued", "running", "waiting to retry", "forwarded for its retry", "running its retry"}},
		{"enqueued delayed", time.Hour, []string{"delayed", "forwarded", "running", "waiting to retry", "forwarded for its retry"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newOverlapRig(t, OverlapSkip, tc.processIn)
			run := r.mustFire("enqueued")
			var e rdb.Entry
			for i, stage := range tc.stages {
				switch stage {
				case "queued", "delayed":
				case "running", "running its retry":
					e = r.take()
				case "waiting to retry":
					r.finish(e, rdb.Retry, hour.Add(time.Duration(i)*time.Hour))
				case "forwarded", "forwarded for its retry":
					r.forward(hour.Add(time.Duration(i+1) * time.Hour))
					if q := r.queued(); !slices.Equal(q, []string{run}) {
						t.Fatalf("queue after forwarding: %v", q)
					}
				}
				if got, _, cleared := r.fire(); got != "skipped" || len(cleared) > 0 {
					t.Fatalf("run %s: firing %s with %v cleared; want skipped, nothing cleared", stage, got, cleared)
				}
			}
			if strings.Contains(r.logs.String(), "no longer queued") {
				t.Errorf("a live run was logged as gone:\n%s", r.logs)
			}
			// The run ends as usual: the next firing enqueues.
			if tc.stages[len(tc.stages)-1] != "running its retry" {
				e = r.take()
			}
			r.finish(e, rdb.Done, time.Time{})
			r.mustFire("enqueued")
		})
	}
}

func TestOverlapCheckClearsARunThatVanished(t *testing.T) {
	for _, tc := range []struct {
		name      string
		processIn time.Duration
		lose      func(r *overlapRig)
	}{
		{"queued, its stream entry deleted", 0, func(r *overlapRig) {
			r.do("XDEL", r.q.K.Stream(DefaultQueue), r.entries()[0].ID)
		}},
		{"queued, its queue's stream deleted", 0, func(r *overlapRig) {
			r.do("DEL", r.q.K.Stream(DefaultQueue))
		}},
		{"running, its stream entry deleted", 0, func(r *overlapRig) {
			r.do("XDEL", r.q.K.Stream(DefaultQueue), r.take().ID)
		}},
		{"delayed, its delayed set deleted", time.Hour, func(r *overlapRig) {
			r.do("DEL", r.q.K.Delayed(DefaultQueue))
		}},
		{"waiting to retry, removed from the delayed set", 0, func(r *overlapRig) {
			r.finish(r.take(), rdb.Retry, time.Now().Add(time.Hour))
			r.do("ZREMRANGEBYRANK", r.q.K.Delayed(DefaultQueue), 0, -1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newOverlapRig(t, OverlapSkip, tc.processIn)
			lost := r.mustFire("enqueued")
			r.mustFire("skipped")
			tc.lose(r)

			next := r.mustFire("enqueued", lost)
			rec := r.lastRecord()
			want := []FiringJob{{Job: mainJob, TaskID: next, Result: "enqueued"}, {Job: mainJob, TaskID: lost, Result: "cleared"}}
			if !slices.Equal(rec.Jobs, want) {
				t.Errorf("history record: %+v, want %+v", rec.Jobs, want)
			}
			if logs := r.logs.String(); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "task_id="+lost) {
				t.Errorf("no warning names the cleared run %s:\n%s", lost, logs)
			}
			// The new run is alive: the firings after it skip again.
			r.mustFire("skipped")
		})
	}
}

func TestOverlapCheckIgnoresTheLateFinishOfAClearedRun(t *testing.T) {
	// A worker still runs a task whose entry was deleted under it; the check
	// clears it and a new run starts. The old run's finish must not end the
	// new run's marker.
	r := newOverlapRig(t, OverlapSkip, 0)
	lost := r.mustFire("enqueued")
	e := r.take()
	r.do("XDEL", r.q.K.Stream(DefaultQueue), e.ID)
	r.mustFire("enqueued", lost)
	r.finish(e, rdb.Done, time.Time{})
	r.mustFire("skipped")
}

func TestOverlapBufferOneClearedRunReleasesTheBufferedFiring(t *testing.T) {
	r := newOverlapRig(t, OverlapBufferOne, 0)
	lost := r.mustFire("enqueued")
	buffered := r.mustFire("buffered")
	r.mustFire("skipped")
	r.do("XDEL", r.q.K.Stream(DefaultQueue), r.entries()[0].ID)

	// Clearing the lost run does what its finish would have done: the
	// buffered firing becomes the run, and this firing waits behind it.
	waiting := r.mustFire("buffered", lost)
	if q := r.queued(); !slices.Equal(q, []string{buffered}) {
		t.Fatalf("queue: %v, want the buffered firing %s", q, buffered)
	}
	r.mustFire("skipped")
	// The released firing is a live run like any other.
	r.finish(r.take(), rdb.Done, time.Time{})
	if q := r.queued(); !slices.Equal(q, []string{waiting}) {
		t.Fatalf("queue after the run: %v, want the next buffered firing %s", q, waiting)
	}
	r.mustFire("buffered")
}

func TestOverlapCheckReadsABacklogInBoundedSteps(t *testing.T) {
	// A run that left the delayed set is looked for among the entries added
	// to the stream after it went there, 50 per firing (overlapScan), from
	// where the previous firing stopped.
	const backlog = 120 // three firings: 50, 50, then the rest and the end
	setup := func(t *testing.T) (*overlapRig, string) {
		r := newOverlapRig(t, OverlapSkip, 0)
		run := r.mustFire("enqueued")
		r.finish(r.take(), rdb.Retry, time.Now().Add(time.Hour))
		r.backlog(backlog)
		return r, run
	}
	t.Run("a forwarded run is found", func(t *testing.T) {
		r, run := setup(t)
		r.forward(time.Now().Add(2 * time.Hour))
		for range 4 {
			r.mustFire("skipped")
		}
		// Found, it is checked at its entry from now on: losing it shows at once.
		r.do("XDEL", r.q.K.Stream(DefaultQueue), r.entries()[backlog].ID)
		r.mustFire("enqueued", run)
	})
	t.Run("a lost run is cleared when the scan reaches the end", func(t *testing.T) {
		r, run := setup(t)
		r.do("DEL", r.q.K.Delayed(DefaultQueue))
		r.mustFire("skipped")
		r.mustFire("skipped")
		r.mustFire("enqueued", run)
	})
}

func TestOverlapSkipFiresAgainOnceItsQueuedRunIsLost(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	e.start(e.scheduler("a", SchedulerConfig{FireAhead: -1}, func(s *Scheduler) { // the run in the stream, not delayed
		_ = RegisterInterval(s, time.Second, tick{}, WithScheduleID("lost"), WithOverlap(OverlapSkip))
	}))
	waitUntil(t, "a firing skipped behind the queued run", func() bool {
		h, _ := e.insp.ScheduleHistory(ctx, "lost", 0)
		return len(h) >= 2 && h[0].Jobs[0].Result == "skipped"
	})
	ts := e.tasks(DefaultQueue)
	if len(ts) != 1 {
		t.Fatalf("%d tasks queued, want 1", len(ts))
	}
	lost := ts[0].ID
	// Lose the run the way a hand-made trim or a failover without its write would.
	stream := QueueKeysOf(t, e.rdb, "lost").Stream(DefaultQueue)
	xs, err := e.rdb.XRange(ctx, stream, "-", "+").Result()
	if err != nil || len(xs) != 1 {
		t.Fatalf("XRANGE: %v, %d entries", err, len(xs))
	}
	e.rdb.XDel(ctx, stream, xs[0].ID)

	var rec *FiringRecord
	waitUntil(t, "a firing that cleared the lost run", func() bool {
		h, _ := e.insp.ScheduleHistory(ctx, "lost", 0)
		for _, r := range h {
			if slices.Contains(r.Jobs, FiringJob{Job: mainJob, TaskID: lost, Result: "cleared"}) {
				rec = r
				return true
			}
		}
		return false
	})
	if rec.Jobs[0].Result != "enqueued" {
		t.Errorf("the clearing firing: %+v, want its own run enqueued", rec.Jobs)
	}
	if ts := e.tasks(DefaultQueue); len(ts) != 1 || ts[0].ID != rec.Jobs[0].TaskID {
		t.Errorf("queue after clearing: %d tasks, want the new run %s", len(ts), rec.Jobs[0].TaskID)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, lost) {
		t.Errorf("the leader did not warn about %s:\n%s", lost, logs)
	}
}

func TestOverlapSkipKeepsSkippingWhileTheRunIsRunning(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{}, WithScheduleID("busy"), WithOverlap(OverlapSkip))
	}))
	started, release := make(chan string, 10), make(chan struct{})
	mux := NewMux()
	AddHandler(mux, func(_ context.Context, t *Task[tick]) error {
		started <- t.ID
		<-release
		return nil
	})
	srv := NewServer(e.rdb, ServerConfig{Logger: slog.New(slog.DiscardHandler)})
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(ctx)
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	var first string
	select {
	case first = <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the first run did not start")
	}
	skippedSince := func() (n int) {
		h, _ := e.insp.ScheduleHistory(ctx, "busy", 0)
		for _, r := range h {
			if r.Jobs[0].TaskID == first {
				break
			}
			if r.Jobs[0].Result == "skipped" {
				n++
			}
		}
		return n
	}
	waitUntil(t, "three firings skipped behind the running run", func() bool { return skippedSince() >= 3 })
	h, _ := e.insp.ScheduleHistory(ctx, "busy", 0)
	for _, r := range h {
		if len(r.Jobs) != 1 || (r.Jobs[0].Result != "skipped" && r.Jobs[0].TaskID != first) {
			t.Fatalf("a firing while %s ran: %+v", first, r.Jobs)
		}
	}
	close(release)
	select {
	case id := <-started:
		if id == first {
			t.Fatal("the first run ran twice")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no run after the first one finished")
	}
}
