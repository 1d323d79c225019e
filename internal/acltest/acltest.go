// Package acltest runs everything chronos does to Redis as one
// least-privilege ACL user, for the tests that prove chronos.ACLRules
// complete (docs/security.md).
//
// Start runs a service as the user would: two scheduler instances, which
// elect a leader and hand over, and two worker servers; Exercise then
// enqueues in every way, lets tasks succeed, retry, die and be requeued,
// fires every kind of schedule (interval, cron, group under an overlap
// policy, isolated) and does every operator action of the Inspector on
// them. The CLI's and the console's tests run their own commands and
// pages against the same service. What cannot be asserted from the
// outside (a denied CLIENT UNBLOCK that chronos ignores, a denied XINFO
// inside a script that falls back quietly) is what the ACL LOG shows:
// CheckACLLog fails the test on any entry, and CheckDenials proves that
// the log would have shown one.
//
// Every wait polls for a state; nothing asserts a duration.
package acltest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

// User and Password name the ACL user the tests create.
const (
	User     = "chronos-app"
	Password = "s3cret-for-tests"
)

// Deployment is a Redis deployment with the ACL user on every node.
type Deployment struct {
	// Nodes are all its data servers, masters and replicas.
	Nodes []*redistest.Server
	// User returns a new client authenticated as User, configured as
	// go-redis configures clients by default (so it sends CLIENT SETINFO
	// on connecting, which Redis before 7.2 does not know: not a denial).
	User func() redis.UniversalClient
	// Replicas is SchedulerConfig.Replicas, and WithReplicas, for the
	// service.
	Replicas int
}

// Single gives s the ACL user with rules.
func Single(s *redistest.Server, rules []string) *Deployment {
	s.AddUser(User, Password, rules...)
	return &Deployment{Nodes: []*redistest.Server{s}, User: func() redis.UniversalClient {
		return s.NewClient(func(o *redis.Options) { o.Username, o.Password = User, Password })
	}}
}

// OfCluster gives every node of c, replicas included, the ACL user with
// rules.
func OfCluster(c *redistest.Cluster, rules []string) *Deployment {
	c.AddUser(User, Password, rules...)
	d := &Deployment{User: func() redis.UniversalClient {
		return c.NewClient(func(o *redis.ClusterOptions) { o.Username, o.Password = User, Password })
	}}
	for _, n := range c.Nodes() {
		d.Nodes = append(d.Nodes, n.Server)
	}
	return d
}

// OfSentinel gives the master and the replica of sd the ACL user with
// rules (the sentinels keep their own ACL; the test's have none), and has
// the service ask for one replica (SchedulerConfig.Replicas).
func OfSentinel(sd *redistest.Sentinel, rules []string) *Deployment {
	d := &Deployment{Nodes: sd.Servers(), Replicas: 1, User: func() redis.UniversalClient {
		return sd.NewClient(func(o *redis.FailoverOptions) { o.Username, o.Password = User, Password })
	}}
	for _, n := range d.Nodes {
		n.AddUser(User, Password, rules...)
	}
	return d
}

// each runs f on every node with a client of its own administrator.
func (d *Deployment) each(t *testing.T, f func(ctx context.Context, n *redistest.Server, admin *redis.Client) error) {
	t.Helper()
	ctx := context.Background()
	for _, n := range d.Nodes {
		admin := redis.NewClient(n.Options())
		err := f(ctx, n, admin)
		_ = admin.Close()
		if err != nil {
			t.Fatalf("%s: %v", n.Addr(), err)
		}
	}
}

// ACLLog is every node's ACL LOG.
func (d *Deployment) ACLLog(t *testing.T) []redistest.ACLLogEntry {
	t.Helper()
	var all []redistest.ACLLogEntry
	d.each(t, func(ctx context.Context, n *redistest.Server, _ *redis.Client) error {
		log, err := n.ACLLog(ctx)
		all = append(all, log...)
		return err
	})
	return all
}

