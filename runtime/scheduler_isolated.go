package chronos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/firing"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// Isolated schedules (WithIsolated) fire on every instance that declares
// them, leader or not, from the instance's own firing loop, and run in
// process on SchedulerConfig.Server (see server_local.go for how a Server
// runs them). Firing needs neither the leader nor Redis, so isolated work
// goes on while Redis is unreachable. Redis is read, about once a second,
// for what operators decide cluster-wide, and written for what they read:
//
//   - pauses of the schedule or of one of its jobs (the last ones read
//     stay in force while Redis is unreachable; an Until is applied
//     locally);
//   - trigger-now requests: every live instance runs the schedule once for
//     each request made after it started (the leader completes the request
//     once every live instance has had an InstanceTTL to see it). Backfill
//     is refused for isolated schedules: its past work was local to
//     instances that may be gone;
//   - each firing's history record, with the instance, written once Redis
//     answers (isolatedHistoryLimit wait meanwhile).
//
// The trigger state lives in the instance's memory: a new process starts
// from its first fire time after Start, because the local work of an
// instance that is gone cannot be done by another one. Within a process,
// stalls and clock jumps are caught up per the misfire policy like any
// schedule.

// isolatedHistoryLimit bounds the history records of isolated firings kept
// while Redis is unreachable.
const isolatedHistoryLimit = 10000

// isolatedRunner fires this instance's isolated schedules.
type isolatedRunner struct {
	s       *Scheduler
	srv     *Server
	loop    *firing.Loop
	history *outbox

	mu      sync.Mutex // guards entries and their fields
	entries map[string]*isoEntry
	ids     []string
	parts   []int // the partitions of ids, whose change counters and requests it reads

	// Read by refresh only.
	version string          // the change counters of parts when pauses were last read
	loaded  bool            // pauses were read once
	handled map[string]bool // trigger-now requests already run
}

// isoEntry is one isolated schedule as this instance fires it.
type isoEntry struct {
	pauses
	id    string
	plan  *plan
	state trigger.State
}

// nextFunc is the firing loop's view of the trigger; the runner resets
// the loop entry from the evaluated state after every firing anyway.
func (e *isoEntry) nextFunc() firing.NextFunc {
	trig := e.plan.trig
	return func(after time.Time) time.Time {
		t, ok := trig.FireTimeAfter(after)
		if !ok {
			return time.Time{}
		}
		return t
	}
}

func newIsolatedRunner(s *Scheduler, defs []schedstore.Definition) *isolatedRunner {
	r := &isolatedRunner{
		s: s, srv: s.cfg.Server, entries: map[string]*isoEntry{}, handled: map[string]bool{},
		history: newOutbox("history records of isolated firings", isolatedHistoryLimit, s.log),
	}
	r.loop = firing.New(firing.Config{Fire: r.onFire, Clock: s.clock})
	now := s.now()
	for _, d := range defs {
		p, err := compile(d, now)
		if err != nil { // checked at registration; cannot happen
			s.log.Error("chronos: isolated schedule cannot be fired", "schedule", d.ID, "err", err)
			continue
		}
		e := &isoEntry{id: d.ID, plan: p, state: trigger.Initial(p.trig)}
		r.entries[d.ID] = e
		r.ids = append(r.ids, d.ID)
		if p := s.store.PartitionOf(d.ID); !slices.Contains(r.parts, p) {
			r.parts = append(r.parts, p)
		}
		r.place(e, now)
	}
	slices.Sort(r.parts)
	return r
}

// run fires until ctx ends.
func (r *isolatedRunner) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { _ = r.loop.Run(ctx) })
	wg.Go(func() { r.history.run(ctx) })
	t := time.NewTicker(min(time.Second, r.s.cfg.LeaderTTL/2))
	defer t.Stop()
	for {
		r.refresh(ctx)
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			r.history.flush(fctx)
			cancel()
			return
		case <-t.C:
		}
	}
}

// place puts e's next fire time in the loop, or takes it out while it is
// paused or complete. r.mu is held (or e is not shared yet).
func (r *isolatedRunner) place(e *isoEntry, now time.Time) {
	if e.paused(now) || e.state.Complete || e.state.Next.IsZero() {
		r.loop.Remove(e.id)
		return
	}
	r.loop.SetAt(e.id, e.nextFunc(), e.state.Next)
}

func (r *isolatedRunner) onFire(ctx context.Context, now time.Time, batch []firing.Due) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range batch {
		e := r.entries[d.ID]
		if e == nil || e.paused(now) {
			continue
		}
		res := r.s.catchup(e.id, e.plan.trig, e.plan.policy, e.state, now)
		for _, f := range res.Fires {
			r.fire(e, f.Scheduled, "isolated", now)
		}
		e.state = res.State
		r.place(e, now)
	}
}

