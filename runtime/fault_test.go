package chronos_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

func TestWorkerKilledMidTaskIsRecoveredAndCompletedOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	info := e.enqueue(t, Greet{Name: "survivor"})

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+e.redis.URL())
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatalf("start child worker: %v", err)
	}
	started, err := e.rdb.BLPop(ctx, waitTimeout, "child:started").Result()
	if err != nil {
		_ = child.Process.Kill()
		_ = child.Wait()
		t.Fatalf("child worker never started the task: %v", err)
	}
	if started[1] != info.ID {
		t.Fatalf("child started %s, want %s", started[1], info.ID)
	}
	if err := child.Process.Kill(); err != nil { // SIGKILL: no shutdown, no ack
		t.Fatalf("kill child: %v", err)
	}
	_ = child.Wait()

	runs := &counter{}
	done := make(chan struct{}, 1)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		runs.add(task.ID)
		if task.Attempt != 1 {
			t.Errorf("recovered run has Attempt %d; a crash is not a failed attempt", task.Attempt)
		}
		done <- struct{}{}
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{VisibilityTimeout: 100 * time.Millisecond})
	recv(t, done, "recovered run")

	eventually(t, "the task to be acknowledged", func() bool { return partsOf(t, e.rdb, "").pending("default") == 0 })
	if n := partsOf(t, e.rdb, "").xlen("default"); n != 0 {
		t.Fatalf("stream still holds %d entries", n)
	}
	recs, _ := e.insp.ListRuns(ctx, "greet", 10)
	if runs.get(info.ID) != 1 || len(recs) != 1 || recs[0].Status != "success" {
		t.Fatalf("runs = %d, records = %+v", runs.get(info.ID), recs)
	}
	// The dead worker's consumer name is pruned once it has been idle for
	// ten visibility timeouts; only the live server remains.
	eventually(t, "the dead consumer to be pruned", func() bool {
		return len(partsOf(t, e.rdb, "").consumers("default")) == 1
	})
}

func TestLongHandlerKeepsItsLeaseAgainstOtherServers(t *testing.T) {
	e := newEnv(t)
	const vt = 200 * time.Millisecond
	var runs atomic.Int32
	done := make(chan struct{}, 2)
	handler := func(ctx context.Context, task *chronos.Task[Greet]) error {
		runs.Add(1)
		select { // five visibility timeouts: only lease renewals keep the task here
		case <-time.After(5 * vt):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		done <- struct{}{}
		return nil
	}
	for range 2 {
		mux := chronos.NewMux()
		chronos.AddHandler(mux, handler)
		e.serve(t, mux, chronos.ServerConfig{VisibilityTimeout: vt})
	}
	e.enqueue(t, Greet{})
	recv(t, done, "long run")
	// Let the other server scan for expired leases a few more times.
	time.Sleep(3 * vt)
	if n := runs.Load(); n != 1 {
		t.Fatalf("runs = %d, want 1", n)
	}
}

func TestTaskThatKeepsKillingItsWorkersGoesToDeadLetters(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	info := e.enqueue(t, Greet{})
	stream := partsOf(t, e.rdb, "").holding("default", info.ID).Stream("default")
	// Play the part of workers that took the task and died, five times:
	// claim it as a consumer that never acks, with a delivery count of 5.
	if err := e.rdb.XGroupCreateMkStream(ctx, stream, rdb.Group, "0").Err(); err != nil {
		t.Fatal(err)
	}
	res, err := e.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: rdb.Group, Consumer: "crashed", Streams: []string{stream, ">"}, Count: 1, Block: -1,
	}).Result()
	if err != nil || len(res[0].Messages) != 1 {
		t.Fatalf("XREADGROUP: %v %v", res, err)
	}
	id := res[0].Messages[0].ID
	if err := e.rdb.Do(ctx, "XCLAIM", stream, rdb.Group, "crashed", 0, id,
		"IDLE", 60000, "RETRYCOUNT", 5, "JUSTID").Err(); err != nil {
		t.Fatal(err)
	}

	var runs atomic.Int32
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		runs.Add(1)
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{VisibilityTimeout: time.Second, MaxDeliveries: 5})
	dead := waitDead(t, e, 1)[0]
	if runs.Load() != 0 || dead.ID != info.ID || !strings.HasPrefix(dead.Reason, chronos.ErrTooManyDeliveries.Error()) {
		t.Fatalf("runs = %d, dead = %+v", runs.Load(), dead)
	}
}

