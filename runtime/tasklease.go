package chronos

import (
	"context"
	"time"
)

// leaseLoop renews the leases of every task this server holds, every third
// of the visibility timeout, so a long handler keeps its task and a crashed
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
	byQueue := make(map[string][]string)
	held := make(map[entryKey]*delivery, len(s.inflight))
	for k, d := range s.inflight {
		byQueue[k.queue] = append(byQueue[k.queue], k.id)
		held[k] = d
	}
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(s.bgCtx, s.cfg.VisibilityTimeout/3)
	defer cancel()
	for q, ids := range byQueue {
		lost, err := s.queue.Extend(ctx, q, s.consumer, ids)
		if err != nil {
			s.log.Error("chronos: renew task leases", "queue", q, "count", len(ids), "error", err)
			continue
		}
		for _, id := range lost {
			k := entryKey{q, id}
			s.mu.Lock()
			d, still := s.inflight[k]
			s.mu.Unlock()
			if !still || d != held[k] {
				continue // finished meanwhile
			}
			s.log.Warn("chronos: task lease lost to another worker; cancelling its handler", "queue", q, "entry", id)
			d.markLost()
		}
	}
}
