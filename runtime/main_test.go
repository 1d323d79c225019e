package chronos_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

// childEnv makes the test binary run as a worker process (see
// TestWorkerKilledMidTaskIsRecovered) instead of running tests.
const childEnv = "CHRONOS_TEST_CHILD_REDIS"

func TestMain(m *testing.M) {
	if url := os.Getenv(childEnv); url != "" {
		runChildWorker(url)
		return
	}
	code := m.Run()
	chronos.CloseTestClusters()
	os.Exit(code)
}

// runChildWorker serves the default queue with a handler that announces the
// task on the list "child:started" and then blocks forever, so the parent
// can kill the process mid-task.
func runChildWorker(url string) {
	rdb, err := redistest.OpenURL(url, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[Greet]) error {
		rdb.LPush(ctx, "child:started", t.ID)
		select {}
	})
	srv := chronos.NewServer(rdb, chronos.ServerConfig{
		Concurrency: 1, VisibilityTimeout: 3 * time.Second,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err := srv.Start(context.Background(), mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	select {}
}

// Greet is the task args most tests use.
type Greet struct {
	Name string `json:"name"`
}

func (Greet) Kind() string { return "greet" }

// quietLogger discards records; tests that check logging make their own.
var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// env is a private Redis (or, with CHRONOS_TEST_CLUSTER=1, a cluster:
// chronos.TestRedis) with a client on it.
type env struct {
	redis  *chronos.TestRedis
	rdb    redis.UniversalClient
	client *chronos.Client
	insp   *chronos.Inspector
}

// newEnv gives t a private redis-server (a cluster with
// CHRONOS_TEST_CLUSTER=1), and runs t in parallel with the package's other
// tests on theirs.
func newEnv(t *testing.T, opts ...redistest.Options) *env {
	t.Helper()
	s := chronos.StartTestRedis(t, opts...)
	rdb := s.NewClient()
	chronos.MarkTestLayout(t, rdb, "")
	return &env{redis: s, rdb: rdb, client: chronos.NewClient(rdb), insp: chronos.NewInspector(rdb)}
}

// serve starts a server with cfg (quiet unless cfg sets a logger) and shuts
// it down when the test ends.
func (e *env) serve(t *testing.T, mux *chronos.Mux, cfg chronos.ServerConfig) *chronos.Server {
	t.Helper()
	if cfg.Logger == nil { // keep the records, and show them if the test fails
		var logs syncBuffer
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("server log:\n%s", logs.String())
			}
		})
	}
	srv := chronos.NewServer(e.rdb, cfg)
	if err := srv.Start(context.Background(), mux); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv
}

func (e *env) enqueue(t *testing.T, args chronos.TaskArgs, opts ...chronos.EnqueueOption) *chronos.TaskInfo {
	t.Helper()
	info, err := e.client.Enqueue(context.Background(), args, opts...)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	return info
}

// waitTimeout bounds every wait; reaching it is a failure, never a measurement.
const waitTimeout = 20 * time.Second

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// eventually polls cond until it holds, for conditions only visible in Redis.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// counter counts runs per task ID.
type counter struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *counter) add(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = make(map[string]int)
	}
	c.runs[id]++
	return c.runs[id]
}

func (c *counter) get(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[id]
}