// Reset empties every node's ACL LOG and command statistics, so that
// CheckACLLog and Uncalled see only what follows.
func (d *Deployment) Reset(t *testing.T) {
	t.Helper()
	d.each(t, func(ctx context.Context, n *redistest.Server, admin *redis.Client) error {
		if err := n.ACLLogReset(ctx); err != nil {
			return err
		}
		return admin.ConfigResetStat(ctx).Err()
	})
}

// FlushScripts empties the script cache of every node, as a restart or a
// failover to a replica would, so that what follows meets NOSCRIPT and
// takes the fallbacks (EVAL, SCRIPT LOAD).
func (d *Deployment) FlushScripts(t *testing.T) {
	t.Helper()
	d.each(t, func(ctx context.Context, _ *redistest.Server, admin *redis.Client) error {
		return admin.ScriptFlush(ctx).Err()
	})
}

// Schedule IDs of the service.
const (
	Tick     = "acl.tick"     // every second, single job
	Hourly   = "acl.hourly"   // cron "0 0 * * * ?" in Asia/Seoul: the one to trigger and backfill
	Grouped  = "acl.group"    // a group every second under bufferOne, jobs "fast" and "slow"
	Local    = "acl.local"    // isolated, every second
	Retired  = "acl.retired"  // declared only by instance A, retired and deleted through the Inspector
	Retired2 = "acl.retired2" // declared only by instance A, retired by the leader once A is gone
)

// Unserved is a queue no server of the service serves: its tasks wait.
const Unserved = "acl-unserved"

// deadRetention is the servers' DeadRetention: one less than the tasks
// Exercise kills, so that a death trims the oldest dead letter.
const deadRetention = 6

// Tasks of the service.
type (
	// Work succeeds; Slow says how long it takes.
	Work struct {
		Slow time.Duration `json:"slow,omitempty"`
	}
	// Flaky fails its first attempt and is retried.
	Flaky struct{}
	// Doomed dies (ErrSkipRetry) the first time it runs, and succeeds
	// once requeued.
	Doomed struct{}
)

func (Work) Kind() string   { return "acl_work" }
func (Flaky) Kind() string  { return "acl_flaky" }
func (Doomed) Kind() string { return "acl_doomed" }

// Service is a chronos service running as the ACL user.
type Service struct {
	t     *testing.T
	dep   *Deployment
	ns    string
	ctx   context.Context
	logs  *syncBuffer
	quiet *slog.Logger

	Client *chronos.Client
	Insp   *chronos.Inspector

	schedA, schedB *chronos.Scheduler
	srvA, srvB     *chronos.Server

	mu      sync.Mutex
	ran     map[string]int // successful runs per task ID
	flaky   map[string]int // runs per Flaky task
	doomed  map[string]int // runs per Doomed task
	stopped bool

	// DeadIDs are dead tasks Exercise left for the CLI and the console to
	// requeue and delete (four).
	DeadIDs []string
}

// Start runs the service in namespace ns of dep, every part with a client
// of its own authenticated as User, as separate processes would have.
// Instance A starts first and leads; Exercise shuts it down to hand over
// to B.
func Start(t *testing.T, dep *Deployment, ns string) *Service {
	t.Helper()
	s := &Service{t: t, dep: dep, ns: ns, ctx: context.Background(), logs: &syncBuffer{},
		ran: map[string]int{}, flaky: map[string]int{}, doomed: map[string]int{}}
	logger := slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s.quiet = slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("service log (namespace %s):\n%s", ns, tail(s.logs.String(), 8000))
		}
	})
	copts := []chronos.ClientOption{chronos.WithNamespace(ns)}
	if dep.Replicas > 0 {
		copts = append(copts, chronos.WithReplicas(dep.Replicas, time.Second))
	}
	s.Client = chronos.NewClient(dep.User(), copts...)
	s.Insp = chronos.NewInspector(dep.User(), chronos.WithNamespace(ns))

	s.srvA, s.srvB = s.server(logger), s.server(logger)
	s.schedA = s.scheduler("sched-a", s.srvA, logger, true)
	s.schedB = s.scheduler("sched-b", s.srvB, logger, false)
	must(t, s.schedA.Start(s.ctx))
	s.waitLeader("sched-a")
	must(t, s.schedB.Start(s.ctx))
	t.Cleanup(s.Stop)
	return s
}

