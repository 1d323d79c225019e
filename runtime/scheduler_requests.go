package chronos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// backfillChunk is the most backfill firings the leader makes per refresh
// (about a second), across all pending backfills: a large range is fired
// at that pace instead of flooding the queue.
const backfillChunk = 500

// requests acts on the partition's pending operator requests: trigger now
// and backfill.
// A request is completed only after its firings were recorded, so a leader
// change in between repeats it, and its dedup keys make the repeat a no-op.
// A backfill is fired a chunk at a time, its progress saved in the request
// after each chunk.
func (ss *session) requests(ctx context.Context) {
	s := ss.s
	pending, err := s.store.RequestsIn(ctx, 100, ss.part)
	if err != nil {
		ss.warn(ctx, "chronos: leader: read requests", err)
		return
	}
	now := s.now()
	budget := backfillChunk
	for _, rq := range pending {
		ss.mu.Lock()
		e := ss.entries.find(rq.Schedule)
		var jp func(string) bool
		if e != nil {
			jp = e.jobPaused(now)
		}
		isolated := ss.isolated[rq.Schedule]
		ss.mu.Unlock()
		if isolated {
			// Every live instance runs it (scheduler_isolated.go); the
			// request is done once each has had an InstanceTTL to see it.
			if now.Sub(rq.Created) >= s.cfg.InstanceTTL {
				s.log.Info("chronos: operator request for an isolated schedule handed to every live instance", "schedule", rq.Schedule,
					"request", rq.ID, "who", rq.Who)
				_, _ = s.store.CompleteRequest(ctx, rq)
			}
			continue
		}
		if e == nil {
			s.log.Warn("chronos: request for a schedule the leader does not fire; dropped", "schedule", rq.Schedule, "request", rq.ID)
			_, _ = s.store.CompleteRequest(ctx, rq)
			continue
		}
		// A request overrides a pause of the whole schedule (the operator
		// asked for this schedule by name) but not a paused job of a group:
		// that job is switched off, and a run of its group leaves it out
		// as the timer's firings do (jp).
		var reqs []*fireReq
		done := true
		switch rq.Kind {
		case schedstore.KindTriggerNow:
			slot := now.Truncate(time.Millisecond)
			reqs = append(reqs, &fireReq{id: e.id(), plan: e.d.plan(e.d.trigger()), slot: slot, at: slot,
				dedup: e.id() + ":req:" + rq.ID, source: "request", paused: jp})
		case schedstore.KindBackfill:
			if budget == 0 {
				continue
			}
			var next time.Time
			reqs, next = backfillChunkOf(e, rq, budget, jp)
			budget -= len(reqs)
			if !next.IsZero() {
				done = false
				rq.Next, rq.Fired = next, rq.Fired+len(reqs)
			}
		}
		for _, r := range s.fire(ctx, ss.term, reqs) {
			if r.Err != nil {
				if errors.Is(r.Err, leader.ErrFenced) {
					ss.failed(e, r.Err)
					return
				}
				s.faults.failed(r.Err, "request", rq.ID, "schedule", rq.Schedule)
				return // the same chunk again at the next refresh: its dedup keys make that safe
			}
		}
		if !done {
			if _, err := s.store.AdvanceRequest(ctx, rq); err != nil {
				ss.warn(ctx, "chronos: leader: record a backfill's progress", err)
			}
			continue
		}
		s.log.Info("chronos: operator request done", "schedule", rq.Schedule, "request", rq.ID, "kind", string(rq.Kind),
			"firings", rq.Fired+len(reqs), "who", rq.Who)
		_, _ = s.store.CompleteRequest(ctx, rq)
	}
}

// backfillChunkOf returns up to n firings of backfill rq from where it
// stopped, and the fire time to continue from (zero when the range is
// done).
func backfillChunkOf(e *schedEntry, rq schedstore.Request, n int, paused func(string) bool) ([]*fireReq, time.Time) {
	own := e.d.trigger()
	p := e.d.plan(own)
	trig := backfillTrigger(own, rq.From)
	from := rq.From
	if !rq.Next.IsZero() {
		from = rq.Next
	}
	var reqs []*fireReq
	t, ok := trig.FireTimeAfter(from.Add(-time.Millisecond))
	for ; ok && !t.After(rq.To); t, ok = trig.FireTimeAfter(t) {
		if len(reqs) == n {
			return reqs, t
		}
		reqs = append(reqs, &fireReq{id: e.id(), plan: p, slot: t, at: t,
			dedup: fmt.Sprintf("%s:req:%s:%d", e.id(), rq.ID, t.Unix()), source: "backfill", paused: paused})
	}
	return reqs, time.Time{}
}
