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
	ctx := s.bgCtx
	cursors := make(map[string]string, len(s.queues))
	reclaimEvery := s.cfg.VisibilityTimeout / 2
	block := min(time.Second, reclaimEvery)
	var lastReclaim time.Time // zero: reclaim at once, recovering the work of crashed servers
	var lastPrune time.Time
	pruneAfter := 10 * s.cfg.VisibilityTimeout
	var errDelay time.Duration
	paused := map[string]bool{} // as of the last fetch
	defer s.blocker.Close()
	for {
		select {
		case <-s.stop:
			return
		case s.slots <- struct{}{}:
		}
		select {
		case <-s.stop: // both were ready and the slot won
			<-s.slots
			return
		default:
		}
		n := 1
	more:
		for n < maxBatch {
			select {
			case s.slots <- struct{}{}:
				n++
			default:
				break more
			}
		}

		var entries []rdb.Entry
		var err error
		if now := s.now(); now.Sub(lastReclaim) >= reclaimEvery {
			lastReclaim = now
			entries = s.reclaim(ctx, cursors, n, paused)
			if len(entries) >= n {
				lastReclaim = time.Time{} // more may be waiting: recovery goes first
			}
			if now.Sub(lastPrune) >= pruneAfter {
				lastPrune = now
				s.pruneConsumers(ctx, pruneAfter)
			}
		}
		if len(entries) == 0 {
			order := s.order()
			var nowPaused []string
			entries, nowPaused, err = s.queue.Fetch(ctx, s.consumer, order, n)
			if err == nil && len(entries) == 0 {
				clear(paused)
				for _, q := range nowPaused {
					paused[q] = true
				}
				if open := unpaused(order, paused); len(open) > 0 {
					entries, err = s.queue.BlockFetch(ctx, s.blocker.Cmd(ctx), s.consumer, open, n, block)
					if err != nil {
						s.blocker.Reset()
					}
				} else { // every queue is paused: look again after a block period
					select {
					case <-s.stop:
					case <-time.After(block):
					}
				}
			}
		}
		ds := s.track(entries)
		for i := len(ds); i < n; i++ {
			<-s.slots
		}
		for i, d := range ds { // entries taken are run even if part of the fetch failed
			if i >= n { // a blocking read can return a batch per queue
				select {
				case s.slots <- struct{}{}:
				case <-s.stop:
					s.release(ctx, ds[i:])
					return
				}
			}
			s.workers.Add(1)
			go s.work(d)
		}
		if err == nil {
			errDelay = 0
			continue
		}
		if rdb.IsNoGroup(err) { // a new queue, or Redis lost its data (restart without persistence)
			if dropped := s.dropStoppedIsolatedQueues(); len(dropped) > 0 {
				s.log.Info("chronos: stopped serving the isolated queues of stopped schedulers", "queues", dropped)
				continue // read the others again at once
			}
			s.log.Warn("chronos: consumer group missing; creating it", "error", err)
			if gerr := s.ensureGroups(ctx); gerr != nil {
				s.log.Error("chronos: create consumer groups", "error", gerr)
			}
		} else {
			s.log.Error("chronos: fetch tasks", "error", err)
		}
		errDelay = min(max(2*errDelay, 50*time.Millisecond), 2*time.Second)
		select {
		case <-s.stop:
			return
		case <-time.After(errDelay):
		}
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
