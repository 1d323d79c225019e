package chronos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/firing"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// session is the work of one leadership term: it loads the registry, runs
// catch-up, fires from a firing.Loop, follows registry changes and operator
// requests, and sweeps the registry. It ends when its context does (the
// term ended) or at the first fenced write.
type session struct {
	s      *Scheduler
	term   leader.Term
	loop   *firing.Loop
	cancel context.CancelFunc

	// fireMu serializes evaluate-and-fire rounds (loop wake-ups, reloads,
	// repairs, requests): the script refuses a firing older than the
	// stored last_fired, so two rounds of one schedule must not race.
	fireMu sync.Mutex

	mu        sync.Mutex // guards entries, idle and the entries' fields
	entries   map[string]*entry
	idle      map[string]bool // entries not in the loop: paused, dirty, complete
	version   string          // last seen value of the registry's change counter
	lastSweep time.Time       // last Sweep
	loaded    bool            // the registry was loaded once this term
}

// entry is one schedule as the leader fires it. Within a term the leader is
// the only writer of trigger state, so state here equals the stored state
// (a failed or refused write marks the entry dirty: it is read again).
type entry struct {
	id        string
	hash      string
	created   time.Time
	plan      *plan
	state     trigger.State
	pause     *schedstore.PauseInfo
	jobPauses map[string]schedstore.PauseInfo
	dirty     bool
}

func (e *entry) paused(now time.Time) bool { return e.pause != nil && e.pause.Active(now) }

// jobPaused reports which jobs of a group are paused at now. It reads the
// pauses as they are when called (a refresh replaces the map, never
// changes it), so its result may be used after ss.mu is released.
func (e *entry) jobPaused(now time.Time) func(string) bool {
	pauses := e.jobPauses
	if len(pauses) == 0 {
		return nil
	}
	return func(job string) bool { p, ok := pauses[job]; return ok && p.Active(now) }
}

// nextFunc is the firing loop's view of the trigger; the session resets
// the loop entry from the evaluated state after every firing anyway.
func (e *entry) nextFunc() firing.NextFunc {
	trig := e.plan.trig
	return func(after time.Time) time.Time { t, _ := trig.FireTimeAfter(after); return t }
}

// changesKey is a counter bumped by every registry change the leader must
// pick up at once (registrations, pauses, resumes): the leader polls it
// every second instead of re-reading the whole registry.
func (s *Scheduler) changesKey() string { return s.q.K.Prefix() + "schedules:version" }

// bumpChanges tells the leader to re-read the registry.
func bumpChanges(ctx context.Context, c redis.UniversalClient, key string) error {
	return c.Incr(ctx, key).Err()
}

func newSession(s *Scheduler, term leader.Term) *session {
	return &session{s: s, term: term, entries: map[string]*entry{}, idle: map[string]bool{}}
}

// refreshEvery is how often the leader polls for registry changes,
// requests and expired pauses.
func (ss *session) refreshEvery() time.Duration {
	return min(time.Second, ss.s.cfg.LeaderTTL/2)
}

func (ss *session) run(ctx context.Context) {
	ctx, ss.cancel = context.WithCancel(ctx)
	defer ss.cancel()
	ss.loop = firing.New(firing.Config{Fire: ss.onFire, OnAnomaly: ss.onAnomaly, Clock: ss.s.clock})
	var wg sync.WaitGroup
	defer wg.Wait()
	ss.refresh(ctx)
	wg.Go(func() { _ = ss.loop.Run(ctx) })
	t := time.NewTicker(ss.refreshEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ss.refresh(ctx)
		}
	}
}

// trusted reports whether this session's term is still trusted; if not it
// ends the session.
func (ss *session) trusted() bool {
	t, ok := ss.s.elector.Current()
	if ok && t.Token == ss.term.Token {
		return true
	}
	ss.cancel()
	return false
}

