package chronos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/firing"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// Defaults of SchedulerConfig.
const (
	DefaultLeaderTTL        = 5 * time.Second
	DefaultMisfireThreshold = 60 * time.Second
	DefaultFireAhead        = 250 * time.Millisecond
)

// SchedulerConfig configures a Scheduler. The zero value is a working
// configuration.
type SchedulerConfig struct {
	// Namespace selects the namespace (default "chronos"); it must match
	// the namespace of the servers that run the tasks.
	Namespace string

	// Partitions is the number of partitions of a namespace this
	// scheduler is the first to use (default 12, keyspace's
	// DefaultPartitions; between 1 and 1,024). A namespace's count is
	// fixed when it is created: 0 uses the stored one, and a different
	// count is ErrLayoutMismatch at Start. A namespace written by versions
	// before partitions keeps their single hash tag whatever is set (see
	// docs/scheduler.md, "Partitions").
	Partitions int

	// InstanceID names this scheduler instance in the registry, the
	// leader's lease and the logs. Default: host-pid-random, new for every
	// Scheduler (two in one process are two instances). Set it only if it
	// is unique among live instances.
	InstanceID string

	// Version is this build's version. When instances of two versions
	// declare different definitions for one schedule ID during a rolling
	// deploy, the higher version's definition is in force (natural order:
	// "v1.10" > "v1.9"); see docs/scheduler.md.
	Version string

	// LeaderTTL is the leader lease (default 5s). A crashed leader is
	// replaced after at most this long; a graceful one within milliseconds.
	LeaderTTL time.Duration

	// MisfireThreshold is how late a fire may be before its schedule's
	// misfire policy decides about it (default 60s, as Quartz ships).
	MisfireThreshold time.Duration

	// MaxCatchup caps the fires one catch-up evaluation of a schedule may
	// enqueue (default 100, trigger.DefaultMaxFires); older missed fires
	// are dropped and logged.
	MaxCatchup int

	// InstanceTTL is how long an instance counts as live after its last
	// heartbeat (default 3 × LeaderTTL). Heartbeats are sent every third.
	InstanceTTL time.Duration

	// HistoryLimit is how many firing records are kept per schedule
	// (default 100).
	HistoryLimit int

	// FireAhead is how long before its fire time the leader enqueues a
	// trigger, into the delayed set with the exact fire time as its due
	// time; the Servers' forwarders move it to the queue at that time
	// (default DefaultFireAhead; negative: fire at the fire time). A
	// burst of triggers due at the same second is then written before the
	// second, and reaches the queue within milliseconds of it instead of
	// after the burst's scripts ran one after another. What it costs: a
	// pause or a definition change made within FireAhead of a fire time
	// no longer stops that firing, each trigger is a delayed task (a
	// ZADD, then the forwarder's move), and its task waits in the delayed
	// set until a Server of its queue forwards it (docs/scheduler.md).
	// With Replicas set, triggers are fired at their time whatever
	// FireAhead says: a task fired ahead becomes due through the
	// forwarder's move, which no replica check guards, so an old master
	// after a failover could run a trigger that the new master runs again.
	FireAhead time.Duration

	// Replicas, if positive, is how many replicas the leader's writes
	// must reach: every lease acquire and renewal and every firing first
	// checks, inside its script, that the master has that many replicas
	// online, and refuses to write otherwise (the leader steps down, a
	// firing is tried again with backoff); then WAIT confirms them. The
	// check is what stops an old master after a failover that did not
	// pause it (a bare SENTINEL FAILOVER, a partition) from taking a
	// trigger that the new master's leader then fires again. A master is
	// asked for no more replicas than it has been seen to have connected,
	// so a promoted replica whose old master is not attached yet, or a
	// standalone server, does not hold the leader up (docs/scheduler.md).
	// It narrows the windows asynchronous replication leaves; it is not
	// consensus. Each write then waits for one replication round trip, at
	// most LeaderTTL/10. With a cluster client, each partition's writes
	// and their WAIT go to the master that serves the partition, on that
	// master's own connection, and count its replicas. Default 0: no
	// check, no waiting.
	Replicas int

	// Logger receives leadership changes, catch-up decisions, overlap skips
	// and fenced writes (default slog.Default()).
	Logger *slog.Logger

	// Metrics, if set, receives firing results, misfires and leadership
	// changes (see Metrics and docs/metrics.md). Nil records nothing.
	Metrics Metrics

	// Server runs this instance's isolated schedules (WithIsolated), in
	// process, on its workers (see LocalQueue). Start fails if an isolated
	// schedule is registered and Server is nil, or serves another
	// namespace. The Scheduler never starts or stops it.
	Server *Server
}

