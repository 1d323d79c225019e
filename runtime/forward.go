package chronos

import (
	"context"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// forwardPollMax bounds how long the forwarder sleeps with nothing due. The
// forwarder normally sleeps exactly until the earliest delayed task of its
// queues is due and is woken early through pub/sub when an earlier one
// arrives; this bound only covers wake-ups lost while the subscription was
// reconnecting.
const forwardPollMax = time.Second

// forwardBatch is the most delayed tasks one script call moves.
const forwardBatch = 500

// forwardLoop moves delayed tasks and retries of the served queues to their
// streams when they fall due, in every partition. It listens on every
// partition's wake channel through one subscription: a PUBLISH reaches
// the subscribers of every node of a cluster.
func (s *Server) forwardLoop() {
	defer s.loops.Done()
	ctx := s.bgCtx
	sub := s.queue.C.Subscribe(ctx, s.queue.WakeChannels()...)
	defer sub.Close()
	wake := sub.Channel()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-wake:
		case <-timer.C:
		}
		wait := forwardPollMax
		if next := s.forwardDue(ctx); !next.IsZero() {
			wait = min(wait, max(next.Sub(s.now()), 0))
		}
		timer.Reset(wait)
	}
}

// forwardDue forwards every due task and returns when the next one is due
// (zero if unknown or none). Each pass is one round trip for every queue
// in every partition; queues that had more than a batch due go again.
func (s *Server) forwardDue(ctx context.Context) time.Time {
	var (
		earliest time.Time
		reqs     []*rdb.ForwardReq
	)
	for _, pq := range s.queue.PartQueues(s.queues) {
		reqs = append(reqs, &rdb.ForwardReq{PartQueue: pq})
	}
	for len(reqs) > 0 {
		s.queue.Forward(ctx, s.now(), forwardBatch, reqs)
		var again []*rdb.ForwardReq
		for _, rq := range reqs {
			switch {
			case rq.Err != nil:
				s.log.Error("chronos: forward delayed tasks", "queue", rq.Queue, "partition", rq.Part, "error", rq.Err)
			case rq.Moved == forwardBatch:
				again = append(again, &rdb.ForwardReq{PartQueue: rq.PartQueue})
			case !rq.Next.IsZero() && (earliest.IsZero() || rq.Next.Before(earliest)):
				earliest = rq.Next
			}
		}
		reqs = again
	}
	return earliest
}
