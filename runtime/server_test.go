package chronos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

func TestEnqueuedTaskReachesItsHandlerWithItsMetadata(t *testing.T) {
	e := newEnv(t)
	got := make(chan *chronos.Task[Greet], 1)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		got <- task
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{})

	before := time.Now().Truncate(time.Millisecond)
	info := e.enqueue(t, Greet{Name: "ada"}, chronos.WithMaxRetry(3))
	if info.ID == "" || info.Kind != "greet" || info.Queue != "default" || info.MaxRetry != 3 || info.Duplicate {
		t.Fatalf("TaskInfo = %+v", info)
	}
	task := recv(t, got, "handler")
	if task.ID != info.ID || task.Args.Name != "ada" || task.Queue != "default" ||
		task.Attempt != 1 || task.MaxRetry != 3 || task.EnqueuedAt.Before(before) ||
		task.ScheduleID != "" || !task.TriggerTime.IsZero() {
		t.Fatalf("Task = %+v", task)
	}
}

func TestTaskGoesToTheQueueItNames(t *testing.T) {
	e := newEnv(t)
	got := make(chan string, 1)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		got <- task.Queue
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{Queues: map[string]int{"mail": 1}})
	e.enqueue(t, Greet{}, chronos.WithQueue("mail"))
	if q := recv(t, got, "handler"); q != "mail" {
		t.Fatalf("queue = %q", q)
	}
}

func TestResultIsStoredWithTheRunRecordAndLogged(t *testing.T) {
	e := newEnv(t)
	var logs syncBuffer
	type report struct {
		Sent int `json:"sent"`
	}
	done := make(chan struct{}, 1)
	mux := chronos.NewMux()
	chronos.AddHandlerWithResult(mux, func(ctx context.Context, task *chronos.Task[Greet]) (report, error) {
		defer func() { done <- struct{}{} }()
		return report{Sent: 7}, nil
	})
	e.serve(t, mux, chronos.ServerConfig{
		Logger:          slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		SuccessLogLevel: slog.LevelInfo,
	})
	info := e.enqueue(t, Greet{Name: "ada"})
	recv(t, done, "handler")

	var runs []*chronos.RunRecord
	eventually(t, "run record", func() bool {
		var err error
		runs, err = e.insp.ListRuns(context.Background(), "greet", 10)
		return err == nil && len(runs) == 1
	})
	r := runs[0]
	if r.TaskID != info.ID || r.Status != "success" || r.Attempt != 1 || string(r.Result) != `{"sent":7}` ||
		r.Queue != "default" || r.Start.IsZero() || r.Error != "" {
		t.Fatalf("run record = %+v", r)
	}

	eventually(t, "success record", func() bool { return strings.Contains(logs.String(), `"task success"`) })
	var start, success map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch rec["event"] {
		case chronos.EventTaskStart:
			start = rec
		case chronos.EventTaskSuccess:
			success = rec
		}
	}
	if start == nil || start["task_id"] != info.ID || start["kind"] != "greet" || start["attempt"] != 1.0 {
		t.Fatalf("start record = %v", start)
	}
	if success == nil || success["task_id"] != info.ID || success["queue"] != "default" ||
		success["outcome"] != "success" || success["level"] != "INFO" || success["duration"] == nil {
		t.Fatalf("success record = %v", success)
	}
	if res, _ := json.Marshal(success["result"]); string(res) != `{"sent":7}` {
		t.Fatalf("logged result = %s", res)
	}
}

