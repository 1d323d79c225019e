package chronos_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	chronos "github.com/chronos-go/chronos/runtime"
)

// forwardCalls counts the forwarder's script calls (an EVALSHA whose first
// key is a delayed set) a client sends.
type forwardCalls struct{ n atomic.Int64 }

func (h *forwardCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *forwardCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		h.count(c)
		return next(ctx, c)
	}
}

func (h *forwardCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cs []redis.Cmder) error {
		for _, c := range cs {
			h.count(c)
		}
		return next(ctx, cs)
	}
}

func (h *forwardCalls) count(c redis.Cmder) {
	if a := c.Args(); len(a) > 3 && strings.EqualFold(c.Name(), "evalsha") {
		if k, _ := a[3].(string); strings.Contains(k, ":delayed:") {
			h.n.Add(1)
		}
	}
}

// Delayed tasks falling due one after another, in one partition or
// another, are each forwarded by a call to their own partition: the
// forwarder does not forward every partition (12 calls) at every due time.
// Each runs once due, without a second's wait.
func TestTheForwarderCallsOnlyThePartitionOfATaskThatIsDue(t *testing.T) {
	e := newEnv(t)
	hook := &forwardCalls{}
	rc := e.redis.NewClient()
	rc.AddHook(hook)
	const n, gap = 40, 10 * time.Millisecond
	type run struct {
		name string
		at   time.Time
	}
	ran := make(chan run, n)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		ran <- run{task.Args.Name, time.Now()}
		return nil
	})
	srv := chronos.NewServer(rc, chronos.ServerConfig{Logger: quietLogger})
	if err := srv.Start(context.Background(), mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	time.Sleep(100 * time.Millisecond) // past the first pass, which forwards every partition
	first := time.Now().Add(300 * time.Millisecond)
	due := map[string]time.Time{}
	for i := range n {
		at := first.Add(time.Duration(i) * gap)
		name := strconv.Itoa(i)
		due[name] = at
		e.enqueue(t, Greet{Name: name}, chronos.WithProcessAt(at))
	}
	calls0 := hook.n.Load()
	start := time.Now()
	for range n {
		r := recv(t, ran, "a delayed task")
		if r.at.Before(due[r.name].Truncate(time.Millisecond)) { // due times are kept in ms
			t.Fatalf("task %s ran %v before it was due", r.name, due[r.name].Sub(r.at))
		}
		if late := r.at.Sub(due[r.name]); late > 500*time.Millisecond {
			t.Errorf("task %s ran %v after it was due", r.name, late)
		}
	}
	calls := hook.n.Load() - calls0
	// Each due time, each wake-up and each full pass of a second: a bound
	// well below the 12 calls per due time of forwarding every partition.
	limit := int64(2*n + 12*(int(time.Since(start)/time.Second)+2))
	t.Logf("%d forward calls for %d delayed tasks over %v (limit %d)", calls, n, time.Since(start).Round(time.Millisecond), limit)
	if calls > limit {
		t.Fatalf("%d forward calls for %d delayed tasks, more than %d", calls, n, limit)
	}
}
