package chronos

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/firing"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// session is the work of one leadership term of one partition: it loads
// the partition's registry, runs catch-up, fires from its own firing.Loop,
// follows the partition's registry changes and operator requests, and, in
// partition 0, sweeps the whole registry. It ends when its context does
// (the term ended) or at the first fenced write. An instance that leads
// several partitions runs a session for each; they share nothing but the
// Scheduler (its mirror, fault logs and metrics).
type session struct {
	s       *Scheduler
	part    int
	elector *leader.Elector
	term    leader.Term
	loop    *firing.Queue[*schedEntry]
	cancel  context.CancelFunc

	// fireMu serializes evaluate-and-fire rounds (loop wake-ups, reloads,
	// repairs, requests): the script refuses a firing older than the
	// stored last_fired, so two rounds of one schedule must not race.
	fireMu sync.Mutex

	mu        sync.Mutex               // guards entries, idle and the entries' fields
	entries   entries                  // sorted by ID
	isolated  map[string]bool          // isolated schedules: each instance fires them itself
	idle      map[*schedEntry]struct{} // entries not in the loop: paused, dirty, complete
	version   string                   // last seen value of the partition's change counter
	lastSweep time.Time                // last Sweep
	loaded    bool                     // the registry was loaded once this term
	// recoveries is the Scheduler's count of write recoveries this
	// session last acted on (faultLog.recoveries).
	recoveries int64
}

func newSession(s *Scheduler, part int, e *leader.Elector, term leader.Term) *session {
	return &session{s: s, part: part, elector: e, term: term, isolated: map[string]bool{}, idle: map[*schedEntry]struct{}{},
		recoveries: s.faults.recoveries.Load()}
}

// refreshEvery is how often the leader polls for registry changes,
// requests and expired pauses.
func (ss *session) refreshEvery() time.Duration {
	return min(time.Second, ss.s.cfg.LeaderTTL/2)
}

func (ss *session) run(ctx context.Context) {
	ctx, ss.cancel = context.WithCancel(ctx)
	defer ss.cancel()
	ss.loop = firing.NewQueue(firing.QueueConfig[*schedEntry]{Fire: ss.onFire, OnAnomaly: ss.onAnomaly, Clock: ss.s.clock})
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
	t, ok := ss.elector.Current()
	if ok && t.Token == ss.term.Token {
		return true
	}
	ss.cancel()
	return false
}