// refresh re-reads what changed in the registry, sweeps it about once per
// instance TTL, and acts on operator requests, expired pauses and entries
// whose stored state must be read again.
func (ss *session) refresh(ctx context.Context) {
	if !ss.trusted() || ctx.Err() != nil {
		return
	}
	s := ss.s
	v, err := s.rdb.Get(ctx, s.changesKey()).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		ss.warn(ctx, "chronos: leader: read registry version", err)
		return
	}
	reload := !ss.loaded || v != ss.version
	if time.Since(ss.lastSweep) >= s.cfg.InstanceTTL {
		sweep := s.store.Sweep // reads the whole registry only when something changed
		if ss.lastSweep.IsZero() {
			sweep = s.store.FullSweep // the store's last sweeps may predate other leaders' terms
		}
		ss.lastSweep = time.Now()
		res, err := sweep(ctx)
		if err != nil {
			ss.warn(ctx, "chronos: leader: sweep registry", err)
		} else {
			ss.dropDeadIsolatedQueues(ctx)
		}
		if err == nil && len(res.Handed)+len(res.Retired) > 0 {
			s.log.Info("chronos: leader: registry swept", "handed", res.Handed, "retired", res.Retired)
			reload = true
		}
	}
	var list []schedstore.Schedule
	if reload {
		// Read without holding up firing: the stored state is used only for
		// schedules this term has not loaded yet, which nobody else fires.
		if list, err = s.store.List(ctx); err != nil {
			ss.warn(ctx, "chronos: leader: load registry", err)
			return
		}
	}
	ss.fireMu.Lock()
	defer ss.fireMu.Unlock()
	if reload {
		ss.version, ss.loaded = v, true
		ss.reconcile(ctx, list)
	} else {
		ss.repair(ctx)
	}
	ss.requests(ctx)
}

// reconcile brings the entries in line with the registry and evaluates
// every schedule: catch-up on becoming leader, after a definition change,
// and on resume.
func (ss *session) reconcile(ctx context.Context, list []schedstore.Schedule) {
	s := ss.s
	now := s.now()
	ss.mu.Lock()
	seen := make(map[string]bool, len(list))
	var reqs []*fireReq
	var saves []*entry
	for i := range list {
		sc := &list[i]
		if sc.Isolated {
			continue
		}
		seen[sc.ID] = true
		e := ss.entries[sc.ID]
		if e == nil || e.hash != sc.DefHash || !e.created.Equal(sc.Created) {
			p, err := compile(sc.Definition, sc.Created)
			if err != nil {
				s.log.Error("chronos: leader: schedule cannot be fired", "schedule", sc.ID, "err", err)
				if e != nil {
					ss.forget(sc.ID)
				}
				continue
			}
			e = &entry{id: sc.ID, hash: sc.DefHash, created: sc.Created, plan: p, state: storedState(sc, p)}
			ss.entries[sc.ID] = e
		}
		e.pause, e.jobPauses = sc.State.Pause, sc.State.JobPauses
		r, save := ss.evaluate(e, now, "catchup")
		reqs = append(reqs, r...)
		if save {
			saves = append(saves, e)
		}
		ss.place(e, now)
	}
	for id := range ss.entries {
		if !seen[id] {
			ss.forget(id)
		}
	}
	ss.mu.Unlock()
	ss.save(ctx, saves)
	ss.handle(ctx, reqs, s.fire(ctx, fireScript, ss.term, reqs))
}

