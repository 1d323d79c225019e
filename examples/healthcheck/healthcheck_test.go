package healthcheck_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/examples/healthcheck"
	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

// startReplica runs the generated registration on a fresh scheduler and
// server, as the example's main does, and returns the checks it runs.
func startReplica(t *testing.T, opt *redis.Options, instance string) <-chan healthcheck.Check {
	t.Helper()
	ctx := context.Background()
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := chronos.NewServer(rdb, chronos.ServerConfig{Logger: quiet})
	sched := chronos.NewScheduler(rdb, chronos.SchedulerConfig{InstanceID: instance, Logger: quiet, Server: srv})
	mux := chronos.NewMux()
	checks := make(chan healthcheck.Check, 100)
	monitor := &healthcheck.Monitor{
		Instance: instance,
		Ping:     func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
		Report:   func(c healthcheck.Check) { checks <- c },
	}
	if err := healthcheck.RegisterChronosJobs(sched, mux, monitor); err != nil {
		t.Fatalf("RegisterChronosJobs: %v", err)
	}
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatalf("server start: %v", err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	if err := sched.Start(ctx); err != nil {
		t.Fatalf("scheduler start: %v", err)
	}
	t.Cleanup(func() { _ = sched.Shutdown(context.Background()) })
	return checks
}

// next returns the next check of schedule, failing the test if none comes
// within a generous bound (the schedules fire every 2 and 5 seconds).
func next(t *testing.T, checks <-chan healthcheck.Check, schedule string) healthcheck.Check {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case c := <-checks:
			if c.Schedule == schedule {
				return c
			}
		case <-deadline:
			t.Fatalf("no run of %s", schedule)
		}
	}
}

func TestGeneratedRegistrationFiresTheClusterCheckAndRunsIt(t *testing.T) {
	redistest.Parallel(t)
	checks := startReplica(t, redistest.Start(t).Options(), "replica-a")

	c := next(t, checks, "healthcheck.Monitor.Cluster")
	if c.Err != nil {
		t.Errorf("cluster check against a live Redis: %v", c.Err)
	}
	if c.Trigger.IsZero() || c.Trigger.UnixNano()%int64(2*time.Second) != 0 {
		t.Errorf("trigger %v, want a multiple of every=2s since the epoch", c.Trigger)
	}
	if !strings.HasPrefix(c.Detail, "ping ") {
		t.Errorf("detail %q, want the ping time", c.Detail)
	}
}

func TestLocalCheckRunsOnTheInstanceThatFiredIt(t *testing.T) {
	redistest.Parallel(t)
	checks := startReplica(t, redistest.Start(t).Options(), "replica-a")

	c := next(t, checks, "healthcheck.Monitor.Local")
	if c.Queue != chronos.LocalQueue {
		t.Errorf("queue %q, want %q: isolated work runs in process", c.Queue, chronos.LocalQueue)
	}
	if c.Err != nil || c.Instance != "replica-a" {
		t.Errorf("check = %+v, want a healthy check on replica-a", c)
	}
}
