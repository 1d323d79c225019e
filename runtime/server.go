package chronos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// ServerConfig configures a Server. The zero value is a working
// configuration: the "default" queue, 4 workers per CPU, a 30 s visibility
// timeout, logging to slog.Default.
type ServerConfig struct {
	// Concurrency is the most handlers that run at once
	// (default 4 × runtime.NumCPU()).
	Concurrency int

	// Queues maps the queues to serve to their weights (default
	// {"default": 1}). Without StrictPriority, each fetch visits the queues
	// in a random order weighted by these numbers, so a queue of weight 6
	// is served first about six times as often as one of weight 1 and no
	// queue starves. With StrictPriority the queues are always drained in
	// order of decreasing weight.
	Queues map[string]int

	// StrictPriority drains higher-weight queues before lower ones.
	StrictPriority bool

	// ShutdownTimeout bounds how long Shutdown waits for running handlers
	// when its context has no earlier deadline (default 10 s).
	ShutdownTimeout time.Duration

	// VisibilityTimeout is the lease on a task taken by this server (default
	// 30 s). The server renews the leases of its running tasks every third
	// of it, so handlers may run longer; if the server dies, any server of
	// the namespace recovers the task once it has gone this long without a
	// renewal. Shorter means faster recovery after a crash, at the cost of
	// more renewals. Values below 50 ms are raised to 50 ms.
	VisibilityTimeout time.Duration

	// MaxDeliveries is how many times one task may be taken by a worker
	// that then disappears (crashes, or misses its lease) before it goes to
	// the dead letters with ErrTooManyDeliveries (default 5). It stops a
	// task that crashes its process from crashing every process in turn.
	MaxDeliveries int

	// Backoff is the retry delay policy for kinds without WithBackoff
	// (default ExponentialBackoff(1s, 1h)).
	Backoff Backoff

	// RunRetention is about how many run records are kept per kind in each
	// partition of the namespace (default 1000; negative keeps none), so at
	// least the newest RunRetention of a kind are always kept.
	RunRetention int

	// SuccessRunInterval spaces the run records of successful runs: this
	// server appends one for a kind only if its last one for that kind is
	// at least this old (default 10 ms: at most 100 a second per kind and
	// server). Failures and the runs of schedules are always recorded.
	// Negative records every success, as before; a record per task cost a
	// busy server about a sixth of its CPU (docs/queue.md).
	SuccessRunInterval time.Duration

	// DeadRetention is the most dead letters kept in the namespace (default
	// 10000); the oldest are dropped first, over every partition.
	DeadRetention int

	// Logger receives the server's own records (default slog.Default()).
	Logger *slog.Logger

	// TaskLogger receives the task lifecycle records (start, success,
	// failure; see docs/logging.md). Default: Logger.
	TaskLogger *slog.Logger

	// SuccessLogLevel is the level of the record logged when a task
	// succeeds (default slog.LevelDebug, like the start record). A busy
	// server succeeds thousands of times a second, and a handler enabled at
	// Info spent about a quarter of the server's CPU on these records even
	// when it discarded them (5 of 21 µs per task); failures keep logging at Warn and Error. Set
	// it to slog.LevelInfo for the success records at Info, as before
	// (docs/logging.md).
	SuccessLogLevel slog.Leveler

	// ErrorHandler, if set, is called after each failed run, whether the
	// task will be retried or not. It must not block for long.
	ErrorHandler func(ctx context.Context, task *TaskInfo, err error)

	// Namespace selects the namespace (default "chronos"), as WithNamespace
	// does for clients.
	Namespace string

	// Partitions is the number of partitions of the namespace, as
	// WithPartitions is for clients: it matters only when the server is
	// the first process to use a new namespace (0: the stored count, or 12
	// for a new namespace). A count that differs from an existing
	// partitioned namespace's makes Start fail with an error wrapping
	// ErrLayoutMismatch. The server takes tasks from every partition of
	// its queues (docs/queue.md, "Partitions").
	Partitions int

	// Metrics, if set, receives task starts and outcomes (see Metrics and
	// docs/metrics.md). Nil records nothing.
	Metrics Metrics
}

// minVisibilityTimeout keeps lease renewals (every third of the timeout)
// from becoming a busy loop.
const minVisibilityTimeout = 50 * time.Millisecond