func (c SchedulerConfig) withDefaults() SchedulerConfig {
	if c.Namespace == "" {
		c.Namespace = keyspace.DefaultNamespace
	}
	if c.InstanceID == "" {
		c.InstanceID = newInstanceID()
	}
	if c.LeaderTTL <= 0 {
		c.LeaderTTL = DefaultLeaderTTL
	}
	if c.MisfireThreshold <= 0 {
		c.MisfireThreshold = DefaultMisfireThreshold
	}
	if c.MaxCatchup <= 0 {
		c.MaxCatchup = 100
	}
	if c.InstanceTTL <= 0 {
		c.InstanceTTL = 3 * c.LeaderTTL
	}
	if c.HistoryLimit <= 0 {
		c.HistoryLimit = 100
	}
	switch {
	case c.Replicas > 0 || c.FireAhead < 0:
		c.FireAhead = 0 // see FireAhead: only the fire script checks replicas
	case c.FireAhead == 0:
		c.FireAhead = DefaultFireAhead
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Scheduler enqueues the tasks of recurring schedules, each trigger exactly
// once across all instances of a service. Create one per process, register
// schedules, then Start it on every instance. A namespace's schedules are
// split into partitions, each with its own elected leader: the live
// instances share the partitions, and each fires the schedules of those it
// leads (and every instance its isolated schedules).
type Scheduler struct {
	client redis.UniversalClient
	cfg    SchedulerConfig
	store  *schedstore.Store // from Start on, in the namespace's layout
	log    *slog.Logger
	now    func() time.Time
	clock  firing.Clock // the firing loops' time; tests in this package set it with now
	self   schedstore.Instance

	mu      sync.Mutex
	started bool
	stopped bool
	decls   []*schedstore.Definition          // declared by this instance, in order, until Start
	byID    map[string]*schedstore.Definition // decls by ID, until Start
	// From Start on, the declarations are fixed: own holds them (the only
	// copy), compiled and compact, sorted by ID (declared finds one), and
	// mirror, by the same position, what the registry last held. Slices,
	// not maps: this is memory per schedule.
	own    []decl
	mirror mirror      // the registry as last seen, to put back after a data loss
	parts  *partitions // the elections of the namespace's partitions
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// stopBeats stops the heartbeats, which Shutdown does first, and
	// beatsDone is closed once they stopped.
	stopBeats context.CancelFunc
	beatsDone chan struct{}
	isolated  *isolatedRunner
	faults    *faultLog // the leader's failed writes, logged in summary
	beats     *faultLog // failed heartbeats, likewise
	// otherLayout is what the last heartbeat found of processes of the
	// other layout in the namespace (HeartbeatResult.OtherLayout), 0 for
	// none; noteOtherLayout logs its changes.
	otherLayout atomic.Int64
}

// NewScheduler returns a Scheduler that keeps its registry in, and enqueues
// through, client.
// A cluster client (*redis.ClusterClient) is made to reload its slot map
// when a command fails to connect or meets CLUSTERDOWN, so that the death
// of a master costs the time to promote its replica rather than up to the
// client's ClusterStateReloadInterval (docs/cluster.md).
func NewScheduler(client redis.UniversalClient, cfg SchedulerConfig) *Scheduler {
	rdb.ReloadOnFailure(client)
	cfg = cfg.withDefaults()
	host, _ := os.Hostname()
	s := &Scheduler{
		client: client,
		cfg:    cfg,
		log:    cfg.Logger,
		now:    time.Now,
		clock:  firing.SystemClock(),
		byID:   map[string]*schedstore.Definition{},
	}
	s.self = schedstore.Instance{ID: cfg.InstanceID, Host: host, PID: os.Getpid(), Version: cfg.Version}
	s.faults = &faultLog{log: cfg.Logger,
		warning:   "chronos: leader: Redis refuses the leader's writes; each schedule's firing is read and tried again with backoff (up to 30s), all of them once a write succeeds",
		recovered: "chronos: leader: firings recorded again; missed fire times are caught up per misfire policy"}
	s.beats = &faultLog{log: cfg.Logger,
		warning:   "chronos: scheduler heartbeat failed; the leader does not retire schedules while its own heartbeat fails",
		recovered: "chronos: scheduler heartbeats recorded again"}
	return s
}

// newInstanceID returns a new default instance ID: host-pid-random.
func newInstanceID() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "host"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b)
}

