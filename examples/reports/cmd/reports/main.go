// Command reports runs the reports example: one replica of a service whose
// nightly and month-end reports chronos schedules. Start as many copies as
// you like against the same Redis; each trigger runs once across all of
// them.
//
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/reports/cmd/reports
//
// REDIS_URL defaults to redis://localhost:6379/0. Reports are written to
// REPORTS_DIR (default: chronos-reports under the system temp directory).
// SIGINT or SIGTERM shuts the replica down gracefully: the scheduler hands
// leadership over at once and the server finishes running reports.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/examples/reports"
	chronos "github.com/chronos-go/chronos/runtime"
)

func main() {
	if err := run(); err != nil {
		slog.Error("reports", "err", err)
		os.Exit(1)
	}
}

func run() error {
	sig, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The server and scheduler run on their own context: a signal starts
	// the ordered shutdown below instead of stopping the server mid-way.
	ctx := context.Background()

	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://localhost:6379/0"
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return fmt.Errorf("REDIS_URL: %w", err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()

	sched := chronos.NewScheduler(rdb, chronos.SchedulerConfig{})
	// The month-end export group enqueues on "batch" (queue=batch), so
	// this server serves it beside the default queue.
	srv := chronos.NewServer(rdb, chronos.ServerConfig{
		Queues: map[string]int{chronos.DefaultQueue: 3, "batch": 1},
	})
	mux := chronos.NewMux()
	jobs := &reports.Reports{Source: reports.SampleSource{}, Dir: os.Getenv("REPORTS_DIR")}
	if err := reports.RegisterChronosJobs(sched, mux, jobs); err != nil {
		return err
	}

	if err := srv.Start(ctx, mux); err != nil {
		return err
	}
	if err := sched.Start(ctx); err != nil {
		_ = srv.Shutdown(context.Background())
		return err
	}
	slog.Info("reports: running; SIGINT or SIGTERM stops", "instance", sched.InstanceID())
	<-sig.Done()

	// Stop firing first, so no new task is enqueued for a server that is
	// going away; then let running reports finish.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return errors.Join(sched.Shutdown(shutdownCtx), srv.Shutdown(shutdownCtx))
}
