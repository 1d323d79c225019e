package chronos_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

type flaky struct {
	Fail bool `json:"fail"`
}

func (flaky) Kind() string { return "flaky" }

// Every script declares its keys and a namespace lives in one slot, so the
// whole life of a task works on Redis Cluster: enqueue (immediate, delayed,
// deduplicated), fetch, retry, dead letters, requeue, run records. Two
// namespaces run side by side, in different slots.
func TestTheQueueWorksOnRedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	redistest.Parallel(t)
	rc := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3}).Client()
	ctx := context.Background()
	for _, ns := range []string{"chronos", "billing"} {
		done := make(chan string, 10)
		mux := chronos.NewMux()
		chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[flaky]) error {
			if task.Args.Fail && task.Attempt == 1 {
				return errors.New("first run fails")
			}
			if task.Args.Fail && task.Attempt > 2 {
				return chronos.ErrSkipRetry
			}
			done <- task.ID
			return nil
		}, chronos.WithBackoff(chronos.ConstantBackoff(time.Millisecond)))
		srv := chronos.NewServer(rc, chronos.ServerConfig{Namespace: ns, Logger: quietLogger, VisibilityTimeout: 300 * time.Millisecond, SuccessRunInterval: -1})
		if err := srv.Start(ctx, mux); err != nil {
			t.Fatalf("%s: Start: %v", ns, err)
		}
		client := chronos.NewClient(rc, chronos.WithNamespace(ns))
		insp := chronos.NewInspector(rc, chronos.WithNamespace(ns))

		now, _ := client.Enqueue(ctx, flaky{})
		later, _ := client.Enqueue(ctx, flaky{}, chronos.WithProcessIn(20*time.Millisecond), chronos.WithDedupKey("once", time.Minute))
		dup, err := client.Enqueue(ctx, flaky{}, chronos.WithDedupKey("once", time.Minute))
		if err != nil || !dup.Duplicate || dup.ID != later.ID {
			t.Fatalf("%s: duplicate enqueue = %+v, %v", ns, dup, err)
		}
		retried, err := client.Enqueue(ctx, flaky{Fail: true}, chronos.WithMaxRetry(5))
		if err != nil {
			t.Fatalf("%s: Enqueue: %v", ns, err)
		}
		got := map[string]bool{}
		for range 3 {
			got[recv(t, done, ns+" task")] = true
		}
		if !got[now.ID] || !got[later.ID] || !got[retried.ID] {
			t.Fatalf("%s: ran %v", ns, got)
		}

		dead, err := client.Enqueue(ctx, flaky{Fail: true}, chronos.WithMaxRetry(0))
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, ns+" dead letter", func() bool {
			d, err := insp.GetDead(ctx, dead.ID)
			return err == nil && d.Reason == "first run fails"
		})
		if _, err := insp.RequeueDead(ctx, dead.ID); err != nil {
			t.Fatalf("%s: RequeueDead: %v", ns, err)
		}
		// Requeued with a fresh budget, it runs as attempt 1 again, fails,
		// and MaxRetry 0 sends it back.
		eventually(t, ns+" dead letter again", func() bool {
			n, err := insp.CountDead(ctx)
			return err == nil && n == 1
		})
		runs, err := insp.ListRuns(ctx, "flaky", 100)
		// now, later, retried (retry + success), dead, requeued-and-dead.
		if err != nil || len(runs) != 6 {
			t.Fatalf("%s: ListRuns = %d records, %v", ns, len(runs), err)
		}
		if err := srv.Shutdown(ctx); err != nil {
			t.Fatalf("%s: Shutdown: %v", ns, err)
		}
	}
}