// InstanceID returns the ID this scheduler registers under.
func (s *Scheduler) InstanceID() string { return s.cfg.InstanceID }

// declare records a single-job schedule.
func (s *Scheduler) declare(def schedstore.Definition, cfg scheduleConfig, args TaskArgs) error {
	if args == nil {
		return errors.New("chronos: register schedule: nil args")
	}
	job, err := encodeJob(mainJob, args, cfg.task)
	if err == nil {
		err = finishDefinition(&def, cfg, s.now())
	}
	def.ID = cfg.sched.id
	if def.ID == "" {
		def.ID = defaultID(args.Kind(), def)
	}
	if err != nil {
		return fmt.Errorf("chronos: schedule %q: %w", def.ID, err)
	}
	def.Jobs = []schedstore.Job{job}
	if err := def.Validate(); err != nil {
		return fmt.Errorf("chronos: %w", err)
	}
	return s.add(&def)
}

func (s *Scheduler) add(def *schedstore.Definition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("chronos: schedule %q: %w", def.ID, ErrSchedulerStarted)
	}
	if _, dup := s.byID[def.ID]; dup {
		return fmt.Errorf("chronos: schedule %q registered twice: give each schedule of one task kind and trigger its own ID with WithScheduleID", def.ID)
	}
	s.byID[def.ID] = def
	s.decls = append(s.decls, def)
	return nil
}

func (s *Scheduler) addGroup(g *Group) error { return s.add(&g.def) }

func (s *Scheduler) addGroupJob(g *Group, job schedstore.Job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("chronos: group %q: %w", g.id, ErrSchedulerStarted)
	}
	for _, j := range g.def.Jobs {
		if j.Name == job.Name {
			return fmt.Errorf("chronos: group %q: job %q added twice", g.id, job.Name)
		}
	}
	if job.Name == "" {
		return fmt.Errorf("chronos: group %q: empty job name", g.id)
	}
	g.def.Jobs = append(g.def.Jobs, job)
	return nil
}

