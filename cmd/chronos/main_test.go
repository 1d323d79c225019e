package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

// report is the task of the schedules under test.
type report struct {
	Format string `json:"format"`
}

func (report) Kind() string { return "report" }

// flaky fails its first run without retry, so it dies, and succeeds after.
type flaky struct{}

func (flaky) Kind() string { return "flaky" }

// doomed always fails without retry.
type doomed struct{}

func (doomed) Kind() string { return "doomed" }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// cluster is a private Redis with one scheduler instance ("sched-a") and
// one worker server on it, as an operator would find a running service.
type cluster struct {
	t     *testing.T
	redis *redistest.Server
	rdb   redis.UniversalClient
	sched *chronos.Scheduler

	mu    sync.Mutex
	flaky int // runs of flaky tasks
}

// startCluster registers these schedules and starts the scheduler and a
// server that runs their tasks:
//
//	reports.daily  cron 0 0 2 * * ? in Asia/Seoul, declared at jobs.go:42
//	nightly        a group of jobs "users" and "orders" at 03:00 UTC
//	health         every 1h
func startCluster(t *testing.T) *cluster {
	t.Helper()
	redistest.Parallel(t)
	return newCluster(t)
}

// newCluster is startCluster for a test that cannot run in parallel (one
// that sets environment variables).
func newCluster(t *testing.T) *cluster {
	t.Helper()
	s := redistest.Start(t)
	c := &cluster{t: t, redis: s, rdb: s.Client()}
	markTestLayout(t, c.rdb)
	c.sched = chronos.NewScheduler(s.NewClient(nil), chronos.SchedulerConfig{
		InstanceID: "sched-a", Version: "v1.2.3", LeaderTTL: time.Second, Logger: quiet,
	})
	must(t, chronos.RegisterCron(c.sched, "0 0 2 * * ?", report{Format: "pdf"},
		chronos.WithScheduleID("reports.daily"), chronos.WithTimeZone("Asia/Seoul"),
		chronos.WithMisfire("doNothing"), chronos.WithSource("jobs.go", 42)))
	g := chronos.NewGroup(c.sched, "nightly", chronos.CronTrigger("0 0 3 * * ?"))
	must(t, chronos.AddJob(g, "users", report{Format: "users"}))
	must(t, chronos.AddJob(g, "orders", report{Format: "orders"}))
	must(t, chronos.RegisterInterval(c.sched, time.Hour, report{Format: "csv"}, chronos.WithScheduleID("health")))

	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[report]) error { return nil })
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[flaky]) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.flaky++
		if c.flaky == 1 {
			return fmt.Errorf("disk full: %w", chronos.ErrSkipRetry)
		}
		return nil
	})
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[doomed]) error {
		return fmt.Errorf("always: %w", chronos.ErrSkipRetry)
	})
	srv := chronos.NewServer(s.NewClient(nil), chronos.ServerConfig{Logger: quiet, TaskLogger: quiet})
	must(t, srv.Start(context.Background(), mux))
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	must(t, c.sched.Start(context.Background()))
	t.Cleanup(func() { _ = c.sched.Shutdown(context.Background()) })
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// result is what one invocation of the CLI printed and returned.
type result struct {
	code           int
	stdout, stderr string
}

// chronos runs the CLI against the cluster's Redis.
func (c *cluster) chronos(args ...string) result {
	c.t.Helper()
	return invoke(append([]string{"-redis", c.redis.URL()}, args...)...)
}

// ok runs the CLI and fails the test unless it exits 0 with nothing on
// stderr.
func (c *cluster) ok(args ...string) string {
	c.t.Helper()
	r := c.chronos(args...)
	if r.code != exitOK || r.stderr != "" {
		c.t.Fatalf("chronos %s: exit %d, stderr %q, stdout:\n%s", strings.Join(args, " "), r.code, r.stderr, r.stdout)
	}
	return r.stdout
}

// okJSON runs the CLI with -json and decodes its output into v.
func (c *cluster) okJSON(v any, args ...string) {
	c.t.Helper()
	out := c.ok(append([]string{"-json"}, args...)...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("chronos -json %s: %v in\n%s", strings.Join(args, " "), err, out)
	}
}

func invoke(args ...string) result {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}

// waitTimeout bounds every wait; reaching it is a failure, never a measurement.
const waitTimeout = 20 * time.Second

// eventually polls cond until it holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eventuallyJSON runs the CLI with -json until what it decoded into v
// satisfies cond.
func (c *cluster) eventuallyJSON(v any, cond func() bool, args ...string) {
	c.t.Helper()
	eventually(c.t, "chronos "+strings.Join(args, " "), func() bool {
		c.okJSON(v, args...)
		return cond()
	})
}

// waitLeader waits until the scheduler leads.
func (c *cluster) waitLeader() {
	c.t.Helper()
	eventually(c.t, "a leader", func() bool {
		var l *struct {
			InstanceID string `json:"instance_id"`
		}
		c.okJSON(&l, "leader")
		return l != nil && l.InstanceID == "sched-a"
	})
}

// firings returns the firings of schedule id with source src, newest
// first, as "chronos schedule" shows them. Filtering by source keeps a
// test right should a trigger happen to fall due while it runs.
func (c *cluster) firings(id, src string) []firingView {
	c.t.Helper()
	var d scheduleDetail
	c.okJSON(&d, "schedule", id)
	var out []firingView
	for _, h := range d.History {
		if h.Source == src {
			out = append(out, h)
		}
	}
	return out
}

// lineOf returns the line of out whose first field is key.
func lineOf(t *testing.T, out, key string) string {
	t.Helper()
	for l := range strings.Lines(out) {
		if f := strings.Fields(l); len(f) > 0 && f[0] == key {
			return strings.TrimRight(l, "\n")
		}
	}
	t.Fatalf("no line for %q in\n%s", key, out)
	return ""
}

// hasFields reports whether out contains part, however the columns of
// either are padded.
func hasFields(out, part string) bool {
	return strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(part), " "))
}

// markTestLayout marks the default namespace as one written by a version
// before partitions (layout 1, the single hash tag) when the tests run
// with CHRONOS_TEST_LAYOUT=1; by default they run in a new namespace's 12
// partitions. The mark is the leader epoch counter those versions write
// (runtime/internal/leader's KeysFor("").Epoch, one of the keys
// runtime/internal/keyspace detects layout 1 by), spelled here because
// this package cannot import the runtime's internal packages.
func markTestLayout(t *testing.T, c redis.UniversalClient) {
	t.Helper()
	if os.Getenv("CHRONOS_TEST_LAYOUT") != "1" {
		return
	}
	if err := c.SetNX(context.Background(), "{chronos}:leader:epoch", 0, 0).Err(); err != nil {
		t.Fatal(err)
	}
}