// repair re-reads dirty entries and evaluates paused entries whose pause
// has expired.
func (ss *session) repair(ctx context.Context) {
	s := ss.s
	now := s.now()
	ss.mu.Lock()
	var dirty []string
	for id := range ss.idle {
		if e := ss.entries[id]; e != nil && e.dirty {
			dirty = append(dirty, id)
		}
	}
	ss.mu.Unlock()
	var reqs []*fireReq
	var saves []*entry
	for _, id := range dirty {
		sc, err := s.store.Get(ctx, id)
		ss.mu.Lock()
		e := ss.entries[id]
		switch {
		case e == nil:
		case errors.Is(err, schedstore.ErrNotFound):
			ss.forget(id)
		case err != nil:
			s.log.Warn("chronos: leader: reload schedule", "schedule", id, "err", err)
		default:
			e.state, e.dirty = storedState(&sc, e.plan), false
			e.pause, e.jobPauses = sc.State.Pause, sc.State.JobPauses
		}
		ss.mu.Unlock()
	}
	ss.mu.Lock()
	for id := range ss.idle {
		e := ss.entries[id]
		if e == nil || e.dirty {
			continue
		}
		if e.pause != nil && !e.pause.Until.IsZero() && !e.paused(now) {
			e.pause = nil // expired: evaluate as resumed
		}
		if e.paused(now) || e.state.Complete {
			continue
		}
		r, save := ss.evaluate(e, now, "catchup")
		reqs = append(reqs, r...)
		if save {
			saves = append(saves, e)
		}
		ss.place(e, now)
	}
	ss.mu.Unlock()
	ss.save(ctx, saves)
	ss.handle(ctx, reqs, s.fire(ctx, fireScript, ss.term, reqs))
}

// storedState converts a stored schedule's state to the trigger's. A
// schedule never evaluated starts from the trigger's initial state. After
// a definition change the stored fire times belong to the old trigger: the
// new one continues with its first fire time after the later of the change
// and the last firing (missed ones since the change are then caught up per
// policy), keeping last_fired; a simple trigger's repeat count starts over.
func storedState(sc *schedstore.Schedule, p *plan) trigger.State {
	ts := sc.State.TriggerState
	if ts.Next.IsZero() && !ts.Complete {
		return trigger.Initial(p.trig)
	}
	st := trigger.State{
		Next: ts.Next, Prev: ts.Prev, Start: ts.Start,
		TimesTriggered: int(ts.TimesTriggered), RepeatCount: int(ts.RepeatCount), Complete: ts.Complete,
	}
	if sc.DefChanged.After(sc.State.Saved) {
		init := trigger.Initial(p.trig)
		after := sc.DefChanged
		if ts.Prev.After(after) {
			after = ts.Prev
		}
		if !init.Complete && init.Next.Before(after) {
			next, ok := p.trig.FireTimeAfter(after)
			init.Next, init.Complete = next, !ok
		}
		init.Prev = ts.Prev
		return init
	}
	return st
}

// evaluate runs the misfire engine for e at now and returns the firings to
// make, one per trigger, each carrying the state after it. It reports
// whether the state changed without any firing (a misfire policy skipped
// slots), which must then be saved on its own. ss.mu is held.
func (ss *session) evaluate(e *entry, now time.Time, source string) ([]*fireReq, bool) {
	if e.dirty || e.paused(now) || e.state.Complete {
		return nil, false
	}
	s := ss.s
	c := trigger.Catchup{Policy: e.plan.policy, Threshold: s.cfg.MisfireThreshold, MaxFires: s.cfg.MaxCatchup}
	res := c.Due(e.plan.trig, e.state, now)
	s.recordCatchup(e.id, e.plan.policy, res)
	if res.Misfired || res.Dropped > 0 || len(res.Fires) > 1 {
		s.log.Info("chronos: catch-up", "schedule", e.id, "policy", e.plan.policy.String(),
			"missed_from", e.state.Next, "misfired", res.Misfired, "fired", len(res.Fires), "dropped", res.Dropped,
			"next", res.State.Next)
	}
	if len(res.Fires) == 0 {
		changed := res.State != e.state
		e.state = res.State
		return nil, changed
	}
	if source == "trigger" && (res.Misfired || len(res.Fires) > 1) {
		source = "catchup"
	}
	n := len(res.Fires)
	reqs := make([]*fireReq, n)
	jp := e.jobPaused(now)
	for i, f := range res.Fires {
		st := res.State
		if i < n-1 {
			// The state right after fire i: each firing step advances Prev
			// to the fire, Next to the following one and counts one slot.
			st.Next, st.Complete = res.Fires[i+1].At, false
			st.TimesTriggered -= n - 1 - i
		}
		st.Prev = f.At
		reqs[i] = &fireReq{
			id: e.id, plan: e.plan, slot: f.Scheduled, at: f.At, dedup: dedupKey(e.id, f.Scheduled),
			source: source, state: &st, paused: jp,
		}
	}
	e.state = res.State
	return reqs, false
}

