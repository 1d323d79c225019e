package chronos

import (
	"context"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// forwardPollMax bounds how long the forwarder goes without forwarding
// every partition. The forwarder normally forwards a partition's queue
// exactly when its earliest delayed task is due, and at once when a wake-up
// says an earlier one arrived there; this bound only covers wake-ups lost
// while the subscription was reconnecting, and delayed tasks added without
// one (a migration's).
const forwardPollMax = time.Second

// forwardBatch is the most delayed tasks one script call moves.
const forwardBatch = 500

// forwardLoop moves delayed tasks and retries of the served queues to their
// streams when they fall due, in every partition. It listens on every
// partition's wake channel through one subscription: a PUBLISH reaches
// the subscribers of every node of a cluster.
//
// It remembers when the earliest task of each partition's queue is due and
// forwards only the queues whose time has come, or whose partition a
// wake-up names: with tasks falling due every millisecond in one partition
// or another, forwarding every partition at each of those times cost a
// script call per partition and queue for every due time, most of them
// finding nothing.
func (s *Server) forwardLoop() {
	defer s.loops.Done()
	ctx := s.bgCtx
	channels := s.queue.WakeChannels()
	sub := s.queue.C.Subscribe(ctx, channels...)
	defer sub.Close()
	wake := sub.Channel()
	f := newForwarder(s.queue.PartQueues(s.queues), channels)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-s.stop:
			return
		case m, ok := <-wake:
			if !ok {
				// The subscription ended (its client was closed): go on
				// with the timer alone until stopped.
				wake = nil
				break
			}
			f.woken(m.Channel)
			for len(wake) > 0 { // every wake-up already queued, in one pass
				if m, ok := <-wake; ok {
					f.woken(m.Channel)
				}
			}
		case <-timer.C:
		}
		now := s.now()
		if ix, reqs := f.due(now); len(reqs) > 0 {
			s.forwardDue(ctx, reqs)
			f.done(ix, reqs)
		}
		timer.Reset(max(f.next().Sub(s.now()), 0))
	}
}

// forwarder is forwardLoop's memory: when each partition's queue is due to
// be forwarded.
type forwarder struct {
	pqs       []rdb.PartQueue
	at        []time.Time // when pqs[i] is next forwarded; zero: at the next pass
	byChannel map[string][]int
	full      time.Time // the last pass that forwarded every queue
}

func newForwarder(pqs []rdb.PartQueue, channels []string) *forwarder {
	f := &forwarder{pqs: pqs, at: make([]time.Time, len(pqs)), byChannel: make(map[string][]int, len(channels))}
	for i, pq := range pqs {
		f.byChannel[channels[pq.Part]] = append(f.byChannel[channels[pq.Part]], i)
	}
	return f
}

// woken marks the queues of the partition of a wake channel to be
// forwarded at the next pass; an unknown channel marks every queue.
func (f *forwarder) woken(channel string) {
	ix, ok := f.byChannel[channel]
	if !ok {
		clear(f.at)
		return
	}
	for _, i := range ix {
		f.at[i] = time.Time{}
	}
}

// due returns the requests of the queues to forward at now, and their
// indexes in pqs: those whose time has come, and every one forwardPollMax
// after the last pass that forwarded them all.
func (f *forwarder) due(now time.Time) ([]int, []*rdb.ForwardReq) {
	all := now.Sub(f.full) >= forwardPollMax
	var (
		ix   []int
		reqs []*rdb.ForwardReq
	)
	for i, pq := range f.pqs {
		if all || !f.at[i].After(now) {
			ix = append(ix, i)
			reqs = append(reqs, &rdb.ForwardReq{PartQueue: pq})
		}
	}
	if all {
		f.full = now
	}
	return ix, reqs
}

// done notes what a pass found (reqs, of the queues ix): when the earliest
// task left in each queue is due. A queue with none, or whose forwarding
// failed, waits for the next full pass (or a wake-up), at most
// forwardPollMax: a Redis that fails is asked once a second, as an idle
// forwarder asked it before.
func (f *forwarder) done(ix []int, reqs []*rdb.ForwardReq) {
	for k, rq := range reqs {
		i := ix[k]
		if rq.Err != nil || rq.Next.IsZero() {
			f.at[i] = f.full.Add(forwardPollMax)
		} else {
			f.at[i] = rq.Next
		}
	}
}

// next is when the next pass is due: the earliest queue's time, and at
// the latest forwardPollMax after the last full pass.
func (f *forwarder) next() time.Time {
	t := f.full.Add(forwardPollMax)
	for _, at := range f.at {
		if at.Before(t) {
			t = at
		}
	}
	return t
}

// forwardDue forwards every due task of reqs, filling in each request's
// Next and Err. Each pass is one round trip for all of them; queues that
// had more than a batch due go again.
func (s *Server) forwardDue(ctx context.Context, reqs []*rdb.ForwardReq) {
	for len(reqs) > 0 {
		s.queue.Forward(ctx, s.now(), forwardBatch, reqs)
		var again []*rdb.ForwardReq
		for _, rq := range reqs {
			switch {
			case rq.Err != nil:
				s.log.Error("chronos: forward delayed tasks", "queue", rq.Queue, "partition", rq.Part, "error", rq.Err)
			case rq.Moved == forwardBatch:
				again = append(again, rq)
			}
		}
		reqs = again
	}
}