func TestFailedTaskIsRetriedWithBackoffUntilItSucceeds(t *testing.T) {
	e := newEnv(t)
	var attempts []int
	done := make(chan struct{})
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		attempts = append(attempts, task.Attempt)
		if task.Attempt < 3 {
			return errors.New("not yet")
		}
		close(done)
		return nil
	}, chronos.WithBackoff(chronos.ConstantBackoff(20*time.Millisecond)))
	var failures atomic.Int32
	e.serve(t, mux, chronos.ServerConfig{
		Concurrency: 1,
		ErrorHandler: func(ctx context.Context, task *chronos.TaskInfo, err error) {
			failures.Add(1)
		},
	})
	info := e.enqueue(t, Greet{})
	recv(t, done, "third attempt")

	if len(attempts) != 3 || attempts[0] != 1 || attempts[1] != 2 || attempts[2] != 3 {
		t.Fatalf("attempts = %v", attempts)
	}
	var runs []*chronos.RunRecord
	eventually(t, "three run records", func() bool {
		runs, _ = e.insp.ListRuns(context.Background(), "greet", 10)
		return len(runs) == 3
	})
	want := []string{"success", "retry", "retry"} // newest first
	for i, r := range runs {
		if r.Status != want[i] || r.TaskID != info.ID || r.Attempt != 3-i {
			t.Fatalf("run %d = %+v", i, r)
		}
	}
	if runs[1].Error != "not yet" {
		t.Fatalf("retry record error = %q", runs[1].Error)
	}
	if n := failures.Load(); n != 2 {
		t.Fatalf("ErrorHandler called %d times, want 2", n)
	}
}

func TestExhaustedRetriesGoToDeadLettersWithHistoryAndCanBeRequeued(t *testing.T) {
	e := newEnv(t)
	var runs atomic.Int32
	var succeed atomic.Bool
	done := make(chan string, 1)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		runs.Add(1)
		if succeed.Load() {
			done <- task.Args.Name
			return nil
		}
		return errors.New("smtp: 421 try later")
	}, chronos.WithBackoff(chronos.ConstantBackoff(time.Millisecond)))
	e.serve(t, mux, chronos.ServerConfig{})
	info := e.enqueue(t, Greet{Name: "grace"}, chronos.WithMaxRetry(2))

	dead := waitDead(t, e, 1)[0]
	if runs.Load() != 3 {
		t.Fatalf("runs = %d, want 3 (first run + 2 retries)", runs.Load())
	}
	if dead.ID != info.ID || dead.Kind != "greet" || dead.Queue != "default" || dead.Attempts != 3 ||
		dead.MaxRetry != 2 || dead.Reason != "smtp: 421 try later" || dead.DiedAt.IsZero() ||
		string(dead.Args) != `{"name":"grace"}` || len(dead.History) != 3 {
		t.Fatalf("dead task = %+v", dead)
	}
	for _, h := range dead.History {
		if h.Error != "smtp: 421 try later" || h.Start.IsZero() {
			t.Fatalf("history = %+v", dead.History)
		}
	}

	succeed.Store(true)
	req, err := e.insp.RequeueDead(context.Background(), info.ID)
	if err != nil || req.ID != info.ID {
		t.Fatalf("RequeueDead = %+v, %v", req, err)
	}
	if name := recv(t, done, "requeued run"); name != "grace" {
		t.Fatalf("requeued args = %q", name)
	}
	if n, _ := e.insp.CountDead(context.Background()); n != 0 {
		t.Fatalf("dead letters after requeue = %d", n)
	}
	if _, err := e.insp.RequeueDead(context.Background(), info.ID); !errors.Is(err, chronos.ErrTaskNotFound) {
		t.Fatalf("second RequeueDead err = %v, want ErrTaskNotFound", err)
	}
}

func TestDeleteDeadRemovesTheDeadLetter(t *testing.T) {
	e := newEnv(t)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		return chronos.ErrSkipRetry
	})
	e.serve(t, mux, chronos.ServerConfig{})
	info := e.enqueue(t, Greet{})
	waitDead(t, e, 1)
	if err := e.insp.DeleteDead(context.Background(), info.ID); err != nil {
		t.Fatalf("DeleteDead: %v", err)
	}
	if _, err := e.insp.GetDead(context.Background(), info.ID); !errors.Is(err, chronos.ErrTaskNotFound) {
		t.Fatalf("GetDead after delete: %v", err)
	}
	if err := e.insp.DeleteDead(context.Background(), info.ID); !errors.Is(err, chronos.ErrTaskNotFound) {
		t.Fatalf("second DeleteDead: %v", err)
	}
}

