package chronos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// ErrScheduleNotFound is returned (wrapped) by Inspector methods for a
// schedule that is not in the registry.
var ErrScheduleNotFound = errors.New("chronos: schedule not found")

// ErrIsolatedSchedule is returned (wrapped) for an operation an isolated
// schedule does not support: each instance fires it from its own timer
// and keeps its state in memory, so there is no cluster-wide past to
// backfill.
var ErrIsolatedSchedule = errors.New("chronos: not supported for an isolated schedule")

// ScheduleInfo describes a schedule as the registry holds it: its
// definition in force and its durable state. Schedules are listed from the
// moment an instance registers them, before they ever fire.
type ScheduleInfo struct {
	ID       string
	Trigger  string // "cron", "interval" or "simple"
	Spec     string // cron expression, interval, or encoded simple trigger
	TimeZone string // cron only; "" is UTC
	DST      string // cron only: "quartz" or "shiftGap"
	Misfire  string // misfire policy name
	Isolated bool
	Group    string // group ID; "" for a single-job schedule
	Overlap  string // "allow", "skip" or "bufferOne"
	Source   string // "file:line" of the declaration
	Jobs     []ScheduleJob

	// NextFire is the next fire time (for a schedule never evaluated, the
	// trigger's first one); zero once the trigger is complete.
	NextFire    time.Time
	LastFired   time.Time
	LastOutcome string // "fired", "skipped:overlap", "misfire:<policy>", ...
	// LastInstance is, for an isolated schedule, the instance that fired
	// it last (each live instance fires it).
	LastInstance string
	Complete     bool
	Paused       *Pause // the whole schedule; nil when not paused

	DeclaredBy      string // instance whose definition is in force
	DeclaredVersion string
	Created         time.Time // first registration

	// Retired is when the schedule stopped firing because no live instance
	// declared it any more (RetiredBy is empty) or an operator retired it
	// (RetiredBy names them); zero while it is in force. Its state is kept
	// until it is deleted, so that a rollback resumes it.
	Retired   time.Time
	RetiredBy string

	// Partition is the partition of the namespace the schedule belongs to
	// (always 0 in a namespace of a single partition): the leader of that
	// partition fires it (SchedulerLeaders).
	Partition int
}

// ScheduleJob is one job of a schedule.
type ScheduleJob struct {
	Name   string
	Kind   string
	Queue  string
	Paused *Pause // this job alone; nil when not paused
}

// Pause describes a pause: why, by whom, since and until when (zero: until
// resumed).
type Pause struct {
	Note  string
	Who   string
	At    time.Time
	Until time.Time
}

// SchedulerInstance is a live scheduler instance, from its heartbeats.
type SchedulerInstance struct {
	ID       string
	Host     string
	PID      int
	Version  string
	Started  time.Time
	LastSeen time.Time
	// Leader reports that the instance is the SchedulerLeader: it leads
	// partition 0, which also sweeps the registry.
	Leader bool
	// Partitions lists the partitions the instance leads, in order: the
	// schedules it fires (SchedulerLeaders).
	Partitions []int
}

// LeaderInfo names the leader of a partition of the namespace (of the
// whole namespace when it has a single partition) and its fencing epoch.
type LeaderInfo struct {
	// InstanceID is the leader; "" in SchedulerLeaders for a partition
	// nobody leads now.
	InstanceID string
	Epoch      int64
	// Since is when the leader's term began, by its clock; zero when not
	// recorded (a term of a version before the record).
	Since time.Time
	// LeaseRemaining is how long the lease lasts unless the leader renews
	// it (it does every LeaderTTL/2).
	LeaseRemaining time.Duration
	// LastEpoch is the latest epoch ever issued in the partition; it
	// equals Epoch while the leader holds its term.
	LastEpoch int64
	// Partition is the partition led (0 for SchedulerLeader).
	Partition int
}

// FiringRecord is one entry of a schedule's history: a firing and what
// became of each job (enqueued, buffered or skipped by the overlap policy),
// plus a "cleared" entry for each stale overlap marker the firing dropped.
type FiringRecord struct {
	At      time.Time // when the firing was written
	Trigger time.Time // the trigger it stands for
	Source  string    // trigger, catchup, request, backfill, isolated
	Jobs    []FiringJob
}

