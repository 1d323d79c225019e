package chronos

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/firing"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// schedEntry is one schedule as the leader fires it. Within a term the
// leader is the only writer of trigger state, so state here equals the
// stored state (a failed or refused write marks the entry dirty: it is
// read again).
type schedEntry struct {
	id        string
	hash      defHash
	created   int64 // the registry's created (unix ms), the plan's anchor
	plan      *plan
	slot      firing.Slot // its place in the session's firing loop
	gone      bool        // forgotten, or replaced by a new entry (a new definition)
	state     trigger.State
	pause     *schedstore.PauseInfo
	jobPauses map[string]schedstore.PauseInfo
	dirty     bool

	// failures counts the writes in a row that did not happen (Redis
	// refusing them: out of memory, unreachable); the entry is read and
	// evaluated again at retryAt, with backoff, instead of every refresh.
	failures int32
	retryAt  int64 // unix ns; 0: none
}

// FiringSlot is e's place in the session's firing loop (firing.Entry).
func (e *schedEntry) FiringSlot() *firing.Slot { return &e.slot }

func (e *schedEntry) paused(now time.Time) bool { return e.pause != nil && e.pause.Active(now) }

// jobPaused reports which jobs of a group are paused at now. It reads the
// pauses as they are when called (a refresh replaces the map, never
// changes it), so its result may be used after ss.mu is released.
func (e *schedEntry) jobPaused(now time.Time) func(string) bool {
	pauses := e.jobPauses
	if len(pauses) == 0 {
		return nil
	}
	return func(job string) bool { p, ok := pauses[job]; return ok && p.Active(now) }
}

// nextFunc is the isolated runner's firing loop's view of the trigger,
// ahead seconds early; the runner resets the loop entry from the evaluated
// state after every firing anyway.
func (e *schedEntry) nextFunc(ahead time.Duration) firing.NextFunc {
	trig := e.plan.trig
	return func(after time.Time) time.Time {
		t, ok := trig.FireTimeAfter(after.Add(ahead))
		if !ok {
			return time.Time{}
		}
		return t.Add(-ahead)
	}
}

// round is one evaluate-and-fire pass of the leader. Under ss.mu it
// evaluates entries at one instant and puts their next fire times in the
// firing loop (add); then, with ss.mu released, it writes what the
// evaluations decided, the states that changed without a firing and the
// firings in one pipeline, and acts on the results (commit). reconcile,
// repair and onFire are each one round; ss.fireMu serializes them.
type round struct {
	ss    *session
	now   time.Time
	ahead time.Duration // fire times up to now+ahead are fired (the firing loop's rounds)
	reqs  []*fireReq
	saves []*schedEntry
}

func (ss *session) newRound(now time.Time) *round { return &round{ss: ss, now: now} }

// add evaluates e for source ("trigger" or "catchup") and places it in the
// loop. ss.mu is held.
func (r *round) add(e *schedEntry, source string) {
	reqs, save := r.ss.evaluate(e, r.now.Add(r.ahead), source)
	for _, q := range reqs {
		q.ahead = q.at.After(r.now)
	}
	r.reqs = append(r.reqs, reqs...)
	if save {
		r.saves = append(r.saves, e)
	}
	r.ss.place(e, r.now)
}

// commit writes the round. ss.mu is not held.
func (r *round) commit(ctx context.Context) {
	r.ss.save(ctx, r.saves)
	r.ss.handle(r.reqs, r.ss.s.fire(ctx, r.ss.term, r.reqs))
}

