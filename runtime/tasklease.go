package chronos

import (
	"context"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// leaseLoop renews the leases of every task this server holds, every third
// of the visibility timeout, in one round trip for all partitions, so a long handler keeps its task and a crashed
// server's tasks are recovered one visibility timeout after its last renewal.
// It runs until Shutdown has finished waiting for the handlers.
func (s *Server) leaseLoop() {
	defer close(s.leaseDone)
	t := time.NewTicker(s.cfg.VisibilityTimeout / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stopLease:
			return
		case <-t.C:
			s.renewLeases()
		}
	}
}

func (s *Server) renewLeases() {
	s.mu.Lock()
	if len(s.inflight) == 0 {
		s.mu.Unlock()
		return
	}
	byQueue := make(map[rdb.PartQueue]*rdb.LeaseReq)
	var reqs []*rdb.LeaseReq
	held := make(map[entryKey]*delivery, len(s.inflight))
	for k, d := range s.inflight {
		pq := rdb.PartQueue{Part: k.part, Queue: k.queue}
		rq := byQueue[pq]
		if rq == nil {
			rq = &rdb.LeaseReq{PartQueue: pq}
			byQueue[pq] = rq
			reqs = append(reqs, rq)
		}
		rq.IDs = append(rq.IDs, k.id)
		held[k] = d
	}
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(s.bgCtx, s.cfg.VisibilityTimeout/3)
	defer cancel()
	s.queue.Extend(ctx, s.consumer, reqs)
	for _, rq := range reqs {
		if rq.Err != nil {
			s.log.Error("chronos: renew task leases", "queue", rq.Queue, "partition", rq.Part, "count", len(rq.IDs), "error", rq.Err)
			continue
		}
		for _, id := range rq.Lost {
			k := entryKey{rq.Part, rq.Queue, id}
			s.mu.Lock()
			d, still := s.inflight[k]
			s.mu.Unlock()
			if !still || d != held[k] {
				continue // finished meanwhile
			}
			s.log.Warn("chronos: task lease lost to another worker; cancelling its handler", "queue", rq.Queue, "partition", rq.Part, "entry", id)
			d.markLost()
		}
	}
}
