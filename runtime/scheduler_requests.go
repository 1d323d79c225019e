package chronos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

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
		isolated := ss.isolated[rq.Schedule]
		ss.mu.Unlock()
		if isolated {
			// Every live instance runs it (scheduler_isolated.go); the
			// request is done once each has had an InstanceTTL to see it.
			if now.Sub(rq.Created) >= s.cfg.InstanceTTL {
				s.log.Info("chronos: operator request for an isolated schedule handed to every live instance", "schedule", rq.Schedule,
					"request", rq.ID, "who", rq.Who)
				_, _ = s.store.CompleteRequest(ctx, rq.ID)
			}
			continue
		}
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
		for i, r := range s.fire(ctx, ss.term, reqs) {
			if r.Err != nil {
				done = false
				if errors.Is(r.Err, leader.ErrFenced) {
					ss.failed(reqs[i].id, r.Err)
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