// Server takes tasks from Redis and runs their handlers.
type Server struct {
	ns       *rdb.Namespace
	queue    *rdb.Store // the namespace's layout, read by Start
	cfg      ServerConfig
	queues   []string // by decreasing weight; fixed by NewServer
	weights  []int
	consumer string
	log      *slog.Logger
	taskLog  *slog.Logger
	now      func() time.Time

	startMu  sync.Mutex // serializes Start with the state checks of Shutdown
	mu       sync.Mutex
	mux      *Mux
	started  bool
	stopping bool
	stopped  chan struct{} // closed when the first Shutdown returns
	stopErr  error         // what it returned
	inflight map[entryKey]*delivery

	slots      chan struct{}  // one token per running handler
	stop       chan struct{}  // closed by Shutdown: stop taking tasks
	loops      sync.WaitGroup // fetcher, forwarder and local loop
	workers    sync.WaitGroup // one per delivery or local task handed to a worker
	jobs       chan job       // to the workers (workers.go)
	stopLease  chan struct{}
	leaseDone  chan struct{}
	bgCtx      context.Context // Start's values, never cancelled: Redis calls that must complete
	handlerCtx context.Context // parent of handler contexts; cancelled when Shutdown gives up
	cancelAll  context.CancelCauseFunc
	blocker    *rdb.Blockers      // the fetcher's blocking connections
	finisher   *rdb.FinishBatcher // group-commits task outcomes (work.go)
	runs       runSampler         // which successes get a run record (runsample.go)

	local      *localTasks // tasks run in process (server_local.go)
	localRuns  *outbox     // their run records, written when Redis answers
	stopOutbox context.CancelFunc
	outboxDone chan struct{}
}