func TestSkipRetryGoesStraightToDeadLetters(t *testing.T) {
	e := newEnv(t)
	var runs atomic.Int32
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		runs.Add(1)
		return fmt.Errorf("account closed: %w", chronos.ErrSkipRetry)
	})
	e.serve(t, mux, chronos.ServerConfig{})
	e.enqueue(t, Greet{}, chronos.WithMaxRetry(10))
	dead := waitDead(t, e, 1)[0]
	if runs.Load() != 1 || dead.Attempts != 1 || !strings.Contains(dead.Reason, "account closed") {
		t.Fatalf("runs = %d, dead = %+v", runs.Load(), dead)
	}
}

// Args with the kind "greet" but a payload Greet cannot decode.
type badGreet struct {
	Name int `json:"name"`
}

func (badGreet) Kind() string { return "greet" }

func TestUndecodablePayloadIsDeadLetteredAtOnce(t *testing.T) {
	e := newEnv(t)
	var runs atomic.Int32
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		runs.Add(1)
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{})
	e.enqueue(t, badGreet{Name: 42}, chronos.WithMaxRetry(10))
	dead := waitDead(t, e, 1)[0]
	if runs.Load() != 0 || !strings.Contains(dead.Reason, chronos.ErrBadPayload.Error()) || string(dead.Args) != `{"name":42}` {
		t.Fatalf("runs = %d, dead = %+v", runs.Load(), dead)
	}
}

type orphan struct{}

func (orphan) Kind() string { return "orphan" }

func TestUnknownKindIsDeadLetteredAtOnce(t *testing.T) {
	e := newEnv(t)
	e.serve(t, chronos.NewMux(), chronos.ServerConfig{})
	info := e.enqueue(t, orphan{}, chronos.WithMaxRetry(10))
	dead := waitDead(t, e, 1)[0]
	if dead.ID != info.ID || dead.Kind != "orphan" || !strings.Contains(dead.Reason, `no handler for task kind "orphan"`) {
		t.Fatalf("dead = %+v", dead)
	}
}

func TestHandlerPanicIsRecoveredAndRetriedWithItsStack(t *testing.T) {
	e := newEnv(t)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		var m map[string]int
		m["boom"]++ // nil map write
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{Backoff: chronos.ConstantBackoff(time.Millisecond)})
	e.enqueue(t, Greet{}, chronos.WithMaxRetry(1))
	dead := waitDead(t, e, 1)[0]
	if dead.Attempts != 2 || len(dead.History) != 2 {
		t.Fatalf("dead = %+v", dead)
	}
	h := dead.History[0].Error
	if !strings.Contains(h, "handler panicked: assignment to entry in nil map") || !strings.Contains(h, "goroutine ") {
		t.Fatalf("history error lacks the panic or its stack:\n%s", h)
	}
}

func TestTimeoutCancelsTheRunAndCountsAsAFailure(t *testing.T) {
	e := newEnv(t)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		<-ctx.Done()
		return ctx.Err()
	})
	e.serve(t, mux, chronos.ServerConfig{})
	e.enqueue(t, Greet{}, chronos.WithTimeout(20*time.Millisecond), chronos.WithMaxRetry(0))
	dead := waitDead(t, e, 1)[0]
	if dead.Reason != context.DeadlineExceeded.Error() {
		t.Fatalf("reason = %q", dead.Reason)
	}
}

func TestTaskPastItsDeadlineIsNotRun(t *testing.T) {
	e := newEnv(t)
	var runs atomic.Int32
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		runs.Add(1)
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{})
	e.enqueue(t, Greet{}, chronos.WithDeadline(time.Now().Add(-time.Second)))
	dead := waitDead(t, e, 1)[0]
	if runs.Load() != 0 || !strings.Contains(dead.Reason, chronos.ErrDeadlineExceeded.Error()) {
		t.Fatalf("runs = %d, reason = %q", runs.Load(), dead.Reason)
	}
}