// Start registers this instance's schedules in Redis, where they are
// visible to Inspectors and every leader at once, and starts the
// background work: heartbeats, the elections of the namespace's
// partitions, firing the schedules of those it leads, and this instance's
// isolated schedules. It is safe, and intended, to call on every instance.
// It returns once the schedules are registered; ctx bounds only that. A
// namespace created with another partition count than a positive
// SchedulerConfig.Partitions is an error wrapping ErrLayoutMismatch. Stop
// the scheduler with Shutdown.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return ErrSchedulerStarted
	}
	defs := make([]schedstore.Definition, 0, len(s.decls))
	for _, d := range s.decls {
		if len(d.Jobs) == 0 {
			s.mu.Unlock()
			return fmt.Errorf("chronos: group %q has no jobs", d.ID)
		}
		defs = append(defs, *d)
	}
	s.self.Started = s.now()
	s.self.Declares = len(defs) > 0
	s.self.Starting = true // until it can lead partitions (below)
	slices.SortFunc(defs, func(a, b schedstore.Definition) int { return strings.Compare(a.ID, b.ID) })
	own, err := compileOwn(defs, s.now())
	if err != nil { // each compiled when registered: cannot happen
		s.mu.Unlock()
		return fmt.Errorf("chronos: start scheduler: %w", err)
	}
	s.own = own
	s.mu.Unlock()
	iso, err := s.isolatedSetup(defs)
	if err != nil {
		return fmt.Errorf("chronos: start scheduler: %w", err)
	}
	layout, err := s.resolveLayout(ctx, defs)
	if err != nil {
		return fmt.Errorf("chronos: start scheduler: %w", err)
	}
	s.store = schedstore.New(s.client, schedstore.Config{Layout: layout, InstanceTTL: s.cfg.InstanceTTL, Self: s.cfg.InstanceID})

	hb, err := s.store.Heartbeat(ctx, s.self)
	if err != nil {
		return fmt.Errorf("chronos: start scheduler: %w", err)
	}
	s.noteOtherLayout(hb.OtherLayout)
	stopBeating := s.keepAlive(ctx, s.self)
	defer stopBeating()
	if err := s.declareAll(ctx, defs); err != nil {
		return fmt.Errorf("chronos: start scheduler: %w", err)
	}
	if err := s.mirror.fill(ctx, s.store, s.own, s.now()); err != nil {
		return fmt.Errorf("chronos: start scheduler: %w", err)
	}
	s.mirror.anchor(s.own) // the leader's entries share the declarations compiled for the registry's created
	// Ready to lead: the others count it in the partitions' assignment from
	// this heartbeat on. Until then they left it out, instead of handing it
	// partitions it could not take (left leaderless, then rescued and kept
	// by their rescuer while the live instances stayed the same).
	stopBeating()
	s.self.Starting = false
	if _, err := s.store.Heartbeat(ctx, s.self); err != nil {
		s.beats.failed(err, "instance", s.cfg.InstanceID) // the next heartbeat says it
	}
	parts := newPartitions(s)
	parts.assign(ctx) // the partitions this instance owns are contended for at once

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return ErrSchedulerStarted
	}
	s.started = true
	s.decls, s.byID = nil, nil // own is the only copy from now on
	s.parts = parts
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	beatsCtx, stopBeats := context.WithCancel(runCtx)
	s.stopBeats, s.beatsDone = stopBeats, make(chan struct{})
	s.wg.Go(func() { parts.run(runCtx) })
	s.wg.Go(func() {
		defer close(s.beatsDone)
		s.heartbeats(beatsCtx)
	})
	if len(iso) > 0 {
		s.isolated = newIsolatedRunner(s, iso)
		s.wg.Go(func() { s.isolated.run(runCtx) })
	}
	s.log.Info("chronos: scheduler started", "instance", s.cfg.InstanceID, "schedules", len(defs), "isolated", len(iso),
		"partitions", layout.Partitions(), "layout", layout.Version())
	return nil
}

// resolveLayout finds the namespace's layout (keyspace.Resolver): the
// stored one, layout 1 for a namespace of versions before partitions
// (markers: the control keys those versions write, and the streams of the
// queues this instance's schedules enqueue to, in their names), or a new
// partitioned one of SchedulerConfig.Partitions (default 12).
func (s *Scheduler) resolveLayout(ctx context.Context, defs []schedstore.Definition) (keyspace.Layout, error) {
	old := rdb.NewKeys(s.cfg.Namespace)
	var markers []string
	seen := map[string]bool{}
	for _, d := range defs {
		for _, j := range d.Jobs {
			q := j.Options[optQueue]
			if q == "" {
				q = DefaultQueue
			}
			if !seen[q] {
				seen[q] = true
				markers = append(markers, old.Stream(q))
			}
		}
	}
	return keyspace.NewResolver(s.client, s.cfg.Namespace, keyspace.ResolveOptions{Partitions: s.cfg.Partitions, Markers: markers}).Layout(ctx)
}

// Shutdown stops this instance's part in the scheduler without a gap: it
// stops the heartbeats and removes the instance from the registry first,
// so that the other instances' next assignment already leaves it out,
// then stops firing and resigns every partition it leads (the new owner of
// each, told by the resign notice, takes over within milliseconds and
// fires from the persisted state, so a hand-over loses and doubles
// nothing). ctx bounds the whole; what it cut short is left to the leases'
// expiry.
func (s *Scheduler) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.started {
		s.mu.Unlock()
		return ErrSchedulerNotStarted
	}
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	s.mu.Unlock()

	var err error
	s.stopBeats()
	select {
	case <-s.beatsDone:
	case <-ctx.Done():
		err = fmt.Errorf("chronos: scheduler shutdown: %w", ctx.Err())
	}
	if err == nil {
		dctx, cancel := context.WithTimeout(ctx, s.cfg.LeaderTTL)
		if derr := s.store.Deregister(dctx, s.cfg.InstanceID); derr != nil {
			err = fmt.Errorf("chronos: scheduler shutdown: %w", derr)
		}
		cancel()
	}
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if err == nil {
			err = fmt.Errorf("chronos: scheduler shutdown: %w", ctx.Err())
		}
	}
	s.log.Info("chronos: scheduler stopped", "instance", s.cfg.InstanceID)
	return err
}

