package chronos

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// maxBatch bounds the entries taken in one fetch.
const maxBatch = 100

// fetchLoop takes tasks while the server runs: whenever a worker slot is
// free it reclaims expired leases (every half visibility timeout), else
// reads new entries without blocking in queue order, else blocks on all
// queues until an entry arrives. It never sleeps on a fixed tick, so a task
// enqueued to an idle server starts within one round trip. Rounds read the
// queues in every partition (docs/queue.md, "Partitions": one call over all
// of them on a single server, some partitions at a time on a cluster),
// each round starting at the partition after the previous round's start.
func (s *Server) fetchLoop() {
	defer s.loops.Done()
	defer s.blocker.Close()
	f := newFetcher(s)
	for {
		n, ok := s.acquireSlots()
		if !ok {
			return
		}
		entries, err := f.take(n)
		if !s.dispatch(entries, n) || !f.pause(err) {
			return
		}
	}
}

// fetcher is the state of the fetch loop between fetches.
type fetcher struct {
	s            *Server
	ctx          context.Context
	start        int                      // the partition read first this round
	cursors      map[rdb.PartQueue]string // where the last reclaim scan of each queue's partition stopped
	reclaimEvery time.Duration
	block        time.Duration // the longest blocking read
	pruneAfter   time.Duration
	lastReclaim  time.Time // zero: reclaim at once, recovering the work of crashed servers
	lastPrune    time.Time
	paused       map[rdb.PartQueue]bool // as of the last fetch
	errDelay     time.Duration
}

func newFetcher(s *Server) *fetcher {
	reclaimEvery := s.cfg.VisibilityTimeout / 2
	return &fetcher{
		s: s, ctx: s.bgCtx, cursors: make(map[rdb.PartQueue]string),
		reclaimEvery: reclaimEvery, block: min(time.Second, reclaimEvery), pruneAfter: 10 * s.cfg.VisibilityTimeout,
		paused: map[rdb.PartQueue]bool{},
	}
}

// acquireSlots waits for a free worker slot and takes every other free
// one, up to maxBatch. It reports false once Shutdown has begun.
func (s *Server) acquireSlots() (int, bool) {
	select {
	case <-s.stop:
		return 0, false
	case s.slots <- struct{}{}:
	}
	select {
	case <-s.stop: // both were ready and the slot won
		<-s.slots
		return 0, false
	default:
	}
	n := 1
	for n < maxBatch {
		select {
		case s.slots <- struct{}{}:
			n++
		default:
			return n, true
		}
	}
	return n, true
}

// take returns up to n entries: expired leases first when a reclaim is
// due, else new entries, else whatever a blocking read returns.
func (f *fetcher) take(n int) ([]rdb.Entry, error) {
	s := f.s
	if now := s.now(); now.Sub(f.lastReclaim) >= f.reclaimEvery {
		f.lastReclaim = now
		entries, full := s.reclaim(f.ctx, f.cursors, n, f.paused)
		if full {
			f.lastReclaim = time.Time{} // more may be waiting: recovery goes first
		}
		if now.Sub(f.lastPrune) >= f.pruneAfter {
			f.lastPrune = now
			s.pruneConsumers(f.ctx, f.pruneAfter)
		}
		if len(entries) > 0 {
			return entries, nil
		}
	}
	order := s.order()
	start := f.start
	f.start = (f.start + 1) % len(s.queue.Parts)
	entries, nowPaused, err := s.queue.Fetch(f.ctx, s.consumer, order, start, n)
	if err != nil || len(entries) > 0 {
		return entries, err
	}
	clear(f.paused)
	for _, pq := range nowPaused {
		f.paused[pq] = true
	}
	open := s.unpaused(order, f.paused)
	if len(open) == 0 { // every queue is paused: look again after a block period
		select {
		case <-s.stop:
		case <-time.After(f.block):
		}
		return nil, nil
	}
	return s.blocker.Read(f.ctx, s.consumer, open, n, f.block)
}

// dispatch hands each entry to a worker (workers.go), on the n slots taken
// for them (giving back those not needed, taking more for the extra
// entries a blocking read or a reclaim can return: a batch per queue and
// partition). Entries taken are run even if part of the fetch failed. It reports false once Shutdown has begun,
// after handing back the entries it could not start.
func (s *Server) dispatch(entries []rdb.Entry, n int) bool {
	ds := s.track(entries)
	for i := len(ds); i < n; i++ {
		<-s.slots
	}
	for i, d := range ds {
		if i >= n {
			select {
			case s.slots <- struct{}{}:
			case <-s.stop:
				s.release(s.bgCtx, ds[i:])
				return false
			}
		}
		s.hand(job{d: d})
	}
	return true
}

// pause acts on a fetch error: it creates missing consumer groups (a new
// queue, or Redis lost its data) and waits, longer after each failure in a
// row. It reports false once Shutdown has begun.
func (f *fetcher) pause(err error) bool {
	s := f.s
	if err == nil {
		f.errDelay = 0
		return true
	}
	if rdb.IsNoGroup(err) {
		s.log.Warn("chronos: consumer group missing; creating it", "error", err)
		if gerr := s.ensureGroups(f.ctx); gerr != nil {
			s.log.Error("chronos: create consumer groups", "error", gerr)
		}
		// Groups vanish with the rest of Redis's data, the layout's meta
		// key included.
		if lerr := s.ns.Reassert(f.ctx); lerr != nil {
			s.log.Error("chronos: namespace layout", "error", lerr)
		}
	} else {
		s.log.Error("chronos: fetch tasks", "error", err)
	}
	f.errDelay = min(max(2*f.errDelay, 50*time.Millisecond), 2*time.Second)
	select {
	case <-s.stop:
		return false
	case <-time.After(f.errDelay):
		return true
	}
}