// fire hands one firing of e, for slot, to the local Server: a task per
// job that is not paused. r.mu is held.
func (r *isolatedRunner) fire(e *isoEntry, slot time.Time, source string, now time.Time) {
	s := r.s
	rec := schedstore.FiringRecord{At: now, Slot: slot, Source: source, Instance: s.cfg.InstanceID}
	paused := e.jobPaused(now)
	for _, j := range e.plan.jobs {
		if paused != nil && paused(j.Name) {
			continue
		}
		m, due := j.opts.message(j.Kind, j.Payload, now)
		m.Queue, m.ScheduleID, m.TriggerTime = LocalQueue, e.id, slot.UnixMilli()
		ready := now
		if due.After(now) {
			ready = due // WithProcessIn: the task waits as a retry does
		}
		t := &localTask{m: m, ready: ready, instance: s.cfg.InstanceID}
		if ready.After(now) {
			r.srv.local.retryAt(t, ready)
		} else {
			r.srv.runLocal(t)
		}
		rec.Jobs = append(rec.Jobs, schedstore.FiringJob{Job: j.Name, Task: m.ID, Result: TriggerEnqueued})
		s.recordLocalFiring(e.id, j.Name, m.ID, source, slot, now)
	}
	id, keep := e.id, s.cfg.HistoryLimit
	r.history.add(func(ctx context.Context) error { return s.store.AppendHistory(ctx, id, rec, keep) })
}

// refresh reads, when Redis answers, the pauses of the isolated schedules
// (when the registry changed) and the pending trigger-now requests, and
// applies pauses whose Until has passed.
func (r *isolatedRunner) refresh(ctx context.Context) {
	s := r.s
	now := s.now()
	if vs, err := s.store.ChangeCounts(ctx, r.parts); err == nil && (!r.loaded || strings.Join(vs, ",") != r.version) {
		v := strings.Join(vs, ",")
		if got, err := s.store.GetMany(ctx, r.ids); err == nil {
			r.version, r.loaded = v, true
			r.applyPauses(got, now)
		}
	}
	r.mu.Lock()
	for _, e := range r.entries {
		if e.pause != nil && !e.pause.Until.IsZero() && !e.paused(now) {
			e.pause = nil // expired: fire again, catching up per policy
			e.state = trigger.Catchup{Policy: e.plan.policy, Threshold: s.cfg.MisfireThreshold}.Due(e.plan.trig, e.state, now).State
		}
		r.place(e, now)
	}
	r.mu.Unlock()
	r.requests(ctx, now)
}

// applyPauses takes the pauses of the schedules as the registry holds
// them. A schedule missing from the registry keeps what was read last.
func (r *isolatedRunner) applyPauses(got map[string]schedstore.Schedule, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, e := range r.entries {
		sc, ok := got[id]
		if !ok {
			continue
		}
		was := e.paused(now)
		e.pause, e.jobPauses = sc.State.Pause, sc.State.JobPauses
		switch is := e.paused(now); {
		case is && !was:
			r.s.log.Info("chronos: isolated schedule paused", "schedule", id, "instance", r.s.cfg.InstanceID)
		case was && !is:
			// Resumed: the slots missed while paused are the misfire
			// policy's, as for any schedule.
			c := trigger.Catchup{Policy: e.plan.policy, Threshold: r.s.cfg.MisfireThreshold, MaxFires: r.s.cfg.MaxCatchup}
			e.state = c.Due(e.plan.trig, e.state, now).State
			r.s.log.Info("chronos: isolated schedule resumed", "schedule", id, "instance", r.s.cfg.InstanceID)
		}
	}
}

// requests runs, once each, the trigger-now requests for this instance's
// isolated schedules made since it started.
func (r *isolatedRunner) requests(ctx context.Context, now time.Time) {
	s := r.s
	pending, err := s.store.RequestsIn(ctx, 100, r.parts...)
	if err != nil {
		return
	}
	live := make(map[string]bool, len(pending))
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rq := range pending {
		live[rq.ID] = true
		e := r.entries[rq.Schedule]
		if e == nil || rq.Kind != schedstore.KindTriggerNow || r.handled[rq.ID] || rq.Created.Before(s.self.Started.Truncate(time.Millisecond)) {
			continue
		}
		r.handled[rq.ID] = true
		r.fire(e, now.Truncate(time.Millisecond), "request", now)
		s.log.Info("chronos: operator request run on this instance", "schedule", rq.Schedule, "request", rq.ID,
			"instance", s.cfg.InstanceID, "who", rq.Who)
	}
	for id := range r.handled {
		if !live[id] {
			delete(r.handled, id)
		}
	}
}

// isolatedSetup checks that the isolated schedules of defs can run: a
// Server to run them, of the same namespace.
func (s *Scheduler) isolatedSetup(defs []schedstore.Definition) ([]schedstore.Definition, error) {
	var iso []schedstore.Definition
	for _, d := range defs {
		if d.Isolated {
			iso = append(iso, d)
		}
	}
	if len(iso) == 0 {
		return nil, nil
	}
	srv := s.cfg.Server
	if srv == nil {
		return nil, fmt.Errorf("schedule %q is isolated: set SchedulerConfig.Server to the Server that runs this instance's isolated schedules in process", iso[0].ID)
	}
	if ns := keyspace.Namespace(srv.cfg.Namespace); ns != s.cfg.Namespace {
		return nil, fmt.Errorf("SchedulerConfig.Server serves namespace %q, not the scheduler's %q", ns, s.cfg.Namespace)
	}
	return iso, nil
}