// heartbeats keeps this instance live in the registry, with its leader
// flag, and shares the partitions (partitions.assign) at every heartbeat
// and at every resign notice, until ctx ends.
func (s *Scheduler) heartbeats(ctx context.Context) {
	t := time.NewTicker(s.cfg.InstanceTTL / 3)
	defer t.Stop()
	heard := time.Now() // the last heartbeat Redis took (Start registered)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.parts.notices:
			s.parts.assign(ctx)
			continue
		case <-t.C:
		}
		inst := s.self
		inst.Leader = s.parts.leadingAny()
		res, err := s.store.Heartbeat(ctx, inst)
		if err != nil {
			if ctx.Err() == nil {
				s.beats.failed(err, "instance", s.cfg.InstanceID)
			}
			continue
		}
		s.beats.ok()
		s.noteOtherLayout(res.OtherLayout)
		if res.MetaRestored {
			s.log.Warn("chronos: the namespace's layout record was gone (Redis lost its data); written again",
				"instance", s.cfg.InstanceID, "partitions", s.store.Partitions())
		}
		// A record lost although heard from within its expiry was lost with Redis's data.
		dataLost := time.Since(heard) < 2*s.cfg.InstanceTTL
		heard = time.Now()
		s.parts.assign(ctx)
		// Declaring again, or reading what changed after every schedule did
		// (instances starting with a million), can outlast the record:
		// heartbeats go on meanwhile.
		stopBeating := s.keepAlive(ctx, inst)
		if res.Undeclared && len(s.own) > 0 {
			s.redeclare(ctx, res, dataLost)
		} else if err := s.mirror.update(ctx, s.store, s.own, s.declared, s.now()); err != nil && ctx.Err() == nil {
			s.beats.failed(err, "instance", s.cfg.InstanceID, "what", "read the changed schedules")
		}
		stopBeating()
	}
}

// noteOtherLayout records what a heartbeat found of processes of the other
// layout in the namespace (schedstore.HeartbeatResult.OtherLayout) and
// logs an ERROR when they appear, and once at INFO when they are gone.
//
// Two layouts in one namespace fire every schedule both declare twice,
// each into its own queue keys, which only servers of that layout read. It
// happens to a namespace of layout 1, not yet migrated, whose Redis lost
// its data while its processes ran: a process that starts before they
// wrote a key of their layout again finds nothing, and keyspace's resolve
// stops it from partitioning the namespace only when it sees their
// subscriptions, which a restart of Redis drops until they reconnect. Or
// to processes of layout 1 left running through chronos migrate. This
// instance cannot switch layouts while it runs, and stepping down would
// stop the schedules only it declares; restarting the processes of layout
// 1 ends it (docs/scheduler.md, "When Redis loses its data").
func (s *Scheduler) noteOtherLayout(n int) {
	prev := s.otherLayout.Swap(int64(n))
	switch {
	case n > 0 && prev == 0 && s.store.Layout().IsSingle():
		s.log.Error("chronos: this instance runs the namespace in layout 1 (the single tag), but the namespace now has a layout record (its meta key): "+
			"it was partitioned under this instance, by a process that started while Redis held no key of the namespace (Redis lost its data), or by chronos migrate; "+
			"schedules declared in both layouts fire twice, and each layout's tasks run only on servers of that layout. "+
			"Restart this instance and the other processes of layout 1 with this version: they then use the stored layout",
			"namespace", s.cfg.Namespace, "instance", s.cfg.InstanceID)
	case n > 0 && prev == 0:
		s.log.Error("chronos: processes of layout 1 (the single tag) run in this partitioned namespace (connections subscribed to its layout-1 channels): "+
			"it was partitioned while they ran, by a process that started while Redis held no key of the namespace (Redis lost its data), or they were not stopped before chronos migrate; "+
			"schedules declared in both layouts fire twice, and each layout's tasks run only on servers of that layout. "+
			"Restart them with this version (an earlier one always uses layout 1): they then use the partitioned layout",
			"namespace", s.cfg.Namespace, "instance", s.cfg.InstanceID, "layout", s.store.Layout().Version(), "subscribers", n)
	case n == 0 && prev > 0:
		s.log.Info("chronos: no process of another layout is seen in the namespace any more",
			"namespace", s.cfg.Namespace, "instance", s.cfg.InstanceID, "layout", s.store.Layout().Version())
	}
}