func TestRedisRestartLosesNoQueuedTask(t *testing.T) {
	e := newEnv(t, redistest.Options{AOF: true})
	const n = 50
	want := map[string]bool{}
	for i := range n {
		var opts []chronos.EnqueueOption
		if i%2 == 1 {
			opts = append(opts, chronos.WithProcessIn(time.Duration(i)*time.Millisecond))
		}
		want[e.enqueue(t, Greet{}, opts...).ID] = true
	}
	e.redis.Kill()
	e.redis.Restart()

	runs := &counter{}
	done := make(chan string, 2*n)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		runs.add(task.ID)
		done <- task.ID
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{})
	for range n {
		id := recv(t, done, "queued task after restart")
		if !want[id] {
			t.Fatalf("unexpected task %s", id)
		}
	}
	for id := range want {
		if runs.get(id) != 1 {
			t.Fatalf("task %s ran %d times", id, runs.get(id))
		}
	}
}

func TestServerRecreatesItsConsumerGroupAfterRedisLostEverything(t *testing.T) {
	chronos.SkipOnTestCluster(t, "restarts the one redis-server")
	e := newEnv(t) // no persistence: the restart empties Redis
	done := make(chan string, 10)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		done <- task.Args.Name
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{})
	e.redis.Kill()
	e.redis.Restart()
	eventually(t, "enqueue after restart", func() bool {
		_, err := e.client.Enqueue(context.Background(), Greet{Name: "after"})
		return err == nil
	})
	if got := recv(t, done, "run after restart"); got != "after" {
		t.Fatalf("got %q", got)
	}
}

func TestServerKeepsWorkingAcrossARedisRestart(t *testing.T) {
	e := newEnv(t, redistest.Options{AOF: true})
	done := make(chan string, 10)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		done <- task.Args.Name
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{VisibilityTimeout: time.Second})
	e.enqueue(t, Greet{Name: "before"})
	if got := recv(t, done, "run before restart"); got != "before" {
		t.Fatalf("got %q", got)
	}

	e.redis.Kill()
	e.redis.Restart()
	// The client reconnects on its own; the enqueue may need a retry while
	// the pool notices the old connections are gone.
	eventually(t, "enqueue after restart", func() bool {
		_, err := e.client.Enqueue(context.Background(), Greet{Name: "after"}, chronos.WithProcessIn(10*time.Millisecond))
		return err == nil
	})
	if got := recv(t, done, "run after restart"); got != "after" {
		t.Fatalf("got %q", got)
	}
}

func TestShutdownWaitsForRunningHandlers(t *testing.T) {
	e := newEnv(t)
	started := make(chan struct{})
	release := make(chan struct{})
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		close(started)
		<-release
		return nil
	})
	srv := chronos.NewServer(e.rdb, chronos.ServerConfig{Logger: quietLogger})
	if err := srv.Start(context.Background(), mux); err != nil {
		t.Fatal(err)
	}
	info := e.enqueue(t, Greet{})
	recv(t, started, "handler start")

	stopped := make(chan error, 1)
	go func() { stopped <- srv.Shutdown(context.Background()) }()
	select {
	case err := <-stopped:
		t.Fatalf("Shutdown returned %v while a handler was running", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := recv(t, stopped, "Shutdown"); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	recs, _ := e.insp.ListRuns(context.Background(), "greet", 1)
	if len(recs) != 1 || recs[0].TaskID != info.ID || recs[0].Status != "success" {
		t.Fatalf("records = %+v", recs)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
}

func TestShutdownThatTimesOutLeavesTheTaskToAnotherServer(t *testing.T) {
	e := newEnv(t)
	cause := make(chan error, 1)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		<-ctx.Done()
		cause <- context.Cause(ctx)
		select {} // a handler that ignores cancellation
	})
	const vt = 300 * time.Millisecond
	srv := chronos.NewServer(e.rdb, chronos.ServerConfig{Logger: quietLogger, VisibilityTimeout: vt})
	if err := srv.Start(context.Background(), mux); err != nil {
		t.Fatal(err)
	}
	info := e.enqueue(t, Greet{})
	eventually(t, "the task to start", func() bool { return partsOf(t, e.rdb, "").pending("default") == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
	}
	if c := recv(t, cause, "handler cancellation"); !errors.Is(c, chronos.ErrServerShutdown) {
		t.Fatalf("cause = %v", c)
	}

	done := make(chan string, 1)
	mux2 := chronos.NewMux()
	chronos.AddHandler(mux2, func(ctx context.Context, task *chronos.Task[Greet]) error {
		done <- task.ID
		return nil
	})
	e.serve(t, mux2, chronos.ServerConfig{VisibilityTimeout: vt})
	if id := recv(t, done, "recovered run"); id != info.ID {
		t.Fatalf("recovered %s, want %s", id, info.ID)
	}
}

func TestHandlerIsCancelledWhenAnotherWorkerTookItsTask(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cause := make(chan error, 1)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		<-ctx.Done()
		select {
		case cause <- context.Cause(ctx):
		default: // a later run, after this server recovered the thief's task in turn
		}
		return context.Cause(ctx)
	})
	e.serve(t, mux, chronos.ServerConfig{VisibilityTimeout: 150 * time.Millisecond})
	k := partsOf(t, e.rdb, "").holding("default", e.enqueue(t, Greet{}).ID)
	var id string
	eventually(t, "the task to start", func() bool {
		p, _ := e.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: k.Stream("default"), Group: rdb.Group, Start: "-", End: "+", Count: 1}).Result()
		if len(p) == 1 {
			id = p[0].ID
		}
		return id != ""
	})
	// Another worker takes the task over, as if this server had been cut
	// off from Redis for longer than the visibility timeout.
	if err := e.rdb.XClaimJustID(ctx, &redis.XClaimArgs{
		Stream: k.Stream("default"), Group: rdb.Group, Consumer: "thief", Messages: []string{id},
	}).Err(); err != nil {
		t.Fatal(err)
	}
	if c := recv(t, cause, "handler cancellation"); !errors.Is(c, chronos.ErrLeaseLost) {
		t.Fatalf("cause = %v, want ErrLeaseLost", c)
	}
	// The outcome is the thief's to record: the server that lost the lease
	// neither acknowledged, retried nor recorded the task.
	if n := e.rdb.XLen(ctx, k.Stream("default")).Val(); n != 1 {
		t.Fatalf("stream length = %d; the entry was acknowledged", n)
	}
	if n := partsOf(t, e.rdb, "").delayed("default"); n != 0 {
		t.Fatalf("a retry was scheduled by the server that lost the lease")
	}
	if n := partsOf(t, e.rdb, "").runs("greet"); n != 0 {
		t.Fatalf("a run record was written by the server that lost the lease")
	}
}

