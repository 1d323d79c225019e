package chronos

import (
	"context"
	"errors"
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
// enqueued to an idle server starts within one round trip.
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
	cursors      map[string]string // per queue: where the last reclaim scan stopped
	reclaimEvery time.Duration
	block        time.Duration // the longest blocking read
	pruneAfter   time.Duration
	lastReclaim  time.Time // zero: reclaim at once, recovering the work of crashed servers
	lastPrune    time.Time
	paused       map[string]bool // as of the last fetch
	errDelay     time.Duration
}

func newFetcher(s *Server) *fetcher {
	reclaimEvery := s.cfg.VisibilityTimeout / 2
	return &fetcher{
		s: s, ctx: s.bgCtx, cursors: make(map[string]string, len(s.queues)),
		reclaimEvery: reclaimEvery, block: min(time.Second, reclaimEvery), pruneAfter: 10 * s.cfg.VisibilityTimeout,
		paused: map[string]bool{},
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
		entries := s.reclaim(f.ctx, f.cursors, n, f.paused)
		if len(entries) >= n {
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
	entries, nowPaused, err := s.queue.Fetch(f.ctx, s.consumer, order, n)
	if err != nil || len(entries) > 0 {
		return entries, err
	}
	clear(f.paused)
	for _, q := range nowPaused {
		f.paused[q] = true
	}
	open := unpaused(order, f.paused)
	if len(open) == 0 { // every queue is paused: look again after a block period
		select {
		case <-s.stop:
		case <-time.After(f.block):
		}
		return nil, nil
	}
	entries, err = s.queue.BlockFetch(f.ctx, s.blocker.Cmd(f.ctx), s.consumer, open, n, f.block)
	if err != nil {
		s.blocker.Reset()
	}
	return entries, err
}

// dispatch hands each entry to a worker (workers.go), on the n slots taken for them
// (giving back those not needed, taking more for the extra entries a
// blocking read can return: a batch per queue). Entries taken are run even
// if part of the fetch failed. It reports false once Shutdown has begun,
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

// ensureGroups creates the consumer groups of all served queues.
func (s *Server) ensureGroups(ctx context.Context) error {
	var errs []error
	for _, q := range s.queues {
		if err := s.queue.EnsureGroup(ctx, q); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// unpaused returns the queues of order that are not paused.
func unpaused(order []string, paused map[string]bool) []string {
	if len(paused) == 0 {
		return order
	}
	open := make([]string, 0, len(order))
	for _, q := range order {
		if !paused[q] {
			open = append(open, q)
		}
	}
	return open
}

// reclaim takes over up to n tasks whose lease expired, scanning each
// queue's pending list from where the last scan stopped. Paused queues are
// left alone.
func (s *Server) reclaim(ctx context.Context, cursors map[string]string, n int, paused map[string]bool) []rdb.Entry {
	var out []rdb.Entry
	for _, q := range s.queues {
		if len(out) >= n {
			break
		}
		if paused[q] { // recovered when the queue resumes
			continue
		}
		cur := cursors[q]
		if cur == "" {
			cur = "0-0"
		}
		es, next, err := s.queue.Reclaim(ctx, q, s.consumer, s.cfg.VisibilityTimeout, cur, n-len(out))
		if err != nil {
			if !rdb.IsNoGroup(err) {
				s.log.Error("chronos: recover expired tasks", "queue", q, "error", err)
			}
			continue
		}
		cursors[q] = next
		for _, e := range es {
			s.log.Warn("chronos: recovered task whose lease expired", "queue", q, "entry", e.ID, "deliveries", e.Deliveries)
		}
		out = append(out, es...)
	}
	return out
}

// release hands entries taken but never started back for immediate
// recovery by any server.
func (s *Server) release(ctx context.Context, ds []*delivery) {
	byQueue := make(map[string][]string)
	for _, d := range ds {
		byQueue[d.entry.Queue] = append(byQueue[d.entry.Queue], d.entry.ID)
		s.forget(d)
	}
	for q, ids := range byQueue {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := s.queue.Release(ctx, q, s.consumer, ids, s.cfg.VisibilityTimeout)
		cancel()
		if err != nil {
			s.log.Warn("chronos: hand back unstarted tasks; they will be recovered after the visibility timeout", "queue", q, "count", len(ids), "error", err)
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
	for _, q := range s.queues {
		n, err := s.queue.PruneConsumers(ctx, q, s.consumer, idle)
		if err != nil {
			if !rdb.IsNoGroup(err) {
				s.log.Warn("chronos: prune idle consumers", "queue", q, "error", err)
			}
			continue
		}
		if n > 0 {
			s.log.Info("chronos: pruned consumers of departed servers", "queue", q, "count", n)
		}
	}
}