func (s *Service) server(logger *slog.Logger) *chronos.Server {
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Work]) error {
		s.count(task.ID)
		select {
		case <-time.After(task.Args.Slow):
		case <-ctx.Done():
		}
		return nil
	})
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Flaky]) error {
		if s.bump(s.flaky, task.ID) == 1 {
			return errors.New("first attempt fails")
		}
		s.count(task.ID)
		return nil
	}, chronos.WithBackoff(chronos.ConstantBackoff(10*time.Millisecond)))
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Doomed]) error {
		if s.bump(s.doomed, task.ID) == 1 {
			return fmt.Errorf("doomed: %w", chronos.ErrSkipRetry)
		}
		s.count(task.ID)
		return nil
	})
	srv := chronos.NewServer(s.dep.User(), chronos.ServerConfig{
		Namespace: s.ns, Concurrency: 4, Queues: map[string]int{chronos.DefaultQueue: 2, "imports": 1},
		// Short leases, so that renewals, recovery passes and the pruning
		// of departed consumers all run within the test.
		VisibilityTimeout: 200 * time.Millisecond, SuccessRunInterval: -1, ShutdownTimeout: 5 * time.Second,
		DeadRetention: deadRetention, Logger: logger, TaskLogger: s.quiet,
	})
	must(s.t, srv.Start(s.ctx, mux))
	return srv
}

// scheduler declares the service's schedules; instance A also declares
// the two that are retired once it is gone.
func (s *Service) scheduler(id string, srv *chronos.Server, logger *slog.Logger, withRetired bool) *chronos.Scheduler {
	sc := chronos.NewScheduler(s.dep.User(), chronos.SchedulerConfig{
		Namespace: s.ns, InstanceID: id, Version: "v1.0.0", LeaderTTL: time.Second, Server: srv, Logger: logger,
		Replicas: s.dep.Replicas,
	})
	must(s.t, chronos.RegisterInterval(sc, time.Second, Work{}, chronos.WithScheduleID(Tick), chronos.WithSource("jobs.go", 10)))
	must(s.t, chronos.RegisterCron(sc, "0 0 * * * ?", Work{}, chronos.WithScheduleID(Hourly), chronos.WithTimeZone("Asia/Seoul")))
	g := chronos.NewGroup(sc, Grouped, chronos.CronTrigger("* * * * * ?"), chronos.WithOverlap(chronos.OverlapBufferOne))
	must(s.t, chronos.AddJob(g, "fast", Work{}))
	// Slower than the trigger, so that firings find it running, buffer
	// one firing and check where its run is.
	must(s.t, chronos.AddJob(g, "slow", Work{Slow: 1500 * time.Millisecond}, chronos.WithQueue("imports")))
	must(s.t, chronos.RegisterInterval(sc, time.Second, Work{}, chronos.WithScheduleID(Local), chronos.WithIsolated(true)))
	if withRetired {
		must(s.t, chronos.RegisterInterval(sc, time.Hour, Work{}, chronos.WithScheduleID(Retired)))
		must(s.t, chronos.RegisterInterval(sc, time.Hour, Work{}, chronos.WithScheduleID(Retired2)))
	}
	return sc
}

func (s *Service) count(id string) { s.bump(s.ran, id) }

func (s *Service) bump(m map[string]int, id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m[id]++
	return m[id]
}

func (s *Service) get(m map[string]int, id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return m[id]
}

// Ran is how many times task id ran to success.
func (s *Service) Ran(id string) int { return s.get(s.ran, id) }

