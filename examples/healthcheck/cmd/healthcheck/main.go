// Command healthcheck runs the health-check example: one replica of a
// service whose health checks chronos schedules. Start several copies
// against the same Redis: the local check runs on every copy, the cluster
// check once per trigger across all of them, and stopping the leader hands
// its work to another copy.
//
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/healthcheck/cmd/healthcheck
//
// REDIS_URL defaults to redis://localhost:6379/0. SIGINT or SIGTERM shuts
// the replica down gracefully.
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

	"github.com/chronos-go/chronos/examples/healthcheck"
	chronos "github.com/chronos-go/chronos/runtime"
)

func main() {
	if err := run(); err != nil {
		slog.Error("healthcheck", "err", err)
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

	srv := chronos.NewServer(rdb, chronos.ServerConfig{})
	// The server also runs this instance's isolated schedules, in process.
	sched := chronos.NewScheduler(rdb, chronos.SchedulerConfig{Server: srv})
	mux := chronos.NewMux()
	host, _ := os.Hostname()
	monitor := &healthcheck.Monitor{
		Instance: fmt.Sprintf("%s/%d", host, os.Getpid()),
		Ping:     func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
	}
	if err := healthcheck.RegisterChronosJobs(sched, mux, monitor); err != nil {
		return err
	}

	if err := srv.Start(ctx, mux); err != nil {
		return err
	}
	if err := sched.Start(ctx); err != nil {
		_ = srv.Shutdown(context.Background())
		return err
	}
	slog.Info("healthcheck: running; SIGINT or SIGTERM stops", "instance", sched.InstanceID())
	<-sig.Done()

	// Stop firing first (a leader resigns, and another replica takes over
	// at once), then let running checks finish.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(sched.Shutdown(shutdownCtx), srv.Shutdown(shutdownCtx))
}