// NewServer returns a Server that takes tasks through client.
// A cluster client (*redis.ClusterClient) is made to reload its slot map
// when a command fails to connect or meets CLUSTERDOWN, so that the death
// of a master costs the time to promote its replica rather than up to the
// client's ClusterStateReloadInterval (docs/cluster.md).
func NewServer(client redis.UniversalClient, cfg ServerConfig) *Server {
	rdb.ReloadOnFailure(client)
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4 * runtime.NumCPU()
	}
	if len(cfg.Queues) == 0 {
		cfg.Queues = map[string]int{DefaultQueue: 1}
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	if cfg.VisibilityTimeout <= 0 {
		cfg.VisibilityTimeout = 30 * time.Second
	}
	cfg.VisibilityTimeout = max(cfg.VisibilityTimeout, minVisibilityTimeout)
	if cfg.MaxDeliveries <= 0 {
		cfg.MaxDeliveries = 5
	}
	if cfg.Backoff == nil {
		cfg.Backoff = defaultBackoff
	}
	if cfg.RunRetention == 0 {
		cfg.RunRetention = 1000
	}
	if cfg.SuccessRunInterval == 0 {
		cfg.SuccessRunInterval = 10 * time.Millisecond
	}
	if cfg.DeadRetention <= 0 {
		cfg.DeadRetention = 10000
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.TaskLogger == nil {
		cfg.TaskLogger = cfg.Logger
	}
	if cfg.SuccessLogLevel == nil {
		cfg.SuccessLogLevel = slog.LevelDebug
	}
	s := &Server{
		ns:       rdb.NewNamespace(client, cfg.Namespace, keyspace.ResolveOptions{Partitions: cfg.Partitions}),
		cfg:      cfg,
		consumer: consumerName(),
		log:      cfg.Logger,
		taskLog:  cfg.TaskLogger,
		now:      time.Now,
		inflight: make(map[entryKey]*delivery),
		runs:     runSampler{every: cfg.SuccessRunInterval},
		local:    newLocalTasks(),
	}
	s.localRuns = newOutbox("run records of isolated tasks", localOutboxLimit, cfg.Logger)
	for q := range cfg.Queues {
		s.queues = append(s.queues, q)
	}
	sort.Slice(s.queues, func(i, j int) bool {
		wi, wj := cfg.Queues[s.queues[i]], cfg.Queues[s.queues[j]]
		if wi != wj {
			return wi > wj
		}
		return s.queues[i] < s.queues[j]
	})
	for _, q := range s.queues {
		s.weights = append(s.weights, max(cfg.Queues[q], 1))
	}
	return s
}

// consumerName names this server in the consumer groups: host, process and
// a random suffix, so that two servers in one process never share leases.
func consumerName() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Start reads the namespace's layout (creating it for a new namespace),
// creates the consumer groups of the configured queues in every partition
// and starts taking tasks; it returns once the server is running. ctx bounds the
// start only, as a context passed to a constructor-like call does in the
// standard library: cancelling it later does not stop the server (stop it
// with Shutdown). Handlers get contexts carrying ctx's values.
func (s *Server) Start(ctx context.Context, mux *Mux) error {
	if mux == nil {
		return errors.New("chronos: Start: nil Mux")
	}
	s.startMu.Lock()
	defer s.startMu.Unlock()
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if started {
		return ErrServerStarted
	}
	if _, ok := s.cfg.Queues[LocalQueue]; ok {
		return fmt.Errorf("chronos: start server: queue name %q is reserved for isolated tasks, which run in process", LocalQueue)
	}
	// The queues' streams and delayed sets of the single-tag layout mark a
	// namespace of earlier versions that only clients and servers used.
	k := rdb.NewKeys(s.ns.Name())
	var markers []string
	for _, q := range s.queues {
		markers = append(markers, k.Stream(q), k.Delayed(q))
	}
	st, err := s.ns.Store(ctx, markers...)
	if err != nil {
		return fmt.Errorf("chronos: start server: %w", err)
	}
	s.queue = st
	st.Warn = func(msg string, err error) { s.log.Warn("chronos: "+msg, "error", err) }
	if err := s.ensureGroups(ctx); err != nil {
		return fmt.Errorf("chronos: start server: %w", err)
	}
	s.mu.Lock()
	s.started = true
	s.mux = mux
	s.mu.Unlock()
	s.stopped = make(chan struct{})
	s.blocker = rdb.NewBlockers(s.queue)
	s.finisher = rdb.NewFinishBatcher(s.queue)
	s.slots = make(chan struct{}, s.cfg.Concurrency)
	s.stop = make(chan struct{})
	s.stopLease = make(chan struct{})
	s.leaseDone = make(chan struct{})
	s.bgCtx = context.WithoutCancel(ctx)
	s.handlerCtx, s.cancelAll = context.WithCancelCause(s.bgCtx)

	s.startWorkers()
	s.loops.Add(3)
	go s.fetchLoop()
	go s.forwardLoop()
	go s.localLoop()
	go s.leaseLoop()
	var octx context.Context
	octx, s.stopOutbox = context.WithCancel(s.bgCtx)
	s.outboxDone = make(chan struct{})
	go func() { defer close(s.outboxDone); s.localRuns.run(octx) }()
	s.log.Info("chronos: server started", "consumer", s.consumer, "queues", s.queues, "concurrency", s.cfg.Concurrency,
		"layout", s.queue.Layout.String())
	return nil
}

// Shutdown stops taking tasks and waits for running handlers to return, up
// to ctx's deadline or ShutdownTimeout, whichever comes first. Tasks taken
// but not yet started are handed back at once for any other server to run.
// If the wait ends first, the handlers' contexts are cancelled with cause
// ErrServerShutdown and Shutdown returns the context's error. A handler that
// then returns has its task handed back at once, without spending an
// attempt; a handler that ignores the cancellation keeps its task leased
// until another server recovers it after VisibilityTimeout. Later calls wait for the first to finish (or for their
// own ctx) and return its result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.startMu.Lock()
	s.mu.Lock()
	started, stopping := s.started, s.stopping
	s.stopping = started
	s.mu.Unlock()
	s.startMu.Unlock()
	if !started {
		return ErrServerNotStarted
	}
	if stopping {
		select {
		case <-s.stopped:
			return s.stopErr
		case <-ctx.Done():
			return fmt.Errorf("chronos: shutdown: %w", ctx.Err())
		}
	}
	defer close(s.stopped)

	ctx, cancel := context.WithTimeout(ctx, s.cfg.ShutdownTimeout)
	defer cancel()
	close(s.stop)
	s.waitLoops(ctx)
	s.stopWorkers() // nothing is handed over any more

	done := make(chan struct{})
	go func() { s.workers.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		s.cancelAll(ErrServerShutdown)
		s.mu.Lock()
		n := len(s.inflight)
		s.mu.Unlock()
		err = fmt.Errorf("chronos: shutdown: %d tasks still running: %w", n, ctx.Err())
	}
	close(s.stopLease)
	<-s.leaseDone
	// Handlers still running after a timed-out wait record their outcome
	// directly once the batcher is closed.
	s.finisher.Close()
	s.stopOutbox()
	<-s.outboxDone
	s.stopLocal(ctx)
	if err == nil {
		s.cancelAll(ErrServerShutdown)
		s.leaveGroups(ctx)
	}
	s.log.Info("chronos: server stopped", "consumer", s.consumer, "error", err)
	s.stopErr = err
	return err
}

// leaveGroups deletes this server's consumer from the groups it holds no
// pending entries in, so consumer lists do not grow with every deploy.
// A consumer with pending entries is never deleted: that would drop them.
func (s *Server) leaveGroups(ctx context.Context) {
	if err := s.queue.LeaveGroups(ctx, s.queues, s.consumer); err != nil {
		s.log.Warn("chronos: leave consumer groups", "error", err)
	}
}

// waitLoops waits for the fetcher and the forwarder to return, ending the
// fetcher's blocking reads early. The unblock is repeated because the
// fetcher may enter its read just after one was sent.
func (s *Server) waitLoops(ctx context.Context) {
	done := make(chan struct{})
	go func() { s.loops.Wait(); close(done) }()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		s.blocker.Unblock(ctx)
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}
