package chronos

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// This file turns what Servers and Schedulers already know into Metrics
// calls. Each helper starts with the nil check, so a process without
// Metrics pays only that.

// recordStart reports a handler about to run.
func (s *Server) recordStart(d *delivery, kind string, start time.Time) {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	var wait time.Duration
	if at, ok := entryTime(d.entry.ID); ok {
		wait = max(start.Sub(at), 0) // clocks of Redis and this host may differ
	}
	m.TaskStarted(d.entry.Queue, kind, wait)
}

// recordOutcome reports an outcome recorded in Redis.
func (s *Server) recordOutcome(d *delivery, r *run) {
	if m := s.cfg.Metrics; m != nil {
		m.TaskFinished(d.entry.Queue, r.m.Kind, outcomeName(r.outcome), r.dur)
	}
}

// entryTime is the time in a stream entry ID ("<unix ms>-<seq>"): when
// Redis added the entry, that is when the task became ready.
func entryTime(id string) (time.Time, bool) {
	ms, _, _ := strings.Cut(id, "-")
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(n), true
}

// recordFirings reports the results of one fire call; done is when its
// replies arrived.
func (s *Scheduler) recordFirings(reqs []*fireReq, out []fireResult, done time.Time) {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	for i, r := range out {
		q := reqs[i]
		lag := done.Sub(q.at)
		switch {
		case r.err != nil && errors.Is(r.err, context.Canceled):
			// Shutdown or the end of the term cut the call short: not a
			// result of the firing.
		case r.err != nil && errors.Is(r.err, leader.ErrFenced):
			m.TriggerFired(q.id, q.source, TriggerFenced, lag)
		case r.err != nil:
			m.TriggerFired(q.id, q.source, TriggerError, lag)
		case r.status == fireFired:
			for _, res := range r.jobs {
				m.TriggerFired(q.id, q.source, res, lag)
			}
			for c := 0; c+1 < len(r.cleared); c += 2 {
				m.TriggerFired(q.id, q.source, TriggerCleared, lag)
			}
		default: // duplicate, stale, gone: the script's own status words
			m.TriggerFired(q.id, q.source, r.status, lag)
		}
	}
}

// recordCatchup reports a catch-up evaluation that applied the misfire
// policy or dropped fires beyond the cap.
func (s *Scheduler) recordCatchup(id string, policy trigger.Policy, res trigger.Result) {
	if m := s.cfg.Metrics; m != nil && (res.Misfired || res.Dropped > 0) {
		m.Misfired(id, policy.String(), res.Dropped)
	}
}

// recordLeader reports a leadership transition, and the renewal failure
// that ended a term (a resignation ends one with a nil Err).
func (s *Scheduler) recordLeader(c leader.Change) {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	if !c.Leader && c.Err != nil {
		m.LeaseRenewFailed()
	}
	m.LeaderChanged(c.Leader)
}