func TestDelayedTaskRunsOnlyOnceDue(t *testing.T) {
	e := newEnv(t)
	ran := make(chan time.Time, 2)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		ran <- time.Now()
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{})
	// The server is idle and sleeping when the task arrives: the wake-up
	// must come from the enqueue, not from a periodic tick.
	in := e.enqueue(t, Greet{Name: "in"}, chronos.WithProcessIn(150*time.Millisecond))
	at := e.enqueue(t, Greet{Name: "at"}, chronos.WithProcessAt(time.Now().Add(100*time.Millisecond)))
	for _, info := range []*chronos.TaskInfo{in, at} {
		if !info.ProcessAt.After(time.Now().Add(-time.Second)) {
			t.Fatalf("ProcessAt = %v", info.ProcessAt)
		}
	}
	for range 2 {
		got := recv(t, ran, "delayed run")
		if got.Before(at.ProcessAt) {
			t.Fatalf("ran at %v, before it was due at %v", got, at.ProcessAt)
		}
	}
}

func TestDedupKeyMakesASecondEnqueueANoOpUntilItExpires(t *testing.T) {
	e := newEnv(t)
	c := &counter{}
	done := make(chan struct{}, 4)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		c.add(task.ID)
		done <- struct{}{}
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{})
	ctx := context.Background()

	first := e.enqueue(t, Greet{}, chronos.WithDedupKey("report:2026-11-30", time.Hour))
	recv(t, done, "first run")
	// The key outlives the task: finishing does not reopen the window.
	second := e.enqueue(t, Greet{}, chronos.WithDedupKey("report:2026-11-30", time.Hour))
	if first.Duplicate || !second.Duplicate || second.ID != first.ID {
		t.Fatalf("first = %+v, second = %+v", first, second)
	}
	if ttl := e.rdb.PTTL(ctx, partsOf(t, e.rdb, "").dedup("report:2026-11-30")).Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("dedup key TTL = %v", ttl)
	}

	short := e.enqueue(t, Greet{}, chronos.WithDedupKey("short", time.Millisecond))
	recv(t, done, "short run")
	eventually(t, "dedup key expiry", func() bool { return e.rdb.Exists(ctx, partsOf(t, e.rdb, "").dedup("short")).Val() == 0 })
	again := e.enqueue(t, Greet{}, chronos.WithDedupKey("short", time.Millisecond))
	if again.Duplicate || again.ID == short.ID {
		t.Fatalf("after expiry: %+v", again)
	}
	recv(t, done, "run after expiry")
	if c.get(first.ID) != 1 || c.get(short.ID) != 1 || c.get(again.ID) != 1 {
		t.Fatalf("runs = %v", c.runs)
	}
}

func TestDedupKeyAppliesToDelayedTasks(t *testing.T) {
	e := newEnv(t)
	first := e.enqueue(t, Greet{}, chronos.WithDedupKey("k", time.Hour), chronos.WithProcessIn(time.Hour))
	second := e.enqueue(t, Greet{}, chronos.WithDedupKey("k", time.Hour))
	if !second.Duplicate || second.ID != first.ID {
		t.Fatalf("second = %+v", second)
	}
	if n := partsOf(t, e.rdb, "").delayed("default"); n != 1 {
		t.Fatalf("delayed tasks = %d", n)
	}
}

