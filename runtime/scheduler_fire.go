package chronos

import (
	"context"
	"strconv"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// Fire statuses, as the fire script returns them (schedstore.Fire).
const (
	fireFired     = schedstore.FireFired
	fireDuplicate = schedstore.FireDuplicate
	fireStale     = schedstore.FireStale
	fireGone      = schedstore.FireGone
)

// fireReq is one trigger to fire.
type fireReq struct {
	id     string
	plan   *plan
	slot   time.Time // the trigger's identity (trigger.Fire.Scheduled)
	at     time.Time // when it should run
	dedup  string
	source string // "trigger", "catchup", "request", "backfill", "isolated"
	// state is the trigger state after this firing; nil for firings that do
	// not advance the trigger (requests, isolated schedules).
	state *trigger.State
	// paused reports jobs of a group paused at firing time.
	paused func(job string) bool
	// ahead marks a trigger fired before its time (FireAhead): its tasks
	// are delayed until then.
	ahead bool
}

// dedupTTL is how long a trigger's dedup key lives.
//
// The dedup key is the second net under exactly-once; the first is the
// fence plus the last_fired check in the same script, which already stops
// any firing computed from a state older than the stored one, for good. The
// key matters only while a second evaluation of the same slot can still
// reach Redis without being stopped by those: an instance that (wrongly)
// holds the current token, or a leader's evaluation in flight during a
// handoff. Such an evaluation is at most one trust window (LeaderTTL) old
// when it arrives, and a catch-up evaluation can hand out a slot up to
// MisfireThreshold late. Twice their sum, and never under a minute, covers
// both with margin, while keeping the keys few: a schedule firing every
// second holds about 2×(5+60) = 130 of them with the defaults. A longer TTL
// would buy nothing but memory (100k schedules at 1,000 triggers/s would
// hold 3.6M keys per hour of TTL).
func (s *Scheduler) dedupTTL() time.Duration {
	return max(2*(s.cfg.LeaderTTL+s.cfg.MisfireThreshold), time.Minute)
}

// firing builds the schedstore.Firing of r: the encoded task of each job
// that is not paused.
func (s *Scheduler) firing(r *fireReq, now time.Time) (*schedstore.Firing, error) {
	p := r.plan
	f := &schedstore.Firing{Schedule: r.id, Slot: r.slot, Dedup: r.dedup, Source: r.source, Overlap: p.overlap.String()}
	if st := r.state; st != nil {
		f.State = &schedstore.TriggerState{Next: st.Next, Prev: st.Prev, Start: st.Start,
			TimesTriggered: int64(st.TimesTriggered), RepeatCount: int64(st.RepeatCount), Complete: st.Complete}
	}
	f.Jobs = make([]schedstore.FireJob, 0, len(p.jobs))
	for _, j := range p.jobs {
		if r.paused != nil && r.paused(j.Name) {
			continue
		}
		m, due := j.opts.message(j.Kind, j.Payload, now)
		if r.ahead { // fired ahead (FireAhead): due at its fire time
			due = r.at.Add(j.opts.processIn)
		}
		m.ScheduleID = r.id
		m.TriggerTime = r.slot.UnixMilli()
		if p.overlap != OverlapAllow {
			m.Overlap = r.id + ":" + j.Name
		}
		b, err := m.Encode()
		if err != nil {
			return nil, err
		}
		f.Jobs = append(f.Jobs, schedstore.FireJob{Name: j.Name, Queue: m.Queue, TaskID: m.ID, Msg: b, Due: due, Overlap: m.Overlap})
	}
	return f, nil
}

// fire enqueues reqs in one pipeline (schedstore.Fire) under the leader's
// term t, logs what a result needs said, and reports the results to
// Metrics.
func (s *Scheduler) fire(ctx context.Context, t leader.Term, reqs []*fireReq) []schedstore.FireResult {
	out := make([]schedstore.FireResult, len(reqs))
	if len(reqs) == 0 {
		return out
	}
	now := s.now()
	firings := make([]*schedstore.Firing, len(reqs)) // by request; nil where encoding failed
	sent := make([]*schedstore.Firing, 0, len(reqs))
	idx := make([]int, 0, len(reqs))
	for i, r := range reqs {
		f, err := s.firing(r, now)
		if err != nil {
			out[i].Err = err
			continue
		}
		firings[i] = f
		sent = append(sent, f)
		idx = append(idx, i)
	}
	var part int
	if len(sent) > 0 {
		part = s.store.PartitionOf(sent[0].Schedule)
	}
	res, err := s.store.Fire(ctx, t, now, sent, s.fireOptions(part))
	if err != nil {
		s.log.Warn("chronos: firings not acknowledged by enough replicas; a failover now could fire them again",
			"firings", len(sent), "err", err)
	}
	for k, i := range idx {
		out[i] = res[k]
		if f := firings[i]; f.State != nil && res[k].Err == nil && res[k].Status == fireFired {
			if d, ok := s.declared(f.Schedule); ok {
				s.mirror.fired(d, *f.State, res[k].Outcome(), now, res[k].ChangedBefore)
			}
		}
		for _, c := range res[k].Cleared {
			s.log.Warn("chronos: overlap: cleared the marker of a run that is no longer queued, delayed or running",
				"schedule", reqs[i].id, "job", c.Job, "task_id", c.Task, "trigger", reqs[i].slot)
		}
	}
	s.recordFirings(reqs, firings, out, s.now()) // the replies are in: now is when the enqueues were confirmed
	return out
}

// fireOptions are the scheduler's parameters of schedstore.Fire for the
// firings of partition part, whose elector's replica guard they share.
func (s *Scheduler) fireOptions(part int) schedstore.FireOptions {
	var guard *leader.ReplicaGuard
	if s.parts != nil && part < len(s.parts.electors) {
		guard = s.parts.electors[part].Guard()
	}
	return schedstore.FireOptions{
		DedupTTL: s.dedupTTL(), HistoryLimit: s.cfg.HistoryLimit,
		Guard: guard, ReplicaTimeout: max(s.cfg.LeaderTTL/10, time.Millisecond),
	}
}

// dedupKey is the dedup identity of a trigger: <schedule>:<slot unix
// seconds>, or <schedule>:<slot unix ms> for the rare slot that is not on
// a whole second (a fire moved to "now" keeps its slot's identity, so this
// only concerns simple triggers with a sub-second start).
func dedupKey(id string, slot time.Time) string {
	if slot.Nanosecond() == 0 {
		return id + ":" + strconv.FormatInt(slot.Unix(), 10)
	}
	return id + ":" + strconv.FormatInt(slot.UnixMilli(), 10) + "ms"
}
