package rdb

import (
	"context"
	"slices"
	"sync"

	"github.com/redis/go-redis/v9"
)

// EnqueueBatcher group-commits enqueues: concurrent calls share pipelines,
// as FinishBatcher does for outcomes. A call that finds no other call in
// flight sends its own enqueue at once, on its own context: a lone caller
// waits for nothing and pays for nothing. Calls that arrive while
// enqueueSenders round trips are in flight wait; when a round trip ends,
// a sender goroutine takes every waiting call and sends them as one
// pipeline. Under load, a round trip per task becomes one per batch; no
// timer is involved, since batches form while earlier ones are in flight.
//
// Calls for different partitions share pipelines too: a cluster client
// splits a pipeline into one per master and sends them in parallel.
//
// Each enqueue is still its own command (an XADD or the enqueue script)
// with its own result, its own dedup key and its own error: sharing a
// pipeline makes nothing atomic and nothing dependent on another call.
//
// Sender goroutines run only while calls wait and exit as soon as none
// does, so a batcher that is never closed leaves nothing behind. Close
// waits for them and makes later calls send on their own.
type EnqueueBatcher struct {
	c redis.UniversalClient
	w *Replication // nil: no waiting for replicas

	mu       sync.Mutex
	idle     sync.Cond // signalled when inflight drops; Close waits on it
	waiting  []*enqueueReq
	inflight int // round trips being sent: direct calls and senders
	closed   bool
}

// enqueueSenders is how many enqueue round trips may be in flight at once;
// it is also how many callers may send alone before others start to wait.
// With 8 producers, 2 gave batches of about four and 75-80k enqueues/s,
// 4 gave smaller batches for the same or a lower rate; with 50 producers 2
// and 4 both reached about 200k/s, against 150-165k/s for 1 (make
// bench-compare, -phase enqueue, two rounds each on the 2-core VM).
const enqueueSenders = 2

// maxEnqueueBatch bounds how many enqueues share one round trip.
const maxEnqueueBatch = 100

// enqueueReq is one waiting call. Its item is written by the sender and
// read by the caller only after done is closed.
type enqueueReq struct {
	it   EnqueueItem
	done chan struct{}
}

// NewEnqueueBatcher returns a batcher over c whose round trips wait for
// w's replicas (nil: none; EnqueueItemsReplicated). It starts no
// goroutine.
func NewEnqueueBatcher(c redis.UniversalClient, w *Replication) *EnqueueBatcher {
	b := &EnqueueBatcher{c: c, w: w}
	b.idle.L = &b.mu
	return b
}

// Enqueue enqueues it into its partition (it.To, which must be set) as
// EnqueueItems would on its own, storing the result (GotID, Duplicate,
// Err) in it. It returns an error only when ctx
// ended first: if the call was still waiting, nothing was sent; if its
// batch was already on its way, the task may have been enqueued, as with
// any Redis call cancelled in flight.
func (b *EnqueueBatcher) Enqueue(ctx context.Context, it *EnqueueItem) error {
	b.mu.Lock()
	if b.closed || (b.inflight < enqueueSenders && len(b.waiting) == 0) {
		direct := !b.closed
		if direct {
			b.inflight++
		}
		b.mu.Unlock()
		err := EnqueueItemsReplicated(ctx, b.c, []*EnqueueItem{it}, b.w)
		if direct {
			b.done()
		}
		return err
	}
	req := &enqueueReq{it: *it, done: make(chan struct{})}
	b.waiting = append(b.waiting, req)
	if b.inflight < enqueueSenders { // calls are waiting but a slot is free
		b.inflight++
		go b.send()
	}
	b.mu.Unlock()
	select {
	case <-req.done:
		it.GotID, it.Duplicate, it.Err = req.it.GotID, req.it.Duplicate, req.it.Err
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	if i := slices.Index(b.waiting, req); i >= 0 {
		b.waiting = slices.Delete(b.waiting, i, i+1)
	}
	b.mu.Unlock()
	return context.Cause(ctx)
}

// done ends a direct call's round trip: its slot goes to a sender if calls
// are waiting, and is given up otherwise.
func (b *EnqueueBatcher) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiting) > 0 {
		go b.send()
		return
	}
	b.inflight--
	b.idle.Broadcast()
}

// send sends the waiting calls, a batch per round trip, until none is
// left; it holds one of the in-flight slots meanwhile.
func (b *EnqueueBatcher) send() {
	items := make([]*EnqueueItem, 0, maxEnqueueBatch)
	for {
		b.mu.Lock()
		n := min(len(b.waiting), maxEnqueueBatch)
		if n == 0 {
			b.inflight--
			b.idle.Broadcast()
			b.mu.Unlock()
			return
		}
		batch := slices.Clone(b.waiting[:n])
		b.waiting = slices.Delete(b.waiting, 0, n)
		b.mu.Unlock()

		items = items[:0]
		for _, req := range batch {
			items = append(items, &req.it)
		}
		// No caller's context: the batch carries many callers' enqueues,
		// and each caller stops waiting on its own context. The client's
		// timeouts bound the round trip.
		if err := EnqueueItemsReplicated(context.Background(), b.c, items, b.w); err != nil {
			for _, it := range items {
				if it.Err == nil && it.GotID == "" {
					it.Err = err
				}
			}
		}
		for _, req := range batch {
			close(req.done)
		}
	}
}

// Close waits for the round trips in flight and makes later calls send
// alone. It does not close the Redis client.
func (b *EnqueueBatcher) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for b.inflight > 0 || len(b.waiting) > 0 {
		b.idle.Wait()
	}
}
