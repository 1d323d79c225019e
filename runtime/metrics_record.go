package chronos

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// This file turns what Servers and Schedulers already know into Metrics
// calls. Each helper starts with the nil check, so a process without
// Metrics pays only that.

// recordStart reports a handler about to run; ready is when its task
// became ready (zero if unknown).
func (s *Server) recordStart(queue, kind string, ready, start time.Time) {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	var wait time.Duration
	if !ready.IsZero() {
		wait = max(start.Sub(ready), 0) // clocks of Redis and this host may differ
	}
	m.TaskStarted(queue, kind, wait)
}

// recordOutcome reports the recorded outcome of r.
func (s *Server) recordOutcome(r *run) {
	if m := s.cfg.Metrics; m != nil {
		m.TaskFinished(r.queue, r.m.Kind, outcomeName(r.outcome), r.dur)
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

// recordFirings reports the results of one fire call; firings are the
// firings sent (nil where none could be built), done is when the replies
// arrived.
func (s *Scheduler) recordFirings(reqs []*fireReq, firings []*schedstore.Firing, out []schedstore.FireResult, done time.Time) {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	for i, r := range out {
		q := reqs[i]
		ev := FiredTrigger{Schedule: q.id, Source: q.source, Trigger: q.slot, Lag: max(done.Sub(q.at), 0)}
		switch {
		case r.Err != nil && errors.Is(r.Err, context.Canceled):
			// Shutdown or the end of the term cut the call short: not a
			// result of the firing.
		case r.Err != nil && errors.Is(r.Err, leader.ErrFenced):
			ev.Result = TriggerFenced
			m.TriggerFired(ev)
		case r.Err != nil:
			ev.Result = TriggerError
			m.TriggerFired(ev)
		case r.Status == fireFired:
			for k, res := range r.Jobs {
				job := ev
				if f := firings[i]; f != nil && k < len(f.Jobs) {
					job.Job, job.TaskID = f.Jobs[k].Name, f.Jobs[k].TaskID
				}
				job.Result = res
				m.TriggerFired(job)
			}
			for _, c := range r.Cleared {
				job := ev
				job.Job, job.TaskID, job.Result = c.Job, c.Task, TriggerCleared
				m.TriggerFired(job)
			}
		default: // duplicate, stale, gone: the script's own status words
			ev.Result = r.Status
			m.TriggerFired(ev)
		}
	}
}

// recordLocalFiring reports an isolated firing handed to the local Server.
func (s *Scheduler) recordLocalFiring(schedule, job, taskID, source string, slot, now time.Time) {
	if m := s.cfg.Metrics; m != nil {
		m.TriggerFired(FiredTrigger{Schedule: schedule, Job: job, Source: source, Result: TriggerEnqueued,
			Trigger: slot, TaskID: taskID, Lag: now.Sub(slot)})
	}
}

// recordCatchup reports a catch-up evaluation that applied the misfire
// policy or dropped fires beyond the cap.
func (s *Scheduler) recordCatchup(id string, policy trigger.Policy, res trigger.Result) {
	if m := s.cfg.Metrics; m != nil && (res.Misfired || res.Dropped > 0) {
		m.Misfired(id, policy.String(), res.Dropped)
	}
}

// recordLeading reports that this instance now leads at least one
// partition (true) or none (false).
func (s *Scheduler) recordLeading(leading bool) {
	if m := s.cfg.Metrics; m != nil {
		m.LeaderChanged(leading)
	}
}

// recordRenewFailed reports a term of a partition that ended with a
// renewal failure (a resignation ends one with a nil Err).
func (s *Scheduler) recordRenewFailed() {
	if m := s.cfg.Metrics; m != nil {
		m.LeaseRenewFailed()
	}
}

// recordRegistryLost reports a registry put back after a data loss.
func (s *Scheduler) recordRegistryLost(reseeded int) {
	if m := s.cfg.Metrics; m != nil {
		m.RegistryLost(reseeded)
	}
}