// Stop shuts the service down (B's scheduler resigns, the servers hand
// their tasks back and leave their consumer groups). It is idempotent.
func (s *Service) Stop() {
	s.mu.Lock()
	done := s.stopped
	s.stopped = true
	s.mu.Unlock()
	if done {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
	defer cancel()
	var errs []error
	for _, sc := range []*chronos.Scheduler{s.schedA, s.schedB} {
		if err := sc.Shutdown(ctx); err != nil && !errors.Is(err, chronos.ErrSchedulerNotStarted) {
			errs = append(errs, err)
		}
	}
	for _, srv := range []*chronos.Server{s.srvA, s.srvB} {
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, chronos.ErrServerNotStarted) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		s.t.Errorf("shutdown: %v", err)
	}
	_ = s.Client.Close()
}

// Leader is the instance that leads now ("" for none).
func (s *Service) Leader() string {
	l, err := s.Insp.SchedulerLeader(s.ctx)
	if err != nil || l == nil {
		return ""
	}
	return l.InstanceID
}

func (s *Service) waitLeader(id string) {
	s.t.Helper()
	Eventually(s.t, "instance "+id+" to lead", func() bool { return s.Leader() == id })
}

// Exercise does, as the ACL user, every kind of operation of the library
// once or more, and checks that each worked. It leaves instance B leading,
// both servers running, four dead tasks (DeadIDs) and every schedule but
// the retired ones in force.
func (s *Service) Exercise() {
	t, ctx := s.t, s.ctx
	t.Helper()

	// Enqueue: a bare XADD, a delayed task, a dedup claim and its
	// duplicate, another queue, a batch, and concurrent calls that the
	// client sends as one pipeline.
	now := s.enqueue(Work{})
	later := s.enqueue(Work{}, chronos.WithProcessIn(50*time.Millisecond), chronos.WithDedupKey("once", time.Minute))
	if dup, err := s.Client.Enqueue(ctx, Work{}, chronos.WithDedupKey("once", time.Minute)); err != nil || !dup.Duplicate || dup.ID != later.ID {
		t.Fatalf("duplicate enqueue = %+v, %v; want a duplicate of %s", dup, err, later.ID)
	}
	imported := s.enqueue(Work{}, chronos.WithQueue("imports"), chronos.WithTimeout(time.Minute), chronos.WithDeadline(time.Now().Add(time.Hour)))
	batch, err := s.Client.EnqueueMany(ctx, []chronos.TaskArgs{Work{}, Work{}, Flaky{}}, chronos.WithProcessIn(10*time.Millisecond))
	if err != nil {
		t.Fatalf("EnqueueMany: %v", err)
	}
	ids := []string{now.ID, later.ID, imported.ID}
	for _, b := range batch {
		ids = append(ids, b.ID)
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for range 8 {
		wg.Go(func() {
			info, err := s.Client.Enqueue(ctx, Work{})
			if err != nil {
				t.Errorf("concurrent Enqueue: %v", err)
				return
			}
			mu.Lock()
			ids = append(ids, info.ID)
			mu.Unlock()
		})
	}
	wg.Wait()
	retried := s.enqueue(Flaky{}, chronos.WithMaxRetry(3))
	ids = append(ids, retried.ID)
	for _, id := range ids {
		Eventually(t, "task "+id+" to run", func() bool { return s.Ran(id) > 0 })
	}

	// Redis forgets its scripts (a restart, a failover to a replica): the
	// next calls meet NOSCRIPT and fall back to SCRIPT LOAD (a pipeline,
	// first, since the fallback of a single call, EVAL, caches the script
	// again) or EVAL (a single call), here, in the servers' loops and in
	// the scheduler's firings.
	s.dep.FlushScripts(t)
	batch, err = s.Client.EnqueueMany(ctx, []chronos.TaskArgs{Work{}, Work{}}, chronos.WithProcessIn(10*time.Millisecond))
	if err != nil {
		t.Fatalf("EnqueueMany after SCRIPT FLUSH: %v", err)
	}
	for _, b := range batch {
		ids = append(ids, b.ID)
	}
	ids = append(ids, s.enqueue(Work{}, chronos.WithProcessIn(10*time.Millisecond)).ID)
	for _, id := range ids {
		Eventually(t, "task "+id+" to run", func() bool { return s.Ran(id) > 0 })
	}

	// A slow task holds its lease past the visibility timeout: the server
	// renews it (XCLAIM) while recovery passes run.
	slow := s.enqueue(Work{Slow: 700 * time.Millisecond})
	Eventually(t, "the slow task to run", func() bool { return s.Ran(slow.ID) > 0 })
	if _, err := s.Insp.ListTasks(ctx, chronos.DefaultQueue, chronos.TaskRunning, chronos.TaskFilter{}); err != nil {
		t.Fatalf("ListTasks running: %v", err)
	}

	s.exerciseDead()

	// Queues: pause one and resume it; list the tasks that wait in a queue
	// no server serves, and in the delayed set.
	must(t, s.Insp.PauseQueue(ctx, "imports"))
	if qi, err := s.Insp.QueueInfo(ctx, "imports"); err != nil || !qi.Paused {
		t.Fatalf("QueueInfo = %+v, %v", qi, err)
	}
	must(t, s.Insp.ResumeQueue(ctx, "imports"))
	waiting := s.enqueue(Work{}, chronos.WithQueue(Unserved))
	delayed := s.enqueue(Work{}, chronos.WithProcessIn(time.Hour))
	if ready, err := s.Insp.ListTasks(ctx, Unserved, chronos.TaskReady, chronos.TaskFilter{}); err != nil || !hasTask(ready, waiting.ID) {
		t.Fatalf("ListTasks ready: %v, %v; want %s", ready, err, waiting.ID)
	}
	if d, err := s.Insp.ListTasks(ctx, chronos.DefaultQueue, chronos.TaskDelayed, chronos.TaskFilter{Kind: Work{}.Kind()}); err != nil || !hasTask(d, delayed.ID) {
		t.Fatalf("ListTasks delayed: %v, %v", d, err)
	}
	for _, want := range []struct {
		id    string
		state chronos.TaskState
	}{{waiting.ID, chronos.TaskReady}, {delayed.ID, chronos.TaskDelayed}} {
		if st, err := s.Insp.GetTask(ctx, want.id); err != nil || st.State != want.state {
			t.Fatalf("GetTask(%s) = %+v, %v; want %s", want.id, st, err, want.state)
		}
	}
	if _, err := s.Insp.OldestReady(ctx, Unserved); err != nil {
		t.Fatalf("OldestReady: %v", err)
	}
	if qs, err := s.Insp.Queues(ctx); err != nil || !slices.Contains(qs, Unserved) {
		t.Fatalf("Queues = %v, %v", qs, err)
	}
	if _, err := s.Insp.QueueRates(ctx, time.Minute); err != nil {
		t.Fatalf("QueueRates: %v", err)
	}

	// Run records.
	if kinds, err := s.Insp.RunKinds(ctx); err != nil || !slices.Contains(kinds, Work{}.Kind()) {
		t.Fatalf("RunKinds = %v, %v", kinds, err)
	}
	if runs, err := s.Insp.ListRuns(ctx, Flaky{}.Kind(), 100); err != nil || len(runs) < 2 {
		t.Fatalf("ListRuns = %d, %v", len(runs), err)
	}
	if runs, err := s.Insp.TaskRuns(ctx, retried.ID, Flaky{}.Kind()); err != nil || len(runs) != 2 {
		t.Fatalf("TaskRuns of the retried task = %d, %v; want a retry and a success", len(runs), err)
	}
	if ok, err := s.Insp.NamespaceExists(ctx); err != nil || !ok {
		t.Fatalf("NamespaceExists = %v, %v", ok, err)
	}

	s.exerciseSchedules()
}

// exerciseDead kills one task more than the dead letters keep, then lists,
// requeues and deletes dead letters.
func (s *Service) exerciseDead() {
	t, ctx := s.t, s.ctx
	t.Helper()
	var doomed []string
	for range deadRetention + 1 {
		doomed = append(doomed, s.enqueue(Doomed{}).ID)
	}
	Eventually(t, "every doomed task to die once", func() bool {
		for _, id := range doomed {
			if s.get(s.doomed, id) == 0 {
				return false
			}
		}
		// Every death written: a handler returns before its outcome is.
		runs, err := s.Insp.ListRuns(ctx, Doomed{}.Kind(), 100)
		if err != nil || len(runs) < len(doomed) {
			return false
		}
		n, err := s.Insp.CountDead(ctx)
		return err == nil && n == deadRetention // the oldest death was trimmed
	})
	list, err := s.Insp.ListDead(ctx, chronos.ListOptions{Limit: 100})
	if err != nil || len(list) != deadRetention {
		t.Fatalf("ListDead = %d, %v; want %d", len(list), err, deadRetention)
	}
	var dead []string
	for _, d := range list {
		dead = append(dead, d.ID)
	}
	if l, err := s.Insp.SearchDead(ctx, chronos.DefaultQueue, chronos.TaskFilter{Kind: Doomed{}.Kind()}); err != nil || len(l) != deadRetention {
		t.Fatalf("SearchDead = %d, %v", len(l), err)
	}
	if m, err := s.Insp.DeadCountsByQueue(ctx); err != nil || m[chronos.DefaultQueue] != deadRetention {
		t.Fatalf("DeadCountsByQueue = %v, %v", m, err)
	}
	if d, err := s.Insp.GetDead(ctx, dead[0]); err != nil || d.Reason == "" {
		t.Fatalf("GetDead = %+v, %v", d, err)
	}
	if _, err := s.Insp.RequeueDead(ctx, dead[0]); err != nil {
		t.Fatalf("RequeueDead: %v", err)
	}
	Eventually(t, "the requeued task to run", func() bool { return s.Ran(dead[0]) > 0 })
	must(t, s.Insp.DeleteDead(ctx, dead[1]))
	if _, err := s.Insp.GetDead(ctx, dead[1]); !errors.Is(err, chronos.ErrTaskNotFound) {
		t.Fatalf("GetDead of a deleted task: %v", err)
	}
	s.DeadIDs = dead[2:]
}

func (s *Service) exerciseSchedules() {
	t, ctx := s.t, s.ctx
	t.Helper()
	// Firing: the interval schedule, the group under its overlap policy
	// (a firing buffered behind the slow job), the isolated schedule.
	for _, id := range []string{Tick, Grouped, Local} {
		Eventually(t, id+" to fire twice", func() bool {
			h, err := s.Insp.ScheduleHistory(ctx, id, 10)
			return err == nil && len(h) >= 2
		})
	}
	Eventually(t, "a firing of the slow job to be buffered", func() bool {
		h, err := s.Insp.ScheduleHistory(ctx, Grouped, 20)
		if err != nil {
			return false
		}
		for _, r := range h {
			for _, j := range r.Jobs {
				if j.Job == "slow" && j.Result == "buffered" {
					return true
				}
			}
		}
		return false
	})
	must(t, s.Insp.ClearOverlap(ctx, Grouped, "slow"))

	// Pauses: a whole schedule until a time, one job of the group.
	must(t, s.Insp.PauseSchedule(ctx, Tick, chronos.PauseOptions{Note: "acl test", Who: "ops", Until: time.Now().Add(time.Hour)}))
	if info, err := s.Insp.Schedule(ctx, Tick); err != nil || info.Paused == nil {
		t.Fatalf("Schedule after a pause = %+v, %v", info, err)
	}
	must(t, s.Insp.PauseSchedule(ctx, Grouped, chronos.PauseOptions{Job: "fast", Who: "ops"}))
	if ok, err := s.Insp.ResumeSchedule(ctx, Tick, ""); err != nil || !ok {
		t.Fatalf("ResumeSchedule = %v, %v", ok, err)
	}
	if ok, err := s.Insp.ResumeSchedule(ctx, Grouped, "fast"); err != nil || !ok {
		t.Fatalf("ResumeSchedule of a job = %v, %v", ok, err)
	}

	// Requests the leader carries out: trigger now, and a backfill.
	if _, err := s.Insp.TriggerSchedule(ctx, Hourly, "ops"); err != nil {
		t.Fatalf("TriggerSchedule: %v", err)
	}
	to := time.Now().Truncate(time.Hour)
	from := to.Add(-2 * time.Hour)
	if plan, err := s.Insp.PlanBackfill(ctx, Hourly, from, to); err != nil || plan.Count != 3 {
		t.Fatalf("PlanBackfill = %+v, %v; want 3 fire times", plan, err)
	}
	if _, err := s.Insp.BackfillSchedule(ctx, Hourly, from, to, chronos.BackfillOptions{Who: "ops"}); err != nil {
		t.Fatalf("BackfillSchedule: %v", err)
	}
	if _, err := s.Insp.Requests(ctx); err != nil {
		t.Fatalf("Requests: %v", err)
	}
	Eventually(t, "the trigger and the backfill to be carried out", func() bool {
		n, err := s.Insp.PendingRequests(ctx)
		return err == nil && n == 0 && len(s.Firings(Hourly, "request")) == 1 && len(s.Firings(Hourly, "backfill")) == 3
	})

	// Hand over: A resigns, B leads. The schedules only A declared are
	// retired: one by the Inspector (then deleted), the other by the
	// leader, which retires what no live instance declares.
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	must(t, s.schedA.Shutdown(sctx))
	s.waitLeader("sched-b")
	Eventually(t, "instance A to be gone", func() bool {
		is, err := s.Insp.SchedulerInstances(ctx)
		return err == nil && len(is) == 1 && is[0].ID == "sched-b"
	})
	must(t, s.Insp.RetireSchedule(ctx, Retired, "ops"))
	if info, err := s.Insp.Schedule(ctx, Retired); err != nil || info.Retired.IsZero() {
		t.Fatalf("Schedule of a retired schedule = %+v, %v", info, err)
	}
	must(t, s.Insp.DeleteSchedule(ctx, Retired))
	if _, err := s.Insp.Schedule(ctx, Retired); !errors.Is(err, chronos.ErrScheduleNotFound) {
		t.Fatalf("Schedule of a deleted schedule: %v", err)
	}
	Eventually(t, "the leader to retire "+Retired2, func() bool {
		info, err := s.Insp.Schedule(ctx, Retired2)
		return err == nil && !info.Retired.IsZero()
	})

	// Reads.
	if all, err := s.Insp.Schedules(ctx); err != nil || len(all) != 5 {
		t.Fatalf("Schedules = %d, %v; want 5", len(all), err)
	}
	if ts, err := s.Insp.NextFireTimes(ctx, Hourly, 3); err != nil || len(ts) != 3 {
		t.Fatalf("NextFireTimes = %v, %v", ts, err)
	}
	if h, err := s.Insp.ScheduleHealth(ctx); err != nil || h[Tick] == nil {
		t.Fatalf("ScheduleHealth = %v, %v", h, err)
	}
	// B fires on as leader.
	fired := len(s.Firings(Tick, "trigger"))
	Eventually(t, "the new leader to fire", func() bool { return len(s.Firings(Tick, "trigger")) > fired })
}

// Firings are the firings of schedule id with source src, newest first.
func (s *Service) Firings(id, src string) []*chronos.FiringRecord {
	h, err := s.Insp.ScheduleHistory(s.ctx, id, 100)
	if err != nil {
		return nil
	}
	var out []*chronos.FiringRecord
	for _, r := range h {
		if r.Source == src {
			out = append(out, r)
		}
	}
	return out
}

func (s *Service) enqueue(args chronos.TaskArgs, opts ...chronos.EnqueueOption) *chronos.TaskInfo {
	s.t.Helper()
	info, err := s.Client.Enqueue(s.ctx, args, opts...)
	if err != nil {
		s.t.Fatalf("Enqueue %s: %v", args.Kind(), err)
	}
	return info
}

func hasTask(ts []*chronos.StoredTask, id string) bool {
	return slices.ContainsFunc(ts, func(st *chronos.StoredTask) bool { return st.ID == id })
}

// Eventually polls cond until it holds, for at most 30 s; reaching that is
// a failure, never a measurement.
func Eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// syncBuffer is a buffer safe for the concurrent writes of log handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
