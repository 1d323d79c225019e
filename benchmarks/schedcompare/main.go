// Command schedcompare runs chronos's Scheduler and asynq v0.26's Scheduler
// side by side against one private redis-server and prints, for each, the
// heap per registered schedule, the process CPU per fire, the fire lag
// (when the task reached Redis − intended trigger time) p50/p99 per trigger
// and, per burst of triggers due at the same second, the lag of the
// burst's last trigger, the Redis round trips per fire and the start-up
// time, at about 1,000 triggers a second; with -rounds N, the medians of N
// rounds.
//
// Usage:
//
//	go run ./schedcompare [-schedules 10000] [-rate 1000] [-window 30s] [-rounds 1] [-full]
//
// -full adds a run at 100,000 schedules. See benchmarks/README.md for what
// is comparable and what is not.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/benchmarks/internal/redisproc"
	chronos "github.com/chronos-go/chronos/runtime"
)

// config is one run of the program.
type config struct {
	schedules int           // schedules registered in each system
	rate      int           // intended triggers per second
	window    time.Duration // measurement window per system
	full      bool          // also run 100,000 schedules
	only      string        // "chronos", "asynq" or "" for both
	cmds      bool          // count commands by name (skews CPU figures)
	cpuprof   string        // file prefix for a CPU profile of each system's window
	rounds    int           // measurements per system and size; the report shows medians
	fireAhead time.Duration // chronos's SchedulerConfig.FireAhead (negative: off)
}

func main() {
	var cfg config
	flag.IntVar(&cfg.schedules, "schedules", 10_000, "schedules registered in each system")
	flag.IntVar(&cfg.rate, "rate", 1000, "intended triggers per second (sets the period: schedules/rate seconds)")
	flag.DurationVar(&cfg.window, "window", 30*time.Second, "measurement window per system")
	flag.BoolVar(&cfg.full, "full", false, "also run with 100000 schedules")
	flag.StringVar(&cfg.only, "only", "", `run one system only: "chronos" or "asynq"`)
	flag.BoolVar(&cfg.cmds, "cmds", false, "also list the commands each client sent in the window (adds a lock per command: CPU figures then not comparable)")
	flag.StringVar(&cfg.cpuprof, "cpuprofile", "", "write a CPU profile of each system's measurement window to PREFIX[-r<round>]-<system>-<schedules>.pprof")
	flag.IntVar(&cfg.rounds, "rounds", 1, "measure each system this many times per size, alternating which goes first; the report shows medians")
	flag.DurationVar(&cfg.fireAhead, "fire-ahead", chronos.DefaultFireAhead, "chronos's SchedulerConfig.FireAhead (negative: fire at the fire time)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "schedcompare:", err)
		os.Exit(1)
	}
}

// run starts a private redis-server and measures both systems at
// cfg.schedules, and at 100,000 too when cfg.full is set. It prints a table
// per size to out and returns every result.
func run(ctx context.Context, cfg config, out io.Writer) ([]*result, error) {
	if cfg.schedules <= 0 || cfg.rate <= 0 || cfg.window <= 0 {
		return nil, fmt.Errorf("-schedules, -rate and -window must be positive")
	}
	if cfg.rounds == 0 {
		cfg.rounds = 1
	}
	if cfg.rounds < 0 {
		return nil, fmt.Errorf("-rounds must be positive")
	}
	if cfg.fireAhead >= 900*time.Millisecond {
		// The counters' window sits between a burst's firing ahead and the
		// previous burst's forwarding (guard); past this there is no room.
		return nil, fmt.Errorf("-fire-ahead %v: this program measures bursts a second apart, so it must be under 900ms", cfg.fireAhead)
	}
	srv, err := redisproc.Start(ctx)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()

	fmt.Fprintf(out, "schedcompare: GOMAXPROCS=%d, %s/%s, %s, redis-server %s (private, no persistence), loadavg %s\n",
		runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, runtime.Version(), redisVersion(ctx, admin), loadavg())
	var all []*result
	sizes := []int{cfg.schedules}
	if cfg.full && cfg.schedules != 100_000 {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		c := cfg
		c.schedules = n
		p := newPlan(n, c.rate)
		fmt.Fprintf(out, "\n%d schedules, each every %v, %d due at every whole second (%d/s intended); window %v per system, %d round(s)\n",
			n, p.period, n/p.phases(), n/p.phases(), c.window, c.rounds)
		systems := []system{{"chronos", runChronos}, {"asynq", runAsynq}}
		systems = slices.DeleteFunc(systems, func(s system) bool { return cfg.only != "" && cfg.only != s.name })
		cols := make([]column, len(systems))
		for k, s := range systems {
			cols[k].name = s.name
		}
		for round := range c.rounds {
			order := slices.Clone(systems)
			if round%2 == 1 { // alternate, so that a slow spell does not always hit the same system
				slices.Reverse(order)
			}
			for _, sys := range order {
				if err := admin.FlushAll(ctx).Err(); err != nil {
					return nil, fmt.Errorf("flush redis: %w", err)
				}
				rc := c
				if c.rounds > 1 && c.cpuprof != "" {
					rc.cpuprof = fmt.Sprintf("%s-r%d", c.cpuprof, round+1)
				}
				r, err := sys.run(ctx, rc, srv.Addr, admin)
				if err != nil {
					return nil, err
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				fmt.Fprintf(out, "round %d/%d %s\n", round+1, c.rounds, progress(r))
				for k := range cols {
					if cols[k].name == sys.name {
						cols[k].rounds = append(cols[k].rounds, r)
					}
				}
				all = append(all, r)
			}
		}
		report(out, cols)
		fmt.Fprintf(out, "loadavg after: %s\n", loadavg())
	}
	return all, nil
}

// system is one scheduler under test.
type system struct {
	name string
	run  func(context.Context, config, string, *redis.Client) (*result, error)
}

// profilePath names the CPU profile of system's window, or "" for none.
func (c config) profilePath(system string) string {
	if c.cpuprof == "" {
		return ""
	}
	return fmt.Sprintf("%s-%s-%d.pprof", c.cpuprof, system, c.schedules)
}
