package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/benchmarks/internal/redisproc"
)

// config holds the flags of one run. Sizes apply to both systems alike.
type config struct {
	tasks          int           // tasks of the concurrent enqueue, process and end-to-end phases
	serial         int           // tasks of the one-producer enqueue
	clients        int           // producers (enqueuing goroutines) of the process and end-to-end phases
	enqueueClients []int         // producer counts of the enqueue phase
	concurrency    int           // handlers per server
	payload        int           // approximate size of the encoded args, in bytes
	rounds         int           // how many times each phase runs per system
	phases         []string      // which phases run
	systems        []string      // which variants run
	redisURL       string        // external Redis; "" starts a private redis-server
	rate           int           // latency phase: tasks per second
	duration       time.Duration // latency phase: how long to enqueue
	settle         time.Duration // latency phase: idle time before the first task
	asynqCheck     time.Duration // asynq's TaskCheckInterval in the tuned variant
	pool           int           // go-redis PoolSize; 0 keeps go-redis's default
	timeout        time.Duration // bound on each measured run
	warmup         int           // tasks of the unrecorded warm-up per system
	profile        []string      // phases whose measured part is CPU-profiled, per system
}

// variant is one configured system: a column of the report.
type variant struct {
	key    string // as -systems names it
	label  string
	short  string // in the ratio column's heading
	phases []string
	ratio  bool // the report shows chronos's figure over this one's
	make   func(redis.UniversalClient) system
}

// perProducerLabel labels chronos with one Client per producer goroutine:
// each Client then has one caller at a time, so no two enqueues share a
// round trip, which is what the enqueue rate of separate processes, or of
// a client library without group commit, looks like.
const perProducerLabel = "chronos, a Client per producer"

func (v variant) runs(phase string) bool { return slices.Contains(v.phases, phase) }

// variants returns the columns of the report: chronos and asynq as
// configured by default in every phase, and asynq with a short
// TaskCheckInterval in the phases where the interval matters (asynq's
// processor sleeps for it whenever it finds the queues empty, which never
// happens while draining a pre-filled queue or enqueueing).
func variants(cfg *config) []variant {
	all := []variant{
		{key: "chronos", label: "chronos", short: "chronos", phases: allPhases,
			make: func(c redis.UniversalClient) system { return newChronos(c, false) }},
		{key: "chronos-per-producer", label: perProducerLabel, short: "chronos-1", phases: []string{phaseEnqueue},
			make: func(c redis.UniversalClient) system { return newChronos(c, true) }},
		{key: "asynq", label: "asynq (default)", short: "asynq", phases: allPhases, ratio: true,
			make: func(c redis.UniversalClient) system { return newAsynq(c, 0) }},
		{key: "asynq-tuned", label: fmt.Sprintf("asynq TaskCheckInterval=%v", cfg.asynqCheck),
			short: "asynq-" + cfg.asynqCheck.String(), phases: []string{phaseE2E, phaseLatency}, ratio: true,
			make: func(c redis.UniversalClient) system { return newAsynq(c, cfg.asynqCheck) }},
	}
	var out []variant
	for _, v := range all {
		if slices.Contains(cfg.systems, v.key) {
			out = append(out, v)
		}
	}
	return out
}