// refresh re-reads what changed in the partition's registry, sweeps the
// whole registry about once per instance TTL (partition 0), and acts on
// operator requests, expired pauses and entries whose stored state must be
// read again.
func (ss *session) refresh(ctx context.Context) {
	if !ss.trusted() || ctx.Err() != nil {
		return
	}
	s := ss.s
	v, err := s.store.ChangeCount(ctx, ss.part)
	if err != nil {
		ss.warn(ctx, "chronos: leader: read registry version", err)
		return
	}
	if ss.loaded && ss.version != "" && v == "" {
		s.log.Warn("chronos: leader: the registry was reset (its change counter is gone: Redis lost its data); "+
			"reloading it as the instances put their schedules back", "partition", ss.part, "epoch", ss.term.Epoch)
	}
	reload := !ss.loaded || v != ss.version
	// The leader of partition 0 sweeps every heartbeat, and at once when
	// the registry changed (an instance registered or deregistered): a
	// schedule no live instance declares stops firing within a heartbeat
	// or two.
	if ss.part == 0 && (time.Since(ss.lastSweep) >= s.cfg.InstanceTTL/3 || v != ss.version) {
		if ss.sweep(ctx) {
			reload = true
		}
	}
	var list []schedstore.Schedule
	if reload {
		// Read without holding up firing: the stored state is used only for
		// schedules this term has not loaded yet, which nobody else fires.
		if list, err = s.store.ListPartition(ctx, ss.part); err != nil {
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
	r := ss.newRound(s.now())
	ss.mu.Lock()
	kept := make(entries, 0, len(list))
	clear(ss.isolated)
	for i := range list {
		sc := &list[i]
		if sc.Isolated {
			ss.isolated[sc.ID] = true
			continue
		}
		if !sc.Retired.IsZero() {
			continue // a tombstone: it does not fire (forgotten below)
		}
		e := ss.entries.find(sc.ID)
		hash, created := hashOf(sc.DefHash), msOf(sc.Created)
		if e == nil || e.d.hash != hash || e.d.created != created {
			// This instance declares it as stored: the entry shares the
			// declaration, compiled for the same created, instead of
			// keeping the reply's definition and a plan of its own.
			d := s.shared(sc.ID, hash, created)
			if d == nil {
				var err error
				if d, err = newDecl(&sc.Definition, sc.Created, hash); err != nil {
					s.log.Error("chronos: leader: schedule cannot be fired", "schedule", sc.ID, "err", err)
					if e != nil {
						ss.retire(e) // forgotten below
					}
					continue
				}
			}
			if e != nil {
				ss.retire(e) // its plan is stale: the new entry takes over
			}
			e = &schedEntry{d: d}
			e.setState(storedState(sc, d.trigger()))
		}
		kept = append(kept, e)
		e.setPauses(sc.State.Pause, sc.State.JobPauses)
		r.add(e, "catchup")
	}
	kept = kept.sorted()
	for _, e := range ss.entries {
		if kept.find(e.id()) != e {
			ss.retire(e)
		}
	}
	ss.entries = kept
	ss.mu.Unlock()
	r.commit(ctx)
}

// repair re-reads dirty entries and evaluates paused entries whose pause
// has expired.
func (ss *session) repair(ctx context.Context) {
	ss.reloadDirty(ctx)
	r := ss.newRound(ss.s.now())
	ss.mu.Lock()
	for e := range ss.idle {
		if e.dirty {
			continue
		}
		if m := e.more; m != nil && m.pause != nil && !m.pause.Until.IsZero() && !e.paused(r.now) {
			e.resume() // expired: evaluate as resumed
		}
		if e.paused(r.now) || e.complete() {
			continue
		}
		r.add(e, "catchup")
	}
	ss.mu.Unlock()
	r.commit(ctx)
}

// reloadDirty reads the stored state of the entries marked dirty.
func (ss *session) reloadDirty(ctx context.Context) {
	s := ss.s
	ss.mu.Lock()
	ss.recovered()
	var dirty []*schedEntry
	for e := range ss.idle {
		if e.dirty {
			dirty = append(dirty, e)
		}
	}
	ss.mu.Unlock()
	now := s.now()
	for _, e := range dirty {
		ss.mu.Lock()
		wait := !e.gone && now.UnixNano() < e.retryAt()
		ss.mu.Unlock()
		if wait {
			continue // backing off after a failed write
		}
		sc, err := s.store.Get(ctx, e.id())
		ss.mu.Lock()
		switch {
		case e.gone:
		case errors.Is(err, schedstore.ErrNotFound):
			ss.forget(e)
		case err != nil:
			ss.warn(ctx, "chronos: leader: reload schedule "+e.id(), err)
		default:
			e.setState(storedState(&sc, e.d.trigger()))
			e.dirty = false
			e.setPauses(sc.State.Pause, sc.State.JobPauses)
		}
		ss.mu.Unlock()
	}
}

// storedState converts a stored schedule's state to that of its trigger
// trig. A schedule never evaluated starts from the trigger's initial
// state. After a definition change the stored fire times belong to the old
// trigger: the new one continues with its first fire time after the later
// of the change and the last firing (missed ones since the change are then
// caught up per policy), keeping last_fired; a simple trigger's repeat
// count starts over.
func storedState(sc *schedstore.Schedule, trig trigger.Trigger) trigger.State {
	ts := sc.State.TriggerState
	if ts.Next.IsZero() && !ts.Complete {
		return trigger.Initial(trig)
	}
	st := trigger.State{
		Next: ts.Next, Prev: ts.Prev, Start: ts.Start,
		TimesTriggered: int(ts.TimesTriggered), RepeatCount: int(ts.RepeatCount), Complete: ts.Complete,
	}
	if sc.DefChanged.After(sc.State.Saved) {
		init := trigger.Initial(trig)
		after := sc.DefChanged
		if ts.Prev.After(after) {
			after = ts.Prev
		}
		if !init.Complete && init.Next.Before(after) {
			next, ok := trig.FireTimeAfter(after)
			init.Next, init.Complete = next, !ok
		}
		init.Prev = ts.Prev
		return init
	}
	return st
}

// onFire is the firing loop's callback: due holds the entries whose fire
// time came, out of the loop; each round puts them back (place).
func (ss *session) onFire(ctx context.Context, now time.Time, due []*schedEntry) {
	ss.fireMu.Lock()
	defer ss.fireMu.Unlock()
	if !ss.trusted() {
		ss.s.log.Warn("chronos: leader: term no longer trusted; not firing", "partition", ss.part, "epoch", ss.term.Epoch)
		return
	}
	r := ss.newRound(now)
	r.ahead = ss.s.cfg.FireAhead // the loop wakes FireAhead before each fire time
	ss.mu.Lock()
	for _, e := range due {
		if !e.gone { // forgotten or replaced since the loop handed it over
			r.add(e, "trigger")
		}
	}
	ss.mu.Unlock()
	r.commit(ctx)
}

func (ss *session) onAnomaly(a firing.Anomaly) {
	ss.s.log.Warn("chronos: leader: "+a.Kind.String()+"; due schedules are caught up per their misfire policy",
		"delta", a.Delta, "partition", ss.part, "epoch", ss.term.Epoch)
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

// sweep applies the rolling-deploy rule to the whole registry, every
// partition's (schedstore.Store.Sweep), which the leader of partition 0
// does for all. What it changed in another partition is noted in that
// partition's change counter, so its leader reloads within a second; it
// reports whether it changed something in this session's partition.
func (ss *session) sweep(ctx context.Context) bool {
	s := ss.s
	sweep := s.store.Sweep // reads the whole registry only when something changed
	if ss.lastSweep.IsZero() {
		sweep = s.store.FullSweep // the store's last sweeps may predate other leaders' terms
	}
	ss.lastSweep = time.Now()
	res, err := sweep(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.faults.failed(err, "what", "sweep")
		}
		return false
	}
	if time.Since(ss.term.Acquired) > 2*s.cfg.InstanceTTL {
		// Only once instances had time to heartbeat after an outage:
		// an instance not seen yet is not gone.
		ss.dropLegacyIsolatedQueues(ctx)
	}
	changed := slices.Concat(res.Handed, res.Retired, res.Deleted)
	if len(changed) == 0 {
		return false
	}
	ss.logSweep(res)
	mine := false
	var others []int
	for _, id := range changed {
		switch p := s.store.PartitionOf(id); {
		case p == ss.part:
			mine = true
		case !slices.Contains(others, p):
			others = append(others, p)
		}
	}
	if len(others) > 0 {
		if err := s.store.NoteChangeIn(ctx, others...); err != nil {
			ss.warn(ctx, "chronos: leader: note the sweep's changes for the partitions' leaders", err)
		}
	}
	return mine
}

// dropLegacyIsolatedQueues deletes the Redis queues that versions before
// in-process isolated schedules made per instance, once their instance is
// gone.
func (ss *session) dropLegacyIsolatedQueues(ctx context.Context) {
	dropped, err := ss.s.store.DropLegacyIsolatedQueues(ctx)
	if err != nil {
		ss.warn(ctx, "chronos: leader: delete the isolated queues of gone instances of an older version", err)
		return
	}
	if len(dropped) > 0 {
		ss.s.log.Info("chronos: leader: deleted the isolated queues of gone instances of an older version", "queues", dropped)
	}
}

// logSweep says what a sweep changed, once per schedule: each is reported
// by the sweep that changed it only.
func (ss *session) logSweep(res schedstore.SweepResult) {
	log := ss.s.log
	for _, id := range res.Retired {
		log.Info("chronos: leader: schedule retired: no live instance declares it; it no longer fires, and its state is kept for RetireGrace so that a rollback resumes from its last firing",
			"schedule", id)
	}
	for _, id := range res.Revived {
		log.Info("chronos: leader: retired schedule declared again; it fires again from its last firing", "schedule", id)
	}
	for _, id := range res.Deleted {
		log.Info("chronos: leader: schedule deleted with its state and history: no live instance declared it for RetireGrace", "schedule", id)
	}
	if len(res.Handed) > len(res.Revived) {
		log.Info("chronos: leader: registry swept", "handed", res.Handed)
	}
}