// FiringJob is what one firing did with one job.
type FiringJob struct {
	Job    string
	TaskID string
	Result string // enqueued, buffered, skipped; cleared: TaskID's run no longer existed, its marker was dropped
}

// schedRegistry is the Inspector's access to the scheduler's registry,
// in the namespace's layout, which it reads on first use and remembers
// once Redis holds it. It never creates a namespace: one that does not
// exist yet reads as the empty namespace it would be.
type schedRegistry struct {
	client   redis.UniversalClient
	ns       string
	resolver *keyspace.Resolver

	mu    sync.Mutex
	store *schedstore.Store
}

func newSchedRegistry(client redis.UniversalClient, ns string) *schedRegistry {
	return &schedRegistry{client: client, ns: ns, resolver: keyspace.NewResolver(client, ns, keyspace.ResolveOptions{ReadOnly: true})}
}

// registry returns the scheduler's store in the namespace's layout.
func (i *Inspector) registry(ctx context.Context) (*schedstore.Store, error) {
	r := i.sched
	l, err := r.resolver.Layout(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if st := r.store; st != nil && st.Layout().Version() == l.Version() && st.Partitions() == l.Partitions() {
		return st, nil
	}
	st := schedstore.New(r.client, schedstore.Config{Layout: l})
	if _, stored := r.resolver.Cached(); stored {
		r.store = st
	}
	return st, nil
}

// Schedules lists every schedule of the namespace, ordered by ID.
func (i *Inspector) Schedules(ctx context.Context) ([]*ScheduleInfo, error) {
	st, err := i.registry(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: list schedules: %w", err)
	}
	list, err := st.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: list schedules: %w", err)
	}
	last, err := i.lastIsolatedFirings(ctx, st, list)
	if err != nil {
		return nil, fmt.Errorf("chronos: list schedules: %w", err)
	}
	now := time.Now()
	out := make([]*ScheduleInfo, len(list))
	for k := range list {
		out[k] = scheduleInfo(&list[k], now, last)
		out[k].Partition = st.PartitionOf(list[k].ID)
	}
	return out, nil
}

