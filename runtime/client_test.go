package chronos_test

import (
	"context"
	"sync"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// Concurrent Enqueue calls on one Client share round trips, but each keeps
// its own result: of many callers racing with one dedup key exactly one
// enqueues, and every other one is told the winner's ID. After Close the
// Client still enqueues.
func TestConcurrentEnqueuesKeepTheirOwnResults(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const n = 100
	infos := make([]*chronos.TaskInfo, 2*n)
	var wg sync.WaitGroup
	for i := range 2 * n {
		wg.Go(func() {
			var opts []chronos.EnqueueOption
			if i%2 == 0 {
				opts = append(opts, chronos.WithDedupKey("once", time.Minute))
			}
			info, err := e.client.Enqueue(ctx, Greet{Name: "x"}, opts...)
			if err != nil {
				t.Error(err)
				return
			}
			infos[i] = info
		})
	}
	wg.Wait()
	var winners []string
	ids := map[string]bool{}
	for i, info := range infos {
		if info == nil {
			t.FailNow()
		}
		if i%2 == 1 {
			if info.Duplicate || ids[info.ID] {
				t.Errorf("plain enqueue %d: Duplicate %v, ID %s seen before: %v", i, info.Duplicate, info.ID, ids[info.ID])
			}
			ids[info.ID] = true
			continue
		}
		if !info.Duplicate {
			winners = append(winners, info.ID)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d enqueues claimed the dedup key, want 1", len(winners))
	}
	for i := 0; i < 2*n; i += 2 {
		if infos[i].ID != winners[0] {
			t.Errorf("dedup enqueue %d reports task %s, want the winner %s", i, infos[i].ID, winners[0])
		}
	}
	if qi, err := e.insp.QueueInfo(ctx, chronos.DefaultQueue); err != nil || qi.Ready != n+1 {
		t.Errorf("queue info %+v, %v; want %d tasks ready", qi, err, n+1)
	}
	if err := e.client.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Enqueue(ctx, Greet{Name: "after close"}); err != nil {
		t.Errorf("enqueue after Close: %v", err)
	}
}
