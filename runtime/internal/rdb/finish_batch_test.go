package rdb

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

// pending adds n entries to queue q and reads them as consumer, returning
// their entry IDs: deliveries waiting for their outcome.
func pending(t *testing.T, r *RDB, q, consumer string, n int) []string {
	t.Helper()
	ctx := context.Background()
	if err := r.EnsureGroup(ctx, q); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r.C.XAdd(ctx, &redis.XAddArgs{Stream: r.K.Stream(q), Values: []any{"m", fmt.Sprintf(`{"id":"t%d"}`, i)}})
	}
	entries, _, err := r.Fetch(ctx, consumer, []string{q}, n)
	if err != nil || len(entries) != n {
		t.Fatalf("Fetch = %d entries, %v", len(entries), err)
	}
	ids := make([]string, n)
	for i, e := range entries {
		ids[i] = e.ID
	}
	return ids
}

// Outcomes finished concurrently through the batcher each get their own
// result, exactly as one by one: the first finish of a delivery records it,
// a second one finds it done, and one by another consumer changes nothing.
// The script cache is flushed between rounds, as a restart would.
func TestFinishBatcherGivesEachOutcomeItsOwnResult(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	r := New(s.Client(), "")
	ctx := context.Background()
	b := NewFinishBatcher(single(r))
	defer b.Close()

	const n = 200
	ids := pending(t, r, "q", "w", n)
	finishAll := func(consumer string) []FinishResult {
		res := make([]FinishResult, n)
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() {
				var err error
				res[i], err = b.Finish(ctx, consumer, &Finish{Queue: "q", EntryID: id, Outcome: Done, TaskID: fmt.Sprintf("t%d", i), Kind: "k"})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		return res
	}
	r.C.ScriptFlush(ctx)
	for i, res := range finishAll("other") {
		if res != LeaseLost {
			t.Fatalf("finish %d by a consumer that does not hold it = %d", i, res)
		}
	}
	r.C.ScriptFlush(ctx)
	for i, res := range finishAll("w") {
		if res != Finished {
			t.Fatalf("first finish %d = %d", i, res)
		}
	}
	for i, res := range finishAll("w") {
		if res != AlreadyDone {
			t.Fatalf("second finish %d = %d", i, res)
		}
	}
	if left := r.C.XLen(ctx, r.K.Stream("q")).Val(); left != 0 {
		t.Fatalf("%d entries left in the stream", left)
	}

	// After Close, calls go straight to Redis.
	b.Close()
	late := pending(t, r, "q", "w", 1)[0]
	if res, err := b.Finish(ctx, "w", &Finish{Queue: "q", EntryID: late, Outcome: Done, TaskID: "late", Kind: "k"}); err != nil || res != Finished {
		t.Fatalf("finish after Close = %d, %v", res, err)
	}
}

// A batch sent to a Redis whose script cache is empty (restarted, or a
// promoted replica) loads the script and sends the batch again.
func TestFinishBatchReloadsTheScript(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	r := New(s.Client(), "")
	ctx := context.Background()
	ids := pending(t, r, "q", "w", 3)
	r.C.ScriptFlush(ctx)
	var batch []*finishReq
	for i, id := range ids {
		batch = append(batch, &finishReq{consumer: "w", f: &Finish{Queue: "q", EntryID: id, Outcome: Done, TaskID: fmt.Sprintf("t%d", i), Kind: "k"}})
	}
	single(r).finishBatch(ctx, batch)
	for i, req := range batch {
		if req.err != nil || req.res != Finished {
			t.Fatalf("finish %d = %d, %v", i, req.res, req.err)
		}
	}
}

// One outcome of a batch that fails in Redis fails alone: the others of
// the same script call are recorded, with their run records, as if each
// had been a call of its own. Retry, dead and done outcomes mix freely.
func TestFinishBatchIsolatesAFailingOutcome(t *testing.T) {
	s := redistest.Start(t)
	r := New(s.Client(), "")
	ctx := context.Background()
	ids := pending(t, r, "q", "w", 4)
	if err := r.C.Set(ctx, r.K.Runs("broken"), "not a stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	run := &RunRecord{TaskID: "t", Queue: "q", Status: RunSuccess, Attempt: 1, Start: time.Now()}
	now := time.Now()
	batch := []*finishReq{
		{consumer: "w", f: &Finish{Queue: "q", EntryID: ids[0], Outcome: Done, TaskID: "t0", Kind: "k", RunsCap: 10, Run: run}},
		{consumer: "w", f: &Finish{Queue: "q", EntryID: ids[1], Outcome: Done, TaskID: "t1", Kind: "broken", RunsCap: 10, Run: run}},
		{consumer: "w", f: &Finish{Queue: "q", EntryID: ids[2], Outcome: Retry, TaskID: "t2", Kind: "k", Msg: []byte(`{"id":"t2"}`), At: now.Add(time.Hour), RunsCap: 10, Run: run}},
		{consumer: "w", f: &Finish{Queue: "q", EntryID: ids[3], Outcome: Dead, TaskID: "t3", Kind: "k", Msg: []byte(`{"id":"t3"}`), At: now, DeadCap: 10, RunsCap: 10, Run: run}},
	}
	single(r).finishBatch(ctx, batch)
	for i, req := range batch {
		if i == 1 {
			if req.err == nil || !strings.Contains(req.err.Error(), "WRONGTYPE") {
				t.Errorf("finish onto a broken runs key: %d, %v; want a WRONGTYPE error", req.res, req.err)
			}
			continue
		}
		if req.err != nil || req.res != Finished {
			t.Errorf("finish %d = %d, %v", i, req.res, req.err)
		}
	}
	if n := r.C.XLen(ctx, r.K.Runs("k")).Val(); n != 3 {
		t.Errorf("%d run records of kind k, want 3", n)
	}
	if n := r.C.ZCard(ctx, r.K.Delayed("q")).Val(); n != 1 {
		t.Errorf("%d retries waiting, want 1", n)
	}
	if n := r.C.HLen(ctx, r.K.Dead()).Val(); n != 1 {
		t.Errorf("%d dead letters, want 1", n)
	}
}

// The acknowledgements of plain successes are collected and sent once per
// batch; an entry finished twice in one batch is still finished once.
func TestFinishBatchFinishesAnEntryOnce(t *testing.T) {
	s := redistest.Start(t)
	r := New(s.Client(), "")
	ctx := context.Background()
	ids := pending(t, r, "q", "w", 2)
	var batch []*finishReq
	for _, id := range []string{ids[0], ids[1], ids[0]} {
		batch = append(batch, &finishReq{consumer: "w", f: &Finish{Queue: "q", EntryID: id, Outcome: Done, TaskID: id, Kind: "k"}})
	}
	batch = append(batch, &finishReq{consumer: "w", f: &Finish{Queue: "q", EntryID: ids[1], Outcome: Retry, TaskID: "t", Kind: "k", Msg: []byte(`{}`), At: time.Now()}})
	single(r).finishBatch(ctx, batch)
	for i, want := range []FinishResult{Finished, Finished, AlreadyDone, AlreadyDone} {
		if batch[i].err != nil || batch[i].res != want {
			t.Errorf("finish %d = %d, %v; want %d", i, batch[i].res, batch[i].err, want)
		}
	}
	if n := r.C.XLen(ctx, r.K.Stream("q")).Val(); n != 0 {
		t.Errorf("%d entries left in the stream", n)
	}
	if n := r.C.ZCard(ctx, r.K.Delayed("q")).Val(); n != 0 {
		t.Errorf("a finished entry was retried: %d delayed", n)
	}
	if p := r.C.XPending(ctx, r.K.Stream("q"), Group).Val(); p.Count != 0 {
		t.Errorf("%d entries still pending", p.Count)
	}
}

// single is the Store of r alone: a layout-1 namespace.
func single(r *RDB) *Store {
	return &Store{C: r.C, Layout: keyspace.Single(""), Parts: []*RDB{r}}
}
