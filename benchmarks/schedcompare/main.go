// Command schedcompare runs chronos's Scheduler and asynq v0.26's Scheduler
// side by side against one private redis-server and prints, for each, the
// heap per registered schedule, the process CPU per fire, the fire lag
// (enqueue time − intended trigger time) p50/p99 and the Redis round trips
// per fire, at about 1,000 triggers a second.
//
// Usage:
//
//	go run ./schedcompare [-schedules 10000] [-rate 1000] [-window 30s] [-full]
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
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/benchmarks/internal/redisproc"
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
}

func main() {
	var cfg config
	flag.IntVar(&cfg.schedules, "schedules", 10_000, "schedules registered in each system")
	flag.IntVar(&cfg.rate, "rate", 1000, "intended triggers per second (sets the period: schedules/rate seconds)")
	flag.DurationVar(&cfg.window, "window", 30*time.Second, "measurement window per system")
	flag.BoolVar(&cfg.full, "full", false, "also run with 100000 schedules")
	flag.StringVar(&cfg.only, "only", "", `run one system only: "chronos" or "asynq"`)
	flag.BoolVar(&cfg.cmds, "cmds", false, "also list the commands each client sent in the window (adds a lock per command: CPU figures then not comparable)")
	flag.StringVar(&cfg.cpuprof, "cpuprofile", "", "write a CPU profile of each system's measurement window to PREFIX-<system>-<schedules>.pprof")
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
		fmt.Fprintf(out, "\n%d schedules, each every %v, %d due at every whole second (%d/s intended); window %v per system\n",
			n, p.period, n/p.phases(), n/p.phases(), c.window)
		var rs []*result
		for _, sys := range []struct {
			name string
			run  func(context.Context, config, string, *redis.Client) (*result, error)
		}{{"chronos", runChronos}, {"asynq", runAsynq}} {
			if cfg.only != "" && cfg.only != sys.name {
				continue
			}
			if err := admin.FlushAll(ctx).Err(); err != nil {
				return nil, fmt.Errorf("flush redis: %w", err)
			}
			r, err := sys.run(ctx, c, srv.Addr, admin)
			if err != nil {
				return nil, err
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			rs = append(rs, r)
		}
		report(out, rs)
		all = append(all, rs...)
		fmt.Fprintf(out, "loadavg after: %s\n", loadavg())
	}
	return all, nil
}

// profilePath names the CPU profile of system's window, or "" for none.
func (c config) profilePath(system string) string {
	if c.cpuprof == "" {
		return ""
	}
	return fmt.Sprintf("%s-%s-%d.pprof", c.cpuprof, system, c.schedules)
}
