package chronos

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

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
	ents  []*schedEntry // the entry of each of reqs
	saves []*schedEntry
}

func (ss *session) newRound(now time.Time) *round { return &round{ss: ss, now: now} }

// add evaluates e for source ("trigger" or "catchup") and places it in the
// loop. ss.mu is held.
func (r *round) add(e *schedEntry, source string) {
	reqs, save := r.ss.evaluate(e, r.now.Add(r.ahead), source)
	for _, q := range reqs {
		q.ahead = q.at.After(r.now)
		r.ents = append(r.ents, e)
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
	r.ss.handle(r.reqs, r.ents, r.ss.s.fire(ctx, r.ss.term, r.reqs))
}

// evaluate runs the misfire engine for e at now and returns the firings to
// make, one per trigger, each carrying the state after it. It reports
// whether the state changed without any firing (a misfire policy skipped
// slots), which must then be saved on its own. ss.mu is held.
func (ss *session) evaluate(e *schedEntry, now time.Time, source string) ([]*fireReq, bool) {
	if e.dirty || e.paused(now) || e.complete() {
		return nil, false
	}
	id, trig, before := e.id(), e.d.trigger(), e.state()
	res := ss.s.catchup(id, trig, trigger.Policy(e.d.policy), before, now)
	if len(res.Fires) == 0 {
		changed := !sameState(res.State, before)
		e.setState(res.State)
		return nil, changed
	}
	if source == "trigger" && (res.Misfired || len(res.Fires) > 1) {
		source = "catchup"
	}
	n := len(res.Fires)
	reqs := make([]*fireReq, n)
	p := e.d.plan(trig)
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
			id: id, plan: p, slot: f.Scheduled, at: f.At, dedup: dedupKey(id, f.Scheduled),
			source: source, state: &st, paused: jp,
		}
	}
	e.setState(res.State)
	return reqs, false
}

// sameState reports whether a and b are the same state: the same instants
// and counts.
func sameState(a, b trigger.State) bool {
	return a.Next.Equal(b.Next) && a.Prev.Equal(b.Prev) && a.Start.Equal(b.Start) &&
		a.TimesTriggered == b.TimesTriggered && a.RepeatCount == b.RepeatCount && a.Complete == b.Complete
}

// catchup runs the misfire engine for schedule id, with trigger trig and
// misfire policy policy, from state st at now, and logs and records what
// it decided when a policy applied or fires were dropped.
func (s *Scheduler) catchup(id string, trig trigger.Trigger, policy trigger.Policy, st trigger.State, now time.Time) trigger.Result {
	c := trigger.Catchup{Policy: policy, Threshold: s.cfg.MisfireThreshold, MaxFires: s.cfg.MaxCatchup}
	res := c.Due(trig, st, now)
	s.recordCatchup(id, policy, res)
	if res.Misfired || res.Dropped > 0 || len(res.Fires) > 1 {
		s.log.Info("chronos: catch-up", "schedule", id, "policy", policy.String(),
			"missed_from", st.Next, "misfired", res.Misfired, "fired", len(res.Fires), "dropped", res.Dropped,
			"next", res.State.Next)
	}
	return res
}

// place puts e's next fire time in the loop, or takes it out.
func (ss *session) place(e *schedEntry, now time.Time) {
	if next := e.next(); e.dirty || e.paused(now) || e.complete() || next.IsZero() {
		ss.loop.Remove(e)
		ss.idle[e] = struct{}{}
	} else {
		delete(ss.idle, e)
		ss.loop.Set(e, next.Add(-ss.s.cfg.FireAhead))
	}
}

// save writes states that changed without a firing (a misfire policy
// skipped slots).
func (ss *session) save(ctx context.Context, es []*schedEntry) {
	for _, e := range es {
		ss.mu.Lock()
		st := e.state()
		ss.mu.Unlock()
		ts := schedstore.TriggerState{Next: st.Next, Prev: st.Prev, Start: st.Start,
			TimesTriggered: int64(st.TimesTriggered), RepeatCount: int64(st.RepeatCount), Complete: st.Complete}
		err := ss.s.store.SaveState(ctx, ss.term, e.id(), ts, "misfire:"+trigger.Policy(e.d.policy).String())
		if err != nil {
			ss.failed(e, err)
		}
	}
}

// handle acts on fire results, those of reqs, whose entries are ents:
// logs skips and duplicates, and marks entries whose write did not happen
// for a re-read. A fenced write ends the session.
func (ss *session) handle(reqs []*fireReq, ents []*schedEntry, res []schedstore.FireResult) {
	s := ss.s
	for i, r := range res {
		q, e := reqs[i], ents[i]
		if r.Err != nil {
			ss.failed(e, r.Err)
			continue
		}
		ss.succeeded(e)
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
				ss.markDirty(e)
			}
		case fireStale:
			s.log.Warn("chronos: a later firing is already recorded; re-reading the schedule", "schedule", q.id, "trigger", q.slot)
			ss.markDirty(e)
		case fireGone:
			ss.mu.Lock()
			ss.forget(e)
			ss.mu.Unlock()
		}
	}
}

// failed handles a write of entry e that did not happen.
func (ss *session) failed(e *schedEntry, err error) {
	if errors.Is(err, leader.ErrFenced) {
		ss.s.log.Warn("chronos: fenced write: this instance is no longer leader; stopping", "schedule", e.id(), "partition", ss.part, "epoch", ss.term.Epoch)
		ss.cancel()
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	ss.mu.Lock()
	var retry time.Duration
	if !e.gone {
		m := e.extra()
		m.failures++
		retry = firingRetry(int(m.failures))
		m.retryAt = ss.s.now().Add(retry).UnixNano()
	}
	ss.mu.Unlock()
	ss.s.faults.failed(err, "schedule", e.id(), "retry_in", retry)
	ss.markDirty(e)
}

// succeeded records that a write of entry e happened. The first after
// failures, in any partition's session, ends every entry's backoff (see
// recovered): the fault was Redis's, not theirs, so the fire times missed
// meanwhile are caught up at the next refresh.
func (ss *session) succeeded(e *schedEntry) {
	ss.s.faults.ok()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if m := e.more; m != nil && !e.gone {
		m.failures, m.retryAt = 0, 0
		e.tidy()
	}
	ss.recovered()
}

// recovered ends the backoff of every entry once writes succeeded again
// after failing, whichever session's write it was. ss.mu is held.
func (ss *session) recovered() {
	if g := ss.s.faults.recoveries.Load(); g != ss.recoveries {
		ss.recoveries = g
		for _, e := range ss.entries {
			if e.more != nil {
				e.more.retryAt = 0
				e.tidy()
			}
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

// markDirty marks e for a re-read of its stored state.
func (ss *session) markDirty(e *schedEntry) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !e.gone {
		e.dirty = true
		ss.idle[e] = struct{}{}
		ss.loop.Remove(e)
	}
}

// forget drops entry e. ss.mu is held.
func (ss *session) forget(e *schedEntry) {
	if e.gone {
		return
	}
	ss.retire(e)
	if i, ok := slices.BinarySearchFunc(ss.entries, e.id(), func(x *schedEntry, id string) int { return strings.Compare(x.id(), id) }); ok {
		ss.entries = slices.Delete(ss.entries, i, i+1)
	}
}

// retire takes e out of the firing loop and the idle set for good: it was
// forgotten or replaced. A batch the loop handed over before skips it.
// ss.mu is held.
func (ss *session) retire(e *schedEntry) {
	e.gone = true
	ss.loop.Remove(e)
	delete(ss.idle, e)
}