// place puts e's next fire time in the loop, or takes it out.
func (ss *session) place(e *entry, now time.Time) {
	if e.dirty || e.paused(now) || e.state.Complete || e.state.Next.IsZero() {
		ss.loop.Remove(e.id)
		ss.idle[e.id] = true
		return
	}
	delete(ss.idle, e.id)
	ss.loop.SetAt(e.id, e.nextFunc(), e.state.Next)
}

// forget drops entry id. ss.mu is held.
func (ss *session) forget(id string) {
	delete(ss.entries, id)
	delete(ss.idle, id)
	ss.loop.Remove(id)
}

// onFire is the firing loop's callback.
func (ss *session) onFire(ctx context.Context, now time.Time, batch []firing.Due) {
	ss.fireMu.Lock()
	defer ss.fireMu.Unlock()
	if !ss.trusted() {
		ss.s.log.Warn("chronos: leader: term no longer trusted; not firing", "epoch", ss.term.Epoch)
		return
	}
	var reqs []*fireReq
	var saves []*entry
	ss.mu.Lock()
	for _, d := range batch {
		e := ss.entries[d.ID]
		if e == nil {
			continue
		}
		r, save := ss.evaluate(e, now, "trigger")
		reqs = append(reqs, r...)
		if save {
			saves = append(saves, e)
		}
		ss.place(e, now)
	}
	ss.mu.Unlock()
	ss.save(ctx, saves)
	ss.handle(ctx, reqs, ss.s.fire(ctx, fireScript, ss.term, reqs))
}

func (ss *session) onAnomaly(a firing.Anomaly) {
	ss.s.log.Warn("chronos: leader: "+a.Kind.String()+"; due schedules are caught up per their misfire policy",
		"delta", a.Delta, "epoch", ss.term.Epoch)
}

// save writes states that changed without a firing (a misfire policy
// skipped slots).
func (ss *session) save(ctx context.Context, es []*entry) {
	for _, e := range es {
		ss.mu.Lock()
		st := e.state
		ss.mu.Unlock()
		ts := schedstore.TriggerState{Next: st.Next, Prev: st.Prev, Start: st.Start,
			TimesTriggered: int64(st.TimesTriggered), RepeatCount: int64(st.RepeatCount), Complete: st.Complete}
		err := ss.s.store.SaveState(ctx, ss.term, e.id, ts, "misfire:"+e.plan.policy.String())
		if err != nil {
			ss.failed(e.id, err)
		}
	}
}

// handle acts on fire results: logs skips and duplicates, and marks entries
// whose write did not happen for a re-read. A fenced write ends the session.
func (ss *session) handle(ctx context.Context, reqs []*fireReq, res []fireResult) {
	s := ss.s
	for i, r := range res {
		q := reqs[i]
		if r.err != nil {
			ss.failed(q.id, r.err)
			continue
		}
		switch r.status {
		case fireFired:
			for j, out := range r.jobs {
				if out == "skipped" || out == "buffered" {
					s.log.Info("chronos: firing "+out+" by overlap policy", "schedule", q.id, "job", j, "trigger", q.slot,
						"overlap", q.plan.overlap.String())
				}
			}
		case fireDuplicate:
			s.log.Warn("chronos: trigger already enqueued (dedup key held); not enqueued again", "schedule", q.id,
				"trigger", q.slot, "dedup", q.dedup)
			if q.state != nil {
				ss.markDirty(q.id)
			}
		case fireStale:
			s.log.Warn("chronos: a later firing is already recorded; re-reading the schedule", "schedule", q.id, "trigger", q.slot)
			ss.markDirty(q.id)
		case fireGone:
			ss.mu.Lock()
			ss.forget(q.id)
			ss.mu.Unlock()
		}
	}
}

