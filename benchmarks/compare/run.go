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
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/benchmarks/internal/redisproc"
)

// config holds the flags of one run. Sizes apply to both systems alike.
type config struct {
	tasks       int           // tasks of the concurrent enqueue, process and end-to-end phases
	serial      int           // tasks of the serial enqueue
	clients     int           // concurrent enqueuing goroutines
	concurrency int           // handlers per server
	payload     int           // approximate size of the encoded args, in bytes
	rounds      int           // how many times each phase runs per system
	phases      []string      // which phases run
	systems     []string      // which variants run
	redisURL    string        // external Redis; "" starts a private redis-server
	rate        int           // latency phase: tasks per second
	duration    time.Duration // latency phase: how long to enqueue
	settle      time.Duration // latency phase: idle time before the first task
	asynqCheck  time.Duration // asynq's TaskCheckInterval in the tuned variant
	pool        int           // go-redis PoolSize; 0 keeps go-redis's default
	timeout     time.Duration // bound on each measured run
	warmup      int           // tasks of the unrecorded warm-up per system
}

// variant is one configured system: a column of the report.
type variant struct {
	key    string // as -systems names it
	label  string
	short  string // in the ratio column's heading
	phases []string
	make   func(redis.UniversalClient) system
}

func (v variant) runs(phase string) bool { return slices.Contains(v.phases, phase) }

// variants returns the columns of the report: chronos and asynq as
// configured by default in every phase, and asynq with a short
// TaskCheckInterval in the phases where the interval matters (asynq's
// processor sleeps for it whenever it finds the queues empty, which never
// happens while draining a pre-filled queue or enqueueing).
func variants(cfg *config) []variant {
	all := []variant{
		{key: "chronos", label: "chronos", short: "chronos", phases: allPhases,
			make: func(c redis.UniversalClient) system { return newChronos(c) }},
		{key: "asynq", label: "asynq (default)", short: "asynq", phases: allPhases,
			make: func(c redis.UniversalClient) system { return newAsynq(c, 0) }},
		{key: "asynq-tuned", label: fmt.Sprintf("asynq TaskCheckInterval=%v", cfg.asynqCheck),
			short: "asynq-" + cfg.asynqCheck.String(), phases: []string{phaseE2E, phaseLatency},
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
		if _, err := measure(ctx, &warm, admin, opt, redisPID, v, phaseE2E); err != nil {
			return fmt.Errorf("warm-up of %s: %w", v.label, err)
		}
	}

	var res results
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
				got, err := measure(ctx, cfg, admin, opt, redisPID, v, ph)
				if err != nil {
					return fmt.Errorf("round %d, phase %s, %s: %w", r+1, ph, v.label, err)
				}
				res.add(v.label, got)
				fmt.Fprintf(out, "round %d/%d  %-8s %-28s %s\n", r+1, cfg.rounds, ph, v.label, brief(ph, got))
			}
		}
	}
	fmt.Fprintln(out)
	res.print(out, cfg, vs)
	fmt.Fprintf(out, "\nload average at end: %s\n", loadAverage())
	return nil
}

// measure runs one phase for one variant on a flushed Redis, with a fresh
// client whose round trips are counted.
func measure(ctx context.Context, cfg *config, admin *redis.Client, opt *redis.Options, redisPID int, v variant, phase string) (values, error) {
	o := *opt
	if cfg.pool > 0 {
		o.PoolSize = cfg.pool
	}
	c := redis.NewClient(&o)
	defer c.Close()
	rt := new(roundTrips)
	c.AddHook(rt)
	b := &bench{cfg: cfg, admin: admin, sys: v.make(c), rt: rt, pad: padFor(cfg.payload), redisPID: redisPID}

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
	fmt.Fprintf(w, "sizes: -tasks %d -serial %d -clients %d -concurrency %d -payload %d B -rounds %d; latency: %d tasks/s for %v after %v idle\n",
		cfg.tasks, cfg.serial, cfg.clients, cfg.concurrency, cfg.payload, cfg.rounds, cfg.rate, cfg.duration, cfg.settle)
	fmt.Fprintln(w)
	return nil
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
func brief(phase string, v values) string {
	switch phase {
	case phaseEnqueue:
		return fmt.Sprintf("1 client %s/s, concurrent %s/s, %s allocs/task", format(v[mEnqSerial]), format(v[mEnqConc]), format(v[mEnqAllocs]))
	case phaseProcess:
		return fmt.Sprintf("%s/s, %s allocs/task, %s round trips/task", format(v[mProc]), format(v[mProcAllocs]), format(v[mProcTrips]))
	case phaseE2E:
		return fmt.Sprintf("%s/s (enqueueing alone %s/s), %s round trips/task", format(v[mE2E]), format(v[mE2EEnqueue]), format(v[mE2ETrips]))
	case phaseLatency:
		return fmt.Sprintf("p50 %s ms, p99 %s ms, max %s ms", format(v[mLatP50]), format(v[mLatP99]), format(v[mLatMax]))
	}
	return ""
}