func TestConcurrencyLimitIsHeld(t *testing.T) {
	e := newEnv(t)
	const limit, tasks = 3, 30
	var running, peak atomic.Int32
	full := make(chan struct{})
	var fullOnce sync.Once
	done := make(chan struct{}, tasks)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if n == limit {
			fullOnce.Do(func() { close(full) })
		}
		<-full // hold every slot until all are taken once
		running.Add(-1)
		done <- struct{}{}
		return nil
	})
	for range tasks {
		e.enqueue(t, Greet{})
	}
	e.serve(t, mux, chronos.ServerConfig{Concurrency: limit})
	for range tasks {
		recv(t, done, "task")
	}
	if p := peak.Load(); p != limit {
		t.Fatalf("peak concurrency = %d, want %d", p, limit)
	}
}

func TestStrictPriorityDrainsHigherQueuesFirst(t *testing.T) {
	chronos.SkipOnTestCluster(t, "StrictPriority holds across partitions on a single server; on a cluster only within each partition (docs/queue.md, \"Fairness and priority\")")
	e := newEnv(t)
	var mu sync.Mutex
	var order []string
	done := make(chan struct{}, 10)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		mu.Lock()
		order = append(order, task.Queue)
		mu.Unlock()
		done <- struct{}{}
		return nil
	})
	for range 5 {
		e.enqueue(t, Greet{}, chronos.WithQueue("low"))
		e.enqueue(t, Greet{}, chronos.WithQueue("high"))
	}
	e.serve(t, mux, chronos.ServerConfig{
		Concurrency: 1, StrictPriority: true, Queues: map[string]int{"high": 10, "low": 1},
	})
	for range 10 {
		recv(t, done, "task")
	}
	want := "high high high high high low low low low low"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("order = %s", got)
	}
}

func TestWeightedQueuesAreAllServed(t *testing.T) {
	e := newEnv(t)
	done := make(chan string, 30)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		done <- task.Queue
		return nil
	})
	for _, q := range []string{"a", "b", "c"} {
		for range 10 {
			e.enqueue(t, Greet{}, chronos.WithQueue(q))
		}
	}
	e.serve(t, mux, chronos.ServerConfig{Concurrency: 2, Queues: map[string]int{"a": 6, "b": 3, "c": 1}})
	seen := map[string]int{}
	for range 30 {
		seen[recv(t, done, "task")]++
	}
	if seen["a"] != 10 || seen["b"] != 10 || seen["c"] != 10 {
		t.Fatalf("served = %v", seen)
	}
}