// run runs every selected phase for every variant, cfg.rounds times, and
// writes the progress and then the summary to out. Within a round the
// variants take turns phase by phase, in reverse order every other round,
// so that a slow spell of this shared machine does not always hit the same
// system.
func run(ctx context.Context, cfg *config, out io.Writer) error {
	vs := variants(cfg)
	if len(vs) == 0 {
		return errors.New("no systems selected")
	}
	opt, redisPID, closeRedis, err := redisOptions(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeRedis()
	admin := redis.NewClient(opt)
	defer admin.Close()
	if err := printHeader(ctx, out, cfg, opt, admin); err != nil {
		return err
	}

	warm := *cfg
	warm.tasks = min(cfg.warmup, cfg.tasks)
	for _, v := range vs {
		if !v.runs(phaseE2E) {
			continue
		}
		if _, err := measure(ctx, &warm, admin, opt, redisPID, v, phaseE2E, nil); err != nil {
			return fmt.Errorf("warm-up of %s: %w", v.label, err)
		}
	}

	var res results
	profs := newProfiles()
	for r := range cfg.rounds {
		order := slices.Clone(vs)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, ph := range allPhases {
			if !slices.Contains(cfg.phases, ph) {
				continue
			}
			for _, v := range order {
				if !v.runs(ph) {
					continue
				}
				var p *profiler
				if slices.Contains(cfg.profile, ph) {
					p = profs.get(v.label, ph)
				}
				got, err := measure(ctx, cfg, admin, opt, redisPID, v, ph, p)
				if err != nil {
					return fmt.Errorf("round %d, phase %s, %s: %w", r+1, ph, v.label, err)
				}
				res.add(v.label, got)
				fmt.Fprintf(out, "round %d/%d  %-8s %-28s %s\n", r+1, cfg.rounds, ph, v.label, brief(cfg, ph, got))
			}
		}
	}
	fmt.Fprintln(out)
	res.print(out, cfg, vs)
	profs.print(out)
	fmt.Fprintf(out, "\nload average at end: %s\n", loadAverage())
	return nil
}

// measure runs one phase for one variant on a flushed Redis, with a fresh
// client whose round trips are counted. A non-nil p profiles the measured
// part (the end-to-end run, or the enqueue with the most producers).
func measure(ctx context.Context, cfg *config, admin *redis.Client, opt *redis.Options, redisPID int, v variant, phase string, p *profiler) (values, error) {
	o := *opt
	if cfg.pool > 0 {
		o.PoolSize = cfg.pool
	}
	c := redis.NewClient(&o)
	defer c.Close()
	rt := new(roundTrips)
	c.AddHook(rt)
	sys := v.make(c)
	if cl, ok := sys.(interface{ Close() }); ok {
		defer cl.Close()
	}
	b := &bench{cfg: cfg, admin: admin, sys: sys, rt: rt, pad: padFor(cfg.payload), redisPID: redisPID, prof: p}

	ctx, cancel := context.WithTimeoutCause(ctx, cfg.timeout, fmt.Errorf("-timeout %v passed", cfg.timeout))
	defer cancel()
	if err := b.flush(ctx); err != nil {
		return nil, err
	}
	if err := b.warmUp(ctx); err != nil {
		return nil, err
	}
	switch phase {
	case phaseEnqueue:
		return b.enqueue(ctx)
	case phaseProcess:
		return b.process(ctx)
	case phaseE2E:
		return b.e2e(ctx)
	case phaseLatency:
		return b.latency(ctx)
	}
	return nil, fmt.Errorf("unknown phase %q", phase)
}

// redisOptions returns the options of the Redis to use: cfg.redisURL, or a
// private redis-server started here, whose PID it returns too (0 for
// cfg.redisURL) and which the returned function stops.
func redisOptions(ctx context.Context, cfg *config) (*redis.Options, int, func(), error) {
	if cfg.redisURL != "" {
		opt, err := redis.ParseURL(cfg.redisURL)
		if err != nil {
			return nil, 0, nil, fmt.Errorf("-redis: %w", err)
		}
		if opt.Network != "unix" && !isLoopback(opt.Addr) {
			return nil, 0, nil, fmt.Errorf("-redis %s: not a loopback address; run the benchmark on the Redis host so the network is not what gets measured", opt.Addr)
		}
		return opt, 0, func() {}, nil
	}
	srv, err := redisproc.Start(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	return &redis.Options{Addr: srv.Addr}, srv.PID(), func() { _ = srv.Close() }, nil
}

func printHeader(ctx context.Context, w io.Writer, cfg *config, opt *redis.Options, admin *redis.Client) error {
	ver, err := redisVersion(ctx, admin)
	if err != nil {
		return err
	}
	where := "private redis-server, no persistence"
	if cfg.redisURL != "" {
		where = "from -redis/REDIS_URL, flushed before each measurement"
	}
	fmt.Fprintf(w, "chronos %s vs asynq %s, one process, one Redis, both through go-redis %s\n",
		moduleVersion("github.com/chronos-go/chronos"), moduleVersion("github.com/hibiken/asynq"), moduleVersion("github.com/redis/go-redis/v9"))
	fmt.Fprintf(w, "go version: %s %s/%s   GOMAXPROCS: %d   NumCPU: %d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Fprintf(w, "redis: %s at %s (%s)   go-redis pool: %s\n", ver, opt.Addr, where, poolLabel(cfg.pool))
	fmt.Fprintf(w, "load average at start: %s\n", loadAverage())
	fmt.Fprintf(w, "sizes: -tasks %d -serial %d -clients %d -enqueue-clients %s -concurrency %d -payload %d B -rounds %d; latency: %d tasks/s for %v after %v idle\n",
		cfg.tasks, cfg.serial, cfg.clients, joinInts(cfg.enqueueClients), cfg.concurrency, cfg.payload, cfg.rounds, cfg.rate, cfg.duration, cfg.settle)
	fmt.Fprintln(w)
	return nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func poolLabel(n int) string {
	if n > 0 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("go-redis default (%d)", 10*runtime.GOMAXPROCS(0))
}

// moduleVersion returns the version of module path linked into this
// program, as the build recorded it.
func moduleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return "(" + d.Replace.Path + ")"
			}
			return d.Version
		}
	}
	return "(unknown)"
}

// loadAverage returns the 1, 5 and 15 minute load averages, where the
// system tells them.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "(unknown)"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "(unknown)"
	}
	return strings.Join(f[:3], " ")
}

// brief is the progress line of one measurement.
func brief(cfg *config, phase string, v values) string {
	switch phase {
	case phaseEnqueue:
		var parts []string
		for _, n := range cfg.enqueueClients {
			if x, ok := v[enqKey(n)]; ok {
				parts = append(parts, fmt.Sprintf("%s %s/s", producers(n), format(x)))
			}
		}
		return fmt.Sprintf("%s; %s allocs/task (1 producer), %s (most)", strings.Join(parts, ", "), format(v[mEnqAllocs1]), format(v[mEnqAllocsN]))
	case phaseProcess:
		return fmt.Sprintf("%s/s, %s allocs/task, %s round trips/task", format(v[mProc]), format(v[mProcAllocs]), format(v[mProcTrips]))
	case phaseE2E:
		return fmt.Sprintf("%s/s (enqueueing alone %s/s), %s round trips/task, %s µs CPU/task, %s allocs/task", format(v[mE2E]), format(v[mE2EEnqueue]), format(v[mE2ETrips]), format(v[mE2ETotalCPU]), format(v[mE2EAllocs]))
	case phaseLatency:
		return fmt.Sprintf("p50 %s ms, p99 %s ms, max %s ms", format(v[mLatP50]), format(v[mLatP99]), format(v[mLatMax]))
	}
	return ""
}
