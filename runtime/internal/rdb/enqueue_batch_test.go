package rdb

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
)

// tripCounter counts round trips: each command sent alone and each
// pipeline is one.
type tripCounter struct{ n atomic.Int64 }

func (c *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n.Add(1); return next(ctx, cmd) }
}
func (c *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.n.Add(1); return next(ctx, cmds) }
}

func item(r *RDB, i int, now time.Time) *EnqueueItem {
	id := fmt.Sprintf("t%03d", i)
	return &EnqueueItem{To: r, Queue: "q", Msg: []byte(`{"id":"` + id + `"}`), ID: id, Now: now}
}

// Concurrent enqueues share round trips, and each gets its own result:
// plain ones, delayed ones and ones with dedup keys, where exactly one of
// the callers sharing a key claims it, as if they had run one by one. The
// script cache is flushed between rounds, as a restart would, so pipelined
// script calls meet NOSCRIPT and are sent again without being doubled.
func TestEnqueueBatcherGivesEachCallItsOwnResult(t *testing.T) {
	s := redistest.Start(t)
	c := s.NewClient(nil)
	trips := new(tripCounter)
	c.AddHook(trips)
	r := New(c, "")
	ctx := context.Background()
	b := NewEnqueueBatcher(r.C, nil)
	defer b.Close()

	const n = 300
	for round := range 3 {
		if err := c.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		trips.n.Store(0)
		now := time.Now()
		items := make([]*EnqueueItem, n)
		var wg sync.WaitGroup
		for i := range n {
			it := item(r, i, now)
			switch i % 3 {
			case 1:
				it.Due = now.Add(time.Hour)
			case 2:
				it.DedupKey, it.DedupTTL = fmt.Sprintf("key%d", i%10), time.Minute
			}
			items[i] = it
			wg.Go(func() {
				if err := b.Enqueue(ctx, it); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		holders := map[string]string{} // dedup key → the ID that holds it
		for i, it := range items {
			if it.Err != nil {
				t.Fatalf("round %d: item %d: %v", round, i, it.Err)
			}
			if it.DedupKey == "" {
				if it.GotID != it.ID || it.Duplicate {
					t.Errorf("round %d: item %d: GotID %q, Duplicate %v", round, i, it.GotID, it.Duplicate)
				}
				continue
			}
			if !it.Duplicate {
				if it.GotID != it.ID {
					t.Errorf("round %d: item %d claimed its key but got ID %q", round, i, it.GotID)
				}
				if h, ok := holders[it.DedupKey]; ok && h != it.ID {
					t.Errorf("round %d: key %s claimed by both %s and %s", round, it.DedupKey, h, it.ID)
				}
				holders[it.DedupKey] = it.ID
			}
		}
		for _, it := range items {
			if it.Duplicate && it.GotID != holders[it.DedupKey] {
				t.Errorf("round %d: duplicate %s reports holder %q, want %q", round, it.ID, it.GotID, holders[it.DedupKey])
			}
		}
		if len(holders) != 10 {
			t.Errorf("round %d: %d dedup keys claimed, want 10", round, len(holders))
		}
		ready, _ := c.XLen(ctx, r.K.Stream("q")).Result()
		delayed, _ := c.ZCard(ctx, r.K.Delayed("q")).Result()
		if ready != n/3+10 || delayed != n/3 {
			t.Errorf("round %d: %d ready and %d delayed, want %d and %d", round, ready, delayed, n/3+10, n/3)
		}
		if got := trips.n.Load(); got >= n/2 {
			t.Errorf("round %d: %d round trips for %d concurrent enqueues", round, got, n)
		} else {
			t.Logf("round %d: %d round trips for %d concurrent enqueues", round, got, n)
		}
	}
}

// A caller whose context ends while it waits for a shared round trip
// returns at once, and its task is not enqueued.
func TestEnqueueBatcherCancelledWhileWaiting(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client()
	r := New(c, "")
	ctx := context.Background()
	b := NewEnqueueBatcher(r.C, nil)
	defer b.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	// Fill every in-flight slot with an enqueue that Redis holds back.
	admin := s.NewClient(nil)
	if err := admin.Do(ctx, "CLIENT", "PAUSE", "700", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var wg sync.WaitGroup
	for i := range enqueueSenders {
		wg.Go(func() {
			if err := b.Enqueue(ctx, item(r, i, now)); err != nil {
				t.Error(err)
			}
		})
	}
	waitFor(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.inflight == enqueueSenders
	})

	cctx, cancel := context.WithTimeoutCause(ctx, 50*time.Millisecond, errors.New("caller gave up"))
	defer cancel()
	start := time.Now()
	err := b.Enqueue(cctx, item(r, 99, now))
	if err == nil || err.Error() != "caller gave up" {
		t.Errorf("cancelled enqueue: error %v, want the context's cause", err)
	}
	if d := time.Since(start); d > 400*time.Millisecond {
		t.Errorf("cancelled enqueue returned after %v, not when its context ended", d)
	}
	wg.Wait()
	ids, _ := c.XRange(ctx, r.K.Stream("q"), "-", "+").Result()
	if len(ids) != enqueueSenders {
		t.Errorf("%d tasks enqueued, want the %d that were not cancelled", len(ids), enqueueSenders)
	}
	for _, e := range ids {
		if strings.Contains(fmt.Sprint(e.Values), "t099") {
			t.Error("the cancelled task was enqueued")
		}
	}
}

// A lone caller sends at once, on its own goroutine; sender goroutines
// exist only while calls wait, and Close leaves none behind. A closed
// batcher still enqueues, one call per round trip.
func TestEnqueueBatcherLeavesNoGoroutines(t *testing.T) {
	s := redistest.Start(t)
	r := New(s.Client(), "")
	ctx := context.Background()
	b := NewEnqueueBatcher(r.C, nil)
	for i := range 20 {
		if err := b.Enqueue(ctx, item(r, i, time.Now())); err != nil {
			t.Fatal(err)
		}
		if n := senders(); n != 0 {
			t.Fatalf("%d sender goroutines after a lone enqueue", n)
		}
	}
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			if err := b.Enqueue(ctx, item(r, 100+i, time.Now())); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	b.Close()
	if n := senders(); n != 0 {
		t.Errorf("%d sender goroutines after Close", n)
	}
	it := item(r, 999, time.Now())
	if err := b.Enqueue(ctx, it); err != nil || it.Err != nil || it.GotID != it.ID {
		t.Errorf("enqueue after Close: %v, %v, %q", err, it.Err, it.GotID)
	}
	if n, _ := s.Client().XLen(ctx, r.K.Stream("q")).Result(); n != 221 {
		t.Errorf("%d tasks in the stream, want 221", n)
	}
}

// senders counts the goroutines running EnqueueBatcher.send.
func senders() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "(*EnqueueBatcher).send(")
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