// waitDead waits until n dead letters exist and returns them.
func waitDead(t *testing.T, e *env, n int) []*chronos.DeadTask {
	t.Helper()
	var dead []*chronos.DeadTask
	eventually(t, "dead letters", func() bool {
		var err error
		dead, err = e.insp.ListDead(context.Background(), chronos.ListOptions{})
		if err != nil {
			t.Fatalf("ListDead: %v", err)
		}
		return len(dead) >= n
	})
	return dead
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStartFailsWhenRedisIsDownAndCanBeRetried(t *testing.T) {
	chronos.SkipOnTestCluster(t, "kills the one redis-server")
	e := newEnv(t)
	srv := chronos.NewServer(e.rdb, chronos.ServerConfig{Logger: quietLogger})
	e.redis.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := srv.Start(ctx, chronos.NewMux()); err == nil {
		t.Fatal("Start succeeded with Redis down")
	}
	if err := srv.Shutdown(context.Background()); !errors.Is(err, chronos.ErrServerNotStarted) {
		t.Fatalf("Shutdown after failed Start = %v", err)
	}
	e.redis.Restart()
	if err := srv.Start(context.Background(), chronos.NewMux()); err != nil {
		t.Fatalf("second Start: %v", err)
	}
	if err := srv.Start(context.Background(), chronos.NewMux()); !errors.Is(err, chronos.ErrServerStarted) {
		t.Fatalf("third Start = %v", err)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// The start context bounds starting, as in the standard library: the usual
// WithTimeout + defer cancel() around Start must not stop the server.
func TestTheStartContextBoundsOnlyTheStart(t *testing.T) {
	e := newEnv(t)
	ran := make(chan struct{}, 1)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		ran <- struct{}{}
		return nil
	})
	srv := chronos.NewServer(e.rdb, chronos.ServerConfig{Logger: quietLogger})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	cancel()
	e.enqueue(t, Greet{}) // enqueued after the start context ended
	recv(t, ran, "task")
	consumers := func() int { return len(partsOf(t, e.rdb, "").consumers(chronos.DefaultQueue)) }
	if n := consumers(); n != 1 {
		t.Fatalf("consumers while running = %d", n)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A clean shutdown leaves the consumer group: consumer lists do not
	// grow with every deploy.
	if n := consumers(); n != 0 {
		t.Fatalf("consumers after Shutdown = %d", n)
	}
}

func TestFailuresAreLoggedWithTheirOutcome(t *testing.T) {
	e := newEnv(t)
	var logs syncBuffer
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		return errors.New("disk full")
	}, chronos.WithBackoff(chronos.ConstantBackoff(time.Millisecond)))
	e.serve(t, mux, chronos.ServerConfig{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	info := e.enqueue(t, Greet{}, chronos.WithMaxRetry(1))
	waitDead(t, e, 1)

	var failures []map[string]any
	eventually(t, "two failure records", func() bool {
		failures = failures[:0]
		for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && rec["event"] == chronos.EventTaskFailure {
				failures = append(failures, rec)
			}
		}
		return len(failures) == 2
	})
	retry, dead := failures[0], failures[1]
	if retry["level"] != "WARN" || retry["outcome"] != "retry" || retry["error"] != "disk full" ||
		retry["retry_at"] == nil || retry["attempt"] != 1.0 || retry["task_id"] != info.ID {
		t.Fatalf("retry record = %v", retry)
	}
	if dead["level"] != "ERROR" || dead["outcome"] != "dead" || dead["error"] != "disk full" || dead["attempt"] != 2.0 {
		t.Fatalf("dead record = %v", dead)
	}
}

// Success records are logged at Debug unless SuccessLogLevel says
// otherwise: a logger at Info sees failures only.
func TestSuccessRecordsAreDebugByDefault(t *testing.T) {
	e := newEnv(t)
	var logs syncBuffer
	done := make(chan struct{}, 2)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		done <- struct{}{}
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	e.enqueue(t, Greet{})
	recv(t, done, "handler")
	eventually(t, "run record", func() bool {
		runs, err := e.insp.ListRuns(context.Background(), "greet", 10)
		return err == nil && len(runs) == 1
	})
	if strings.Contains(logs.String(), chronos.EventTaskSuccess) {
		t.Errorf("success record logged at Info by default:\n%s", logs.String())
	}
}

func TestQueueInfoCountsReadyRunningAndDelayedTasks(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	info, err := e.insp.QueueInfo(ctx, "default")
	if err != nil || info.Ready != 0 || info.Running != 0 || info.Delayed != 0 {
		t.Fatalf("empty queue = %+v, %v", info, err)
	}
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		started <- struct{}{}
		<-release
		return nil
	})
	e.enqueue(t, Greet{})
	e.enqueue(t, Greet{}, chronos.WithProcessIn(time.Hour))
	e.serve(t, mux, chronos.ServerConfig{Concurrency: 1})
	recv(t, started, "first task")
	e.enqueue(t, Greet{})
	info, err = e.insp.QueueInfo(ctx, "default")
	if err != nil || info.Ready != 1 || info.Running != 1 || info.Delayed != 1 || info.OldestRunningSince.IsZero() {
		t.Fatalf("QueueInfo = %+v, %v", info, err)
	}
	close(release)
}

