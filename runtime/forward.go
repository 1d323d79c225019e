package chronos

import (
	"context"
	"time"
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
// streams when they fall due.
func (s *Server) forwardLoop() {
	defer s.loops.Done()
	ctx := s.bgCtx
	sub := s.queue.C.Subscribe(ctx, s.queue.K.Wake())
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
// (zero if unknown or none).
func (s *Server) forwardDue(ctx context.Context) time.Time {
	var earliest time.Time
	for _, q := range s.queues {
		for {
			moved, next, err := s.queue.Forward(ctx, q, s.now(), forwardBatch)
			if err != nil {
				s.log.Error("chronos: forward delayed tasks", "queue", q, "error", err)
				break
			}
			if moved == forwardBatch {
				continue
			}
			if !next.IsZero() && (earliest.IsZero() || next.Before(earliest)) {
				earliest = next
			}
			break
		}
	}
	return earliest
}