// lastIsolatedFirings reads the newest firing record of the isolated
// schedules of list: their state lives in each instance's memory, so the
// history is where the registry knows when one last fired.
func (i *Inspector) lastIsolatedFirings(ctx context.Context, st *schedstore.Store, list []schedstore.Schedule) (map[string]schedstore.FiringRecord, error) {
	var ids []string
	for k := range list {
		if list[k].Isolated {
			ids = append(ids, list[k].ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return st.LastFirings(ctx, ids)
}

// Schedule returns schedule id, or an error wrapping ErrScheduleNotFound.
func (i *Inspector) Schedule(ctx context.Context, id string) (*ScheduleInfo, error) {
	sc, err := i.getSchedule(ctx, id)
	if err != nil {
		return nil, err
	}
	st, err := i.registry(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: schedule %q: %w", id, err)
	}
	last, err := i.lastIsolatedFirings(ctx, st, []schedstore.Schedule{sc})
	if err != nil {
		return nil, fmt.Errorf("chronos: schedule %q: %w", id, err)
	}
	info := scheduleInfo(&sc, time.Now(), last)
	info.Partition = st.PartitionOf(id)
	return info, nil
}

func (i *Inspector) getSchedule(ctx context.Context, id string) (schedstore.Schedule, error) {
	st, err := i.registry(ctx)
	if err != nil {
		return schedstore.Schedule{}, fmt.Errorf("chronos: schedule %q: %w", id, err)
	}
	sc, err := st.Get(ctx, id)
	if errors.Is(err, schedstore.ErrNotFound) {
		return sc, fmt.Errorf("chronos: schedule %q: %w", id, ErrScheduleNotFound)
	}
	if err != nil {
		return sc, fmt.Errorf("chronos: schedule %q: %w", id, err)
	}
	return sc, nil
}

// scheduleInfo describes sc at now; last holds the newest firing records
// of isolated schedules.
func scheduleInfo(sc *schedstore.Schedule, now time.Time, last map[string]schedstore.FiringRecord) *ScheduleInfo {
	kind, shiftGap := strings.CutSuffix(sc.Kind, dstSuffix)
	info := &ScheduleInfo{
		ID: sc.ID, Trigger: kind, Spec: sc.Spec, TimeZone: sc.Zone, Misfire: sc.Policy, Isolated: sc.Isolated,
		Group: sc.Group, Overlap: sc.Overlap, Source: sc.Source,
		NextFire: sc.State.Next, LastFired: sc.State.Prev, LastOutcome: sc.State.LastOutcome, Complete: sc.State.Complete,
		DeclaredBy: sc.DeclaredBy.InstanceID, DeclaredVersion: sc.DeclaredBy.Version, Created: sc.Created,
		Retired: sc.Retired, RetiredBy: sc.RetiredBy,
	}
	if info.Misfire == "" {
		info.Misfire = trigger.PolicySmart.String()
	}
	if info.Overlap == "" {
		info.Overlap = OverlapAllow.String()
	}
	if kind == defKindCron {
		info.DST = "quartz"
		if shiftGap {
			info.DST = "shiftGap"
		}
	}
	p, err := compile(sc.Definition, sc.Created)
	switch {
	case err != nil:
	case !sc.Retired.IsZero():
		info.NextFire = time.Time{} // a tombstone does not fire
	case sc.Isolated:
		// Each instance fires it from its own state, in memory: the next
		// fire is the trigger's after now, the last the newest record.
		info.NextFire, _ = p.trig.FireTimeAfter(now)
		if r, ok := last[sc.ID]; ok {
			info.LastFired, info.LastOutcome, info.LastInstance = r.Slot, "fired", r.Instance
		}
	case info.NextFire.IsZero() && !info.Complete || sc.DefChanged.After(sc.State.Saved):
		st := storedState(sc, p.trig)
		info.NextFire, info.Complete = st.Next, st.Complete
	}
	if p := sc.State.Pause; p != nil {
		info.Paused = &Pause{Note: p.Note, Who: p.Who, At: p.At, Until: p.Until}
	}
	for _, j := range sc.Jobs {
		o, _ := decodeTaskOptions(j.Options)
		sj := ScheduleJob{Name: j.Name, Kind: j.Kind, Queue: o.queue}
		switch {
		case sc.Isolated:
			sj.Queue = LocalQueue
		case sj.Queue == "":
			sj.Queue = DefaultQueue
		}
		if p, ok := sc.State.JobPauses[j.Name]; ok {
			sj.Paused = &Pause{Note: p.Note, Who: p.Who, At: p.At, Until: p.Until}
		}
		info.Jobs = append(info.Jobs, sj)
	}
	return info
}

// NextFireTimes returns the next n fire times of schedule id after its
// next scheduled one, that one included, from the definition in force.
func (i *Inspector) NextFireTimes(ctx context.Context, id string, n int) ([]time.Time, error) {
	sc, err := i.getSchedule(ctx, id)
	if err != nil {
		return nil, err
	}
	p, err := compile(sc.Definition, sc.Created)
	if err != nil {
		return nil, fmt.Errorf("chronos: schedule %q: %w", id, err)
	}
	st := storedState(&sc, p.trig)
	if sc.Isolated { // instances keep its state in memory: from now
		st.Next, _ = p.trig.FireTimeAfter(time.Now())
		st.Complete = st.Next.IsZero()
	}
	var out []time.Time
	if !st.Complete && !st.Next.IsZero() {
		for t := st.Next; len(out) < n; {
			out = append(out, t)
			st = trigger.Triggered(p.trig, st)
			if st.Complete {
				break
			}
			t = st.Next
		}
	}
	return out, nil
}

// PauseOptions describe a pause.
type PauseOptions struct {
	// Job pauses one job of a group; empty pauses the whole schedule.
	Job string
	// Note says why, for other operators.
	Note string
	// Who paused it.
	Who string
	// Until ends the pause on its own; zero means until ResumeSchedule.
	Until time.Time
}

// PauseSchedule pauses schedule id, or one of its jobs, cluster-wide and
// durably (it survives restarts and leader changes). Fire times missed
// while paused are handled by the misfire policy on resume.
func (i *Inspector) PauseSchedule(ctx context.Context, id string, opts PauseOptions) error {
	st, err := i.registry(ctx)
	if err != nil {
		return fmt.Errorf("chronos: pause %q: %w", id, err)
	}
	err = st.Pause(ctx, id, schedstore.Pause{Job: opts.Job, Note: opts.Note, Who: opts.Who, Until: opts.Until})
	if errors.Is(err, schedstore.ErrNotFound) {
		return fmt.Errorf("chronos: pause %q: %w", id, ErrScheduleNotFound)
	}
	if err != nil {
		return fmt.Errorf("chronos: pause %q: %w", id, err)
	}
	return noteChange(ctx, st, id)
}

// ResumeSchedule ends the pause of schedule id (job == "") or of one of its
// jobs. It reports whether there was a pause to end.
func (i *Inspector) ResumeSchedule(ctx context.Context, id, job string) (bool, error) {
	st, err := i.registry(ctx)
	if err != nil {
		return false, fmt.Errorf("chronos: resume %q: %w", id, err)
	}
	ok, err := st.Resume(ctx, id, job)
	if err != nil {
		return false, fmt.Errorf("chronos: resume %q: %w", id, err)
	}
	return ok, noteChange(ctx, st, id)
}

// noteChange tells the leader of schedule id's partition to re-read its
// registry now.
func noteChange(ctx context.Context, st *schedstore.Store, id string) error {
	if err := st.NoteChangeOf(ctx, id); err != nil {
		return fmt.Errorf("chronos: notify the leader: %w", err)
	}
	return nil
}

// TriggerSchedule asks the leader to fire schedule id once, now, outside
// its trigger (the trigger state does not change). The request is durable:
// it is carried out, once, even across a leader change. It returns the
// request ID.
//
// A request fires the schedule even while it is paused (the operator named
// it), but leaves out the paused jobs of a group, as the timer does.
func (i *Inspector) TriggerSchedule(ctx context.Context, id, who string) (string, error) {
	st, err := i.registry(ctx)
	if err != nil {
		return "", fmt.Errorf("chronos: trigger %q: %w", id, err)
	}
	r, err := st.RequestTrigger(ctx, id, who)
	if errors.Is(err, schedstore.ErrNotFound) {
		return "", fmt.Errorf("chronos: trigger %q: %w", id, ErrScheduleNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("chronos: trigger %q: %w", id, err)
	}
	return r.ID, nil
}

// PendingRequests returns the number of operator requests the leaders
// have not carried out yet, in every partition.
func (i *Inspector) PendingRequests(ctx context.Context) (int, error) {
	st, err := i.registry(ctx)
	if err != nil {
		return 0, fmt.Errorf("chronos: pending requests: %w", err)
	}
	rs, err := st.Requests(ctx, 0)
	if err != nil {
		return 0, fmt.Errorf("chronos: pending requests: %w", err)
	}
	return len(rs), nil
}

// SchedulerInstances lists the live scheduler instances, each with the
// partitions it leads.
func (i *Inspector) SchedulerInstances(ctx context.Context) ([]*SchedulerInstance, error) {
	st, err := i.registry(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: list instances: %w", err)
	}
	insts, err := st.Instances(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: list instances: %w", err)
	}
	leaders, _ := i.SchedulerLeaders(ctx)
	out := make([]*SchedulerInstance, len(insts))
	for k, in := range insts {
		si := &SchedulerInstance{ID: in.ID, Host: in.Host, PID: in.PID, Version: in.Version,
			Started: in.Started, LastSeen: in.LastSeen}
		for _, l := range leaders {
			if l.InstanceID == in.ID {
				si.Partitions = append(si.Partitions, l.Partition)
				si.Leader = si.Leader || l.Partition == 0
			}
		}
		out[k] = si
	}
	return out, nil
}

// SchedulerLeader returns the leader of partition 0, or nil when there is
// none. In a namespace of a single partition (every namespace written by
// versions before partitions, and any created with Partitions 1) it is the
// one leader; in a partitioned namespace it is the instance that also
// sweeps the registry (retires the schedules no live instance declares),
// and each partition has a leader of its own (SchedulerLeaders).
func (i *Inspector) SchedulerLeader(ctx context.Context) (*LeaderInfo, error) {
	st, err := i.registry(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: current leader: %w", err)
	}
	l, err := leader.Inspect(ctx, i.sched.client, st.Lease(0))
	if err != nil {
		return nil, fmt.Errorf("chronos: current leader: %w", err)
	}
	if !l.Held {
		return nil, nil
	}
	return leaderInfo(0, l), nil
}

// SchedulerLeaders returns the leadership of every partition, in order:
// InstanceID is "" for a partition nobody leads now (its schedules do not
// fire until an instance takes it over). One round trip.
func (i *Inspector) SchedulerLeaders(ctx context.Context) ([]*LeaderInfo, error) {
	st, err := i.registry(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: leaders: %w", err)
	}
	keys := make([]leader.Keys, st.Partitions())
	for p := range keys {
		keys[p] = st.Lease(p)
	}
	ls, err := leader.InspectAll(ctx, i.sched.client, keys)
	if err != nil {
		return nil, fmt.Errorf("chronos: leaders: %w", err)
	}
	out := make([]*LeaderInfo, len(ls))
	for p, l := range ls {
		out[p] = leaderInfo(p, l)
	}
	return out, nil
}

// LeaderSince returns when the term of partition 0's leader with fencing
// epoch epoch began (SchedulerLeader), or the zero time when that is not
// the current term or its start was not recorded (a term of a version
// before the record). It implements the console's LeaderSincer.
func (i *Inspector) LeaderSince(ctx context.Context, epoch int64) (time.Time, error) {
	l, err := i.SchedulerLeader(ctx)
	if err != nil || l == nil || l.Epoch != epoch {
		return time.Time{}, err
	}
	return l.Since, nil
}

func leaderInfo(p int, l leader.Lease) *LeaderInfo {
	return &LeaderInfo{InstanceID: l.Instance, Epoch: l.Epoch, Since: l.Since, LeaseRemaining: l.Remaining, LastEpoch: l.LastEpoch, Partition: p}
}

// ScheduleHistory returns up to limit (default 100) firing records of
// schedule id, newest first. SchedulerConfig.HistoryLimit records are kept.
func (i *Inspector) ScheduleHistory(ctx context.Context, id string, limit int) ([]*FiringRecord, error) {
	if limit <= 0 {
		limit = 100
	}
	st, err := i.registry(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: history of %q: %w", id, err)
	}
	recs, err := st.History(ctx, id, limit)
	if err != nil {
		return nil, fmt.Errorf("chronos: history of %q: %w", id, err)
	}
	out := make([]*FiringRecord, len(recs))
	for k, r := range recs {
		fr := &FiringRecord{At: r.At, Trigger: r.Slot, Source: r.Source}
		for _, j := range r.Jobs {
			fr.Jobs = append(fr.Jobs, FiringJob{Job: j.Job, TaskID: j.Task, Result: j.Result})
		}
		out[k] = fr
	}
	return out, nil
}

// ClearOverlap forgets the runs that the overlap policy of schedule id's
// job (mainJob "main" for a schedule that is not a group) counts as queued
// or running, and any firing buffered behind them. The queue clears the
// marker itself when a run finishes, and the next firing clears a run that
// vanished without finishing (its entry or queue deleted by hand); use this
// only when that check cannot decide (see "Stale markers" in
// docs/scheduler.md: markers left by an older version, a job whose queue
// changed) and the tasks are known to be gone.
func (i *Inspector) ClearOverlap(ctx context.Context, id, job string) error {
	if job == "" {
		job = mainJob
	}
	marker := id + ":" + job
	st, err := i.registry(ctx)
	if err != nil {
		return fmt.Errorf("chronos: clear overlap of %q job %q: %w", id, job, err)
	}
	// The markers are in the schedule's partition, with its queue keys.
	q := &rdb.RDB{C: i.sched.client, K: st.QueueKeys(st.PartitionOf(id))}
	if err := q.ClearOverlap(ctx, marker); err != nil {
		return fmt.Errorf("chronos: clear overlap of %q job %q: %w", id, job, err)
	}
	return nil
}