func TestEnqueueManyAddsEveryTaskInOneBatch(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// The script cache is empty at first (as after a Redis restart): the
	// batch must load it rather than fail or send anything twice.
	e.rdb.ScriptFlush(ctx)
	args := []chronos.TaskArgs{Greet{Name: "a"}, Greet{Name: "b"}, nil, Greet{Name: "c"}}
	infos, err := e.client.EnqueueMany(ctx, args, chronos.WithQueue("bulk"))
	if err == nil || !strings.Contains(err.Error(), "#2") {
		t.Fatalf("err = %v, want the nil args at #2 reported", err)
	}
	if infos[2] != nil || infos[0] == nil || infos[1] == nil || infos[3] == nil {
		t.Fatalf("infos = %v", infos)
	}
	if n := partsOf(t, e.rdb, "").xlen("bulk"); n != 3 {
		t.Fatalf("stream length = %d, want 3", n)
	}
	dups, err := e.client.EnqueueMany(ctx, []chronos.TaskArgs{Greet{}, Greet{}}, chronos.WithDedupKey("batch", time.Minute))
	if err != nil || dups[0].Duplicate || !dups[1].Duplicate || dups[1].ID != dups[0].ID {
		t.Fatalf("dedup within a batch = %+v %+v, %v", dups[0], dups[1], err)
	}
}

func TestDeadLettersAreCappedOldestFirst(t *testing.T) {
	e := newEnv(t)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		return chronos.ErrSkipRetry
	})
	e.serve(t, mux, chronos.ServerConfig{Concurrency: 1, DeadRetention: 2})
	var ids []string
	for range 3 {
		ids = append(ids, e.enqueue(t, Greet{}).ID)
		waitDead(t, e, min(len(ids), 2))
		eventually(t, "the dead letter", func() bool {
			_, err := e.insp.GetDead(context.Background(), ids[len(ids)-1])
			return err == nil
		})
	}
	if n, _ := e.insp.CountDead(context.Background()); n != 2 {
		t.Fatalf("dead letters = %d, want 2", n)
	}
	if _, err := e.insp.GetDead(context.Background(), ids[0]); !errors.Is(err, chronos.ErrTaskNotFound) {
		t.Fatalf("oldest dead letter still there: %v", err)
	}
}

func TestNamespacesKeepTheirKeysApart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	billing := chronos.NewClient(e.rdb, chronos.WithNamespace("billing"))
	if _, err := billing.Enqueue(ctx, Greet{}); err != nil {
		t.Fatal(err)
	}
	if n := partsOf(t, e.rdb, "billing").xlen("default"); n != 1 {
		t.Fatalf("billing stream length = %d", n)
	}
	if chronos.LayoutOneUnderTest() { // the default namespace holds the marker of layout 1
		if n := partsOf(t, e.rdb, "").xlen("default"); n != 0 {
			t.Fatalf("a billing task landed in the default namespace: stream length %d", n)
		}
		return
	}
	if ok, err := e.insp.NamespaceExists(ctx); err != nil || ok {
		t.Fatalf("a billing task landed in the default namespace: NamespaceExists = %v, %v", ok, err)
	}
}

func TestPausedQueueIsSkippedUntilResumed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ran := make(chan string, 2)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		ran <- task.Args.Name
		return nil
	})
	if err := e.insp.PauseQueue(ctx, "urgent"); err != nil {
		t.Fatal(err)
	}
	// With strict priority, "urgent" would run first if it were not paused.
	e.enqueue(t, Greet{Name: "urgent"}, chronos.WithQueue("urgent"))
	e.enqueue(t, Greet{Name: "routine"}, chronos.WithQueue("routine"))
	e.serve(t, mux, chronos.ServerConfig{
		Concurrency: 1, StrictPriority: true, Queues: map[string]int{"urgent": 9, "routine": 1},
	})
	if got := recv(t, ran, "first run"); got != "routine" {
		t.Fatalf("first run = %q: the paused queue was served", got)
	}
	info, err := e.insp.QueueInfo(ctx, "urgent")
	if err != nil || !info.Paused || info.Ready != 1 {
		t.Fatalf("QueueInfo(urgent) = %+v, %v", info, err)
	}
	if err := e.insp.ResumeQueue(ctx, "urgent"); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, ran, "run after resume"); got != "urgent" {
		t.Fatalf("after resume ran %q", got)
	}
}