// evaluate runs the misfire engine for e at now and returns the firings to
// make, one per trigger, each carrying the state after it. It reports
// whether the state changed without any firing (a misfire policy skipped
// slots), which must then be saved on its own. ss.mu is held.
func (ss *session) evaluate(e *schedEntry, now time.Time, source string) ([]*fireReq, bool) {
	if e.dirty || e.paused(now) || e.state.Complete {
		return nil, false
	}
	res := ss.s.catchup(e, now)
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

// catchup runs the misfire engine for e at now, and logs and records what
// it decided when a policy applied or fires were dropped.
func (s *Scheduler) catchup(e *schedEntry, now time.Time) trigger.Result {
	c := trigger.Catchup{Policy: e.plan.policy, Threshold: s.cfg.MisfireThreshold, MaxFires: s.cfg.MaxCatchup}
	res := c.Due(e.plan.trig, e.state, now)
	s.recordCatchup(e.id, e.plan.policy, res)
	if res.Misfired || res.Dropped > 0 || len(res.Fires) > 1 {
		s.log.Info("chronos: catch-up", "schedule", e.id, "policy", e.plan.policy.String(),
			"missed_from", e.state.Next, "misfired", res.Misfired, "fired", len(res.Fires), "dropped", res.Dropped,
			"next", res.State.Next)
	}
	return res
}

// place puts e's next fire time in the loop, or takes it out.
func (ss *session) place(e *schedEntry, now time.Time) {
	if e.dirty || e.paused(now) || e.state.Complete || e.state.Next.IsZero() {
		ss.loop.Remove(e)
		ss.idle[e.id] = true
		return
	}
	delete(ss.idle, e.id)
	ss.loop.Set(e, e.state.Next.Add(-ss.s.cfg.FireAhead))
}

// save writes states that changed without a firing (a misfire policy
// skipped slots).
func (ss *session) save(ctx context.Context, es []*schedEntry) {
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
func (ss *session) handle(reqs []*fireReq, res []schedstore.FireResult) {
	s := ss.s
	for i, r := range res {
		q := reqs[i]
		if r.Err != nil {
			ss.failed(q.id, r.Err)
			continue
		}
		ss.succeeded(q.id)
		switch r.Status {
		case fireFired:
			for j, out := range r.Jobs {
				if out == TriggerSkipped || out == TriggerBuffered {
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
		ss.s.log.Warn("chronos: fenced write: this instance is no longer leader; stopping", "schedule", id, "partition", ss.part, "epoch", ss.term.Epoch)
		ss.cancel()
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	ss.mu.Lock()
	var retry time.Duration
	if e := ss.entries[id]; e != nil {
		e.failures++
		retry = firingRetry(int(e.failures))
		e.retryAt = ss.s.now().Add(retry).UnixNano()
	}
	ss.mu.Unlock()
	ss.s.faults.failed(err, "schedule", id, "retry_in", retry)
	ss.markDirty(id)
}

// succeeded records that a write of entry id happened. The first after
// failures, in any partition's session, ends every entry's backoff (see
// recovered): the fault was Redis's, not theirs, so the fire times missed
// meanwhile are caught up at the next refresh.
func (ss *session) succeeded(id string) {
	ss.s.faults.ok()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if e := ss.entries[id]; e != nil {
		e.failures, e.retryAt = 0, 0
	}
	ss.recovered()
}

// recovered ends the backoff of every entry once writes succeeded again
// after failing, whichever session's write it was. ss.mu is held.
func (ss *session) recovered() {
	if g := ss.s.faults.recoveries.Load(); g != ss.recoveries {
		ss.recoveries = g
		for _, e := range ss.entries {
			e.retryAt = 0
		}
	}
}

// Backoff of a schedule whose firing was not recorded: from
// firingRetryMin, doubling, up to firingRetryMax, with ±50 % jitter so
// that schedules that failed together do not retry together.
const (
	firingRetryMin = 500 * time.Millisecond
	firingRetryMax = 30 * time.Second
)

func firingRetry(failures int) time.Duration {
	d := firingRetryMin << min(failures-1, 16)
	d = min(d, firingRetryMax)
	return d/2 + rand.N(d)
}

func (ss *session) markDirty(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if e := ss.entries[id]; e != nil {
		e.dirty = true
		ss.idle[id] = true
		ss.loop.Remove(e)
	}
}

// forget drops entry id. ss.mu is held.
func (ss *session) forget(id string) {
	if e := ss.entries[id]; e != nil {
		ss.retire(e)
	}
	delete(ss.entries, id)
	delete(ss.idle, id)
}

// retire takes e out of the firing loop for good: it was forgotten or
// replaced. A batch the loop handed over before skips it. ss.mu is held.
func (ss *session) retire(e *schedEntry) {
	e.gone = true
	ss.loop.Remove(e)
}
