package chronos

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// When a Scheduler of the process shuts down, the leader deletes its
// isolated queue. A Server of the process that served the queue stops
// serving it, quietly, instead of recreating it for its consumer group:
// a recreated queue would be fired into by nobody and cleaned up by nobody.
func TestServerStopsServingTheIsolatedQueueOfAStoppedScheduler(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	reg := func(s *Scheduler) {
		if err := RegisterInterval(s, time.Hour, tick{}, WithScheduleID("local"), WithIsolated(true)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := SchedulerConfig{LeaderTTL: 300 * time.Millisecond}
	gone := e.start(e.scheduler("stop-a", cfg, reg))
	stays := e.start(e.scheduler("stop-b", cfg, reg))
	stream := rdb.NewKeys("").Stream(gone.IsolatedQueue())

	var logs logBuffer
	srv := NewServer(e.rdb, ServerConfig{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := srv.Start(ctx, NewMux()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(ctx)

	if err := gone.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, stays)
	waitUntil(t, "the server to stop serving "+gone.IsolatedQueue(), func() bool {
		return strings.Contains(logs.String(), "stopped serving the isolated queues of stopped schedulers")
	})
	if e.rdb.Exists(ctx, stream).Val() != 0 {
		t.Fatalf("%s exists again after the leader deleted it", stream)
	}
	if strings.Contains(logs.String(), "consumer group missing") {
		t.Fatalf("the server warned about the deleted queue:\n%s", logs.String())
	}
	// The queue of the scheduler that still runs is still served.
	srv.queuesMu.RLock()
	defer srv.queuesMu.RUnlock()
	if !strings.Contains(strings.Join(srv.queues, " "), stays.IsolatedQueue()) {
		t.Fatalf("served queues %v lost %s", srv.queues, stays.IsolatedQueue())
	}
}