// keepAlive heartbeats for inst every third of InstanceTTL until the
// function it returns is called, while Start or redeclare declares the
// schedules, or the mirror reads what changed: with a million schedules
// that takes minutes, and without
// heartbeats the instance's record and declarations expired meanwhile, so
// its partitions went to the others, the sweep could take its schedules
// for undeclared, and the next heartbeat declared them all again (for as
// long). What the heartbeats find missing is for the caller, which is
// declaring, to mend.
func (s *Scheduler) keepAlive(ctx context.Context, inst schedstore.Instance) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.cfg.InstanceTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, err := s.store.Heartbeat(ctx, inst); err != nil {
				if ctx.Err() == nil {
					s.beats.failed(err, "instance", s.cfg.InstanceID)
				}
				continue
			}
			s.beats.ok()
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }
}

// declareAll registers this instance's schedules, defs, and tells the
// leader.
func (s *Scheduler) declareAll(ctx context.Context, defs []schedstore.Definition) error {
	res, err := s.store.Register(ctx, s.self.Declarer(), defs)
	if err != nil {
		return err
	}
	if err := s.store.NoteChange(ctx); err != nil {
		return err
	}
	for _, id := range res.Conflicts {
		s.log.Warn("chronos: a newer instance's definition of this schedule is in force", "schedule", id, "instance", s.cfg.InstanceID)
	}
	for _, id := range res.Revived {
		s.log.Info("chronos: retired schedule declared again; it fires again from its last firing", "schedule", id, "instance", s.cfg.InstanceID)
	}
	return nil
}

// redeclare declares this instance's schedules again after a heartbeat
// found its declarations gone: they expired during an outage longer than
// twice InstanceTTL, or Redis lost its data. Without it, "last declared"
// would stop moving and the leader would retire schedules every instance
// still runs. When the instance's record was gone too, it first puts back
// the schedules the registry lost, as its mirror last saw them, so that
// the leader catches up from where the cluster was.
func (s *Scheduler) redeclare(ctx context.Context, hb schedstore.HeartbeatResult, dataLost bool) {
	var seeded schedstore.SeedResult
	var asOf time.Time
	defs := s.definitions()
	if hb.Lost {
		var seeds []schedstore.Schedule
		seeds, asOf = s.mirror.seeds(defs, s.own, s.self.Declarer())
		var err error
		if seeded, err = s.store.Seed(ctx, seeds); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("chronos: this instance's registry record is gone; putting back the schedules failed, retrying at the next heartbeat",
					"instance", s.cfg.InstanceID, "err", err)
			}
			return
		}
	}
	if err := s.declareAll(ctx, defs); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("chronos: this instance's declarations are gone; declaring them again failed, retrying at the next heartbeat",
				"instance", s.cfg.InstanceID, "err", err)
		}
		return
	}
	switch {
	case seeded.Created+seeded.Advanced > 0:
		s.log.Warn("chronos: registry lost (Redis lost its data: restarted without persistence, flushed, or failed over to an empty replica): "+
			"schedules declared again, state re-seeded from this instance",
			"schedules", len(s.own), "reseeded", seeded.Created, "moved_forward", seeded.Advanced,
			"instance", s.cfg.InstanceID, "state_as_of", asOf, "state_age", s.now().Sub(asOf).Round(time.Millisecond))
		s.recordRegistryLost(seeded.Created)
	case hb.Lost && dataLost:
		s.log.Warn("chronos: this instance's registry record was gone although Redis heard from it within twice InstanceTTL: Redis lost its data, and another instance had put the schedules back already; schedules declared again",
			"instance", s.cfg.InstanceID, "schedules", len(s.own))
	case hb.Lost:
		s.log.Warn("chronos: this instance's registry record was gone (not heard from for twice InstanceTTL); schedules declared again",
			"instance", s.cfg.InstanceID, "schedules", len(s.own))
	default:
		s.log.Warn("chronos: this instance's declarations had expired (Redis unreachable or refusing writes for more than twice InstanceTTL); schedules declared again",
			"instance", s.cfg.InstanceID, "schedules", len(s.own))
	}
}