// failed handles a write that did not happen.
func (ss *session) failed(id string, err error) {
	if errors.Is(err, leader.ErrFenced) {
		ss.s.log.Warn("chronos: fenced write: this instance is no longer leader; stopping", "schedule", id, "epoch", ss.term.Epoch)
		ss.cancel()
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	ss.s.log.Warn("chronos: leader: firing not recorded; the schedule is read again", "schedule", id, "err", err)
	ss.markDirty(id)
}

func (ss *session) markDirty(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if e := ss.entries[id]; e != nil {
		e.dirty = true
		ss.idle[id] = true
		ss.loop.Remove(id)
	}
}

// warn logs a failed registry read or write, except when ctx already ended:
// then the error is the shutdown (or the end of the term) cancelling the
// call, not a problem worth a warning.
func (ss *session) warn(ctx context.Context, msg string, err error) {
	if ctx.Err() != nil {
		return
	}
	ss.s.log.Warn(msg, "err", err)
}

// maxBackfill bounds the firings one backfill request may make.
const maxBackfill = 1000

// requests acts on pending operator requests: trigger now and backfill.
// A request is completed only after its firings were recorded, so a leader
// change in between repeats it, and its dedup keys make the repeat a no-op.
func (ss *session) requests(ctx context.Context) {
	s := ss.s
	pending, err := s.store.Requests(ctx, 100)
	if err != nil {
		ss.warn(ctx, "chronos: leader: read requests", err)
		return
	}
	now := s.now()
	for _, rq := range pending {
		ss.mu.Lock()
		e := ss.entries[rq.Schedule]
		var jp func(string) bool
		if e != nil {
			jp = e.jobPaused(now)
		}
		ss.mu.Unlock()
		if e == nil {
			s.log.Warn("chronos: request for a schedule the leader does not fire; dropped", "schedule", rq.Schedule, "request", rq.ID)
			_, _ = s.store.CompleteRequest(ctx, rq.ID)
			continue
		}
		// A request overrides a pause of the whole schedule (the operator
		// asked for this schedule by name) but not a paused job of a group:
		// that job is switched off, and a run of its group leaves it out
		// as the timer's firings do (jp).
		var reqs []*fireReq
		switch rq.Kind {
		case schedstore.KindTriggerNow:
			slot := now.Truncate(time.Millisecond)
			reqs = append(reqs, &fireReq{id: e.id, plan: e.plan, slot: slot, at: slot,
				dedup: e.id + ":req:" + rq.ID, source: "request", paused: jp})
		case schedstore.KindBackfill:
			// A cron trigger starts at the schedule's creation; a backfill may
			// reach back before it.
			trig := e.plan.trig
			if c, ok := trig.(trigger.Cron); ok && rq.From.Before(c.Start) {
				c.Start = rq.From
				trig = c
			}
			t, ok := trig.FireTimeAfter(rq.From.Add(-time.Millisecond))
			for ; ok && !t.After(rq.To) && len(reqs) < maxBackfill; t, ok = trig.FireTimeAfter(t) {
				reqs = append(reqs, &fireReq{id: e.id, plan: e.plan, slot: t, at: t,
					dedup: fmt.Sprintf("%s:req:%s:%d", e.id, rq.ID, t.Unix()), source: "backfill", paused: jp})
			}
		}
		done := true
		for i, r := range s.fire(ctx, fireScript, ss.term, reqs) {
			if r.err != nil {
				done = false
				if errors.Is(r.err, leader.ErrFenced) {
					ss.failed(reqs[i].id, r.err)
					return
				}
			}
		}
		if done {
			s.log.Info("chronos: operator request done", "schedule", rq.Schedule, "request", rq.ID, "kind", string(rq.Kind),
				"firings", len(reqs), "who", rq.Who)
			_, _ = s.store.CompleteRequest(ctx, rq.ID)
		}
	}
}