// ensureGroups creates the consumer groups of all served queues, in every
// partition.
func (s *Server) ensureGroups(ctx context.Context) error {
	return s.queue.EnsureGroups(ctx, s.queues)
}

// unpaused returns every partition's share of the queues of order that is
// not paused there, queue by queue.
func (s *Server) unpaused(order []string, paused map[rdb.PartQueue]bool) []rdb.PartQueue {
	open := make([]rdb.PartQueue, 0, len(order)*len(s.queue.Parts))
	for _, pq := range s.queue.PartQueues(order) {
		if !paused[pq] {
			open = append(open, pq)
		}
	}
	return open
}

// reclaim takes over about n tasks whose lease expired, scanning each
// queue's pending list in each partition from where the last scan stopped,
// all in one round trip: each of the P×Q pending lists is asked for its
// share of n, at least one, so that it returns at most n + P×Q − 1.
// Paused queues are left alone. full reports that some list gave all it
// was asked for: more may be waiting.
func (s *Server) reclaim(ctx context.Context, cursors map[rdb.PartQueue]string, n int, paused map[rdb.PartQueue]bool) (out []rdb.Entry, full bool) {
	var reqs []*rdb.ReclaimReq
	for _, pq := range s.queue.PartQueues(s.queues) {
		if paused[pq] { // recovered when the queue resumes
			continue
		}
		cur := cursors[pq]
		if cur == "" {
			cur = "0-0"
		}
		reqs = append(reqs, &rdb.ReclaimReq{PartQueue: pq, Cursor: cur})
	}
	for _, rq := range reqs {
		rq.Count = max((n+len(reqs)-1)/len(reqs), 1)
	}
	s.queue.Reclaim(ctx, s.consumer, s.cfg.VisibilityTimeout, reqs)
	for _, rq := range reqs {
		if rq.Err != nil {
			if !rdb.IsNoGroup(rq.Err) {
				s.log.Error("chronos: recover expired tasks", "queue", rq.Queue, "partition", rq.Part, "error", rq.Err)
			}
			continue
		}
		cursors[rq.PartQueue] = rq.Next
		for _, e := range rq.Entries {
			s.log.Warn("chronos: recovered task whose lease expired", "queue", rq.Queue, "partition", rq.Part, "entry", e.ID, "deliveries", e.Deliveries)
		}
		full = full || len(rq.Entries) >= rq.Count
		out = append(out, rq.Entries...)
	}
	return out, full
}

// release hands entries taken but never started back for immediate
// recovery by any server.
func (s *Server) release(ctx context.Context, ds []*delivery) {
	byQueue := make(map[rdb.PartQueue]*rdb.LeaseReq)
	var reqs []*rdb.LeaseReq
	for _, d := range ds {
		pq := rdb.PartQueue{Part: d.entry.Partition, Queue: d.entry.Queue}
		rq := byQueue[pq]
		if rq == nil {
			rq = &rdb.LeaseReq{PartQueue: pq}
			byQueue[pq] = rq
			reqs = append(reqs, rq)
		}
		rq.IDs = append(rq.IDs, d.entry.ID)
		s.forget(d)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s.queue.Release(ctx, s.consumer, reqs, s.cfg.VisibilityTimeout)
	for _, rq := range reqs {
		if rq.Err != nil {
			s.log.Warn("chronos: hand back unstarted tasks; they will be recovered after the visibility timeout",
				"queue", rq.Queue, "partition", rq.Part, "count", len(rq.IDs), "error", rq.Err)
		}
	}
}

// order returns the queues in the order this fetch visits them.
func (s *Server) order() []string {
	if s.cfg.StrictPriority || len(s.queues) == 1 {
		return s.queues
	}
	out := make([]string, 0, len(s.queues))
	var w [16]int
	weights := append(w[:0], s.weights...)
	total := 0
	for _, x := range weights {
		total += x
	}
	idx := make([]int, len(s.queues))
	for i := range idx {
		idx[i] = i
	}
	for len(idx) > 0 {
		r := rand.IntN(total)
		k := 0
		for r >= weights[k] {
			r -= weights[k]
			k++
		}
		out = append(out, s.queues[idx[k]])
		total -= weights[k]
		idx = append(idx[:k], idx[k+1:]...)
		weights = append(weights[:k], weights[k+1:]...)
	}
	return out
}

// pruneConsumers removes from the groups the consumers that hold nothing
// and have not read for idle: names left by crashed servers.
func (s *Server) pruneConsumers(ctx context.Context, idle time.Duration) {
	pruned, err := s.queue.PruneConsumers(ctx, s.queues, s.consumer, idle)
	if err != nil && !rdb.IsNoGroup(err) {
		s.log.Warn("chronos: prune idle consumers", "error", err)
	}
	for q, n := range pruned {
		if n > 0 {
			s.log.Info("chronos: pruned consumers of departed servers", "queue", q, "count", n)
		}
	}
}
