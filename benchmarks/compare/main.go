// Command compare benchmarks the chronos task queue side by side with
// github.com/hibiken/asynq v0.26, in one run against one Redis, and prints
// each system's figures with the ratio chronos/asynq:
//
//   - enqueue rate with each of -enqueue-clients producers (goroutines
//     sharing one client; chronos also with one Client per producer);
//   - processing rate of a pre-filled queue with -concurrency no-op handlers;
//   - end-to-end rate: -tasks enqueued while the server runs, until the last
//     one has been handled;
//   - enqueue-to-start latency p50/p99 at a light load (-rate tasks/s for
//     -duration), with asynq as configured by default and with a short
//     TaskCheckInterval;
//   - allocations, Redis round trips and redis-server CPU per task, and
//     the top five CPU consumers per task of each system (Go profile and
//     Redis command statistics).
//
// It starts its own redis-server on a free loopback port unless -redis (or
// REDIS_URL) names one, which it then flushes before every measurement.
// See benchmarks/README.md for how to read the output.
//
// Usage:
//
//	go run ./compare [flags]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	cfg, prof, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if prof.cpu != "" {
		f, err := os.Create(prof.cpu)
		if err != nil {
			fmt.Fprintln(os.Stderr, "compare:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "compare:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		stop()
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	if prof.mem != "" {
		if err := writeHeapProfile(prof.mem); err != nil {
			fmt.Fprintln(os.Stderr, "compare:", err)
			os.Exit(1)
		}
	}
}

// allSystems are the names -systems accepts.
var allSystems = []string{"chronos", "chronos-per-producer", "asynq", "asynq-tuned"}

// profileFiles names the profile files the flags ask for.
type profileFiles struct{ cpu, mem string }

// writeHeapProfile writes the allocation profile of the whole run; read it
// with go tool pprof -sample_index=alloc_objects.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// parseFlags returns the configuration that args describe, and the
// profiles to write.
func parseFlags(args []string) (*config, profileFiles, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	cfg := &config{}
	fs.IntVar(&cfg.tasks, "tasks", 50000, "tasks of the concurrent enqueue, process and end-to-end phases")
	fs.IntVar(&cfg.serial, "serial", 20000, "tasks of the one-producer enqueue")
	fs.IntVar(&cfg.clients, "clients", 50, "producers (enqueuing goroutines sharing one client) of the process and end-to-end phases")
	enqClients := fs.String("enqueue-clients", "1,8,50", "comma-separated producer counts of the enqueue phase")
	profile := fs.String("profile", phaseE2E+","+phaseEnqueue, "comma-separated phases whose measured part is CPU-profiled per system (the enqueue phase: with the most producers); \"\" for none")
	fs.IntVar(&cfg.concurrency, "concurrency", 50, "handlers per server")
	fs.IntVar(&cfg.payload, "payload", 128, "approximate size of each task's JSON payload, in bytes")
	fs.IntVar(&cfg.rounds, "rounds", 3, "how many times each phase runs per system; the report shows medians")
	phase := fs.String("phase", "all", "comma-separated phases to run: "+strings.Join(allPhases, ", ")+", or all")
	systems := fs.String("systems", strings.Join(allSystems, ","), "comma-separated systems to run: "+strings.Join(allSystems, ", "))
	fs.StringVar(&cfg.redisURL, "redis", os.Getenv("REDIS_URL"), "URL of a dedicated loopback Redis to use (it is flushed!); default: start a private redis-server")
	fs.IntVar(&cfg.rate, "rate", 100, "latency phase: tasks per second")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "latency phase: how long to enqueue")
	fs.DurationVar(&cfg.settle, "settle", time.Second, "latency phase: how long the server idles before the first task")
	fs.DurationVar(&cfg.asynqCheck, "asynq-check", 10*time.Millisecond, "asynq TaskCheckInterval of the asynq-tuned system (asynq's default is 1s and it documents no minimum)")
	fs.IntVar(&cfg.pool, "pool", 0, "go-redis PoolSize of every client; 0 keeps go-redis's default (10 per GOMAXPROCS)")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "bound on each measured run")
	fs.IntVar(&cfg.warmup, "warmup", 2000, "tasks of the unrecorded end-to-end warm-up of each system")
	var prof profileFiles
	fs.StringVar(&prof.cpu, "cpuprofile", "", "write a CPU profile of the whole run to this file (narrow it with -systems and -phase)")
	fs.StringVar(&prof.mem, "memprofile", "", "write an allocation profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		return nil, prof, err
	}
	if fs.NArg() > 0 {
		return nil, prof, fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	cfg.phases = splitList(*phase)
	if slices.Equal(cfg.phases, []string{"all"}) {
		cfg.phases = allPhases
	}
	for _, p := range cfg.phases {
		if !slices.Contains(allPhases, p) {
			return nil, prof, fmt.Errorf("-phase: unknown phase %q (want %s or all)", p, strings.Join(allPhases, ", "))
		}
	}
	cfg.systems = splitList(*systems)
	for _, s := range cfg.systems {
		if !slices.Contains(allSystems, s) {
			return nil, prof, fmt.Errorf("-systems: unknown system %q", s)
		}
	}
	for _, f := range splitList(*enqClients) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, prof, fmt.Errorf("-enqueue-clients: %q is not a positive number", f)
		}
		if !slices.Contains(cfg.enqueueClients, n) {
			cfg.enqueueClients = append(cfg.enqueueClients, n)
		}
	}
	if len(cfg.enqueueClients) == 0 {
		return nil, prof, fmt.Errorf("-enqueue-clients: want at least one producer count")
	}
	cfg.profile = splitList(*profile)
	for _, p := range cfg.profile {
		if !slices.Contains([]string{phaseEnqueue, phaseE2E}, p) {
			return nil, prof, fmt.Errorf("-profile: phase %q cannot be profiled (want %s or %s)", p, phaseEnqueue, phaseE2E)
		}
	}
	if prof.cpu != "" {
		cfg.profile = nil // one CPU profile at a time: the whole run's
	}
	switch {
	case cfg.tasks < 1, cfg.serial < 1, cfg.clients < 1, cfg.concurrency < 1, cfg.rounds < 1, cfg.rate < 1:
		return nil, prof, fmt.Errorf("-tasks, -serial, -clients, -concurrency, -rounds and -rate must be at least 1")
	case cfg.duration <= 0, cfg.timeout <= 0, cfg.asynqCheck <= 0:
		return nil, prof, fmt.Errorf("-duration, -timeout and -asynq-check must be positive")
	}
	return cfg, prof, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