func TestTaskRunningAcrossARedisRestartIsRecordedOnce(t *testing.T) {
	e := newEnv(t, redistest.Options{AOF: true})
	runs := &counter{}
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		runs.add(task.ID)
		started <- struct{}{}
		<-release
		return nil
	})
	e.serve(t, mux, chronos.ServerConfig{VisibilityTimeout: 2 * time.Second})
	info := e.enqueue(t, Greet{})
	recv(t, started, "handler start")

	e.redis.Kill()
	e.redis.Restart()
	close(release) // the outcome is written once Redis answers again

	eventually(t, "the run record", func() bool { return partsOf(t, e.rdb, "").runs("greet") == 1 })
	eventually(t, "the entry to be acknowledged", func() bool { return partsOf(t, e.rdb, "").xlen("default") == 0 })
	if n := runs.get(info.ID); n != 1 {
		t.Fatalf("runs = %d, want 1", n)
	}
}

func TestHandlerInterruptedByShutdownIsHandedBackWithoutSpendingAnAttempt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const vt = time.Minute // recovery by lease expiry would take far longer than the test
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		<-ctx.Done()
		return context.Cause(ctx) // a well-behaved handler stops when told
	})
	srv := chronos.NewServer(e.rdb, chronos.ServerConfig{Logger: quietLogger, VisibilityTimeout: vt})
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	info := e.enqueue(t, Greet{})
	stream := partsOf(t, e.rdb, "").holding("default", info.ID).Stream("default")
	pendingIdle := func() time.Duration {
		p, _ := e.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: rdb.Group, Start: "-", End: "+", Count: 1}).Result()
		if len(p) != 1 {
			return -1
		}
		return p[0].Idle
	}
	eventually(t, "the task to start", func() bool { return pendingIdle() >= 0 })
	sctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v", err)
	}
	eventually(t, "the task to be handed back", func() bool { return pendingIdle() >= vt })

	got := make(chan *chronos.Task[Greet], 1)
	mux2 := chronos.NewMux()
	chronos.AddHandler(mux2, func(ctx context.Context, task *chronos.Task[Greet]) error {
		got <- task
		return nil
	})
	e.serve(t, mux2, chronos.ServerConfig{VisibilityTimeout: vt})
	task := recv(t, got, "the handed-back task")
	if task.ID != info.ID || task.Attempt != 1 {
		t.Fatalf("task %s attempt %d, want %s attempt 1", task.ID, task.Attempt, info.ID)
	}
	if n := partsOf(t, e.rdb, "").delayed("default"); n != 0 {
		t.Fatal("the interruption was scheduled as a retry")
	}
}
