package leader

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Set runs the electors of a partitioned namespace, one per partition, with
// one pub/sub connection for the resign channels of all of them instead of
// one per elector. Which of them contend is their owner's decision
// (Elector.SetMode): every instance computes the same assignment of
// partitions to the live instances (Assign) and sets its electors' modes
// from it.
type Set struct {
	client   redis.UniversalClient
	electors []*Elector
	byChan   map[string]*Elector
	onResign func(partition int)
}

// NewSet returns the electors of cfgs (one per partition, in order), each
// with Config.ExternalHints set, on client. onResign, if set, is called
// from the listener goroutine with the partition of every resign notice,
// before the partition's elector is hinted; it must not block. It does
// nothing until Run.
func NewSet(client redis.UniversalClient, cfgs []Config, onResign func(partition int)) *Set {
	s := &Set{client: client, byChan: make(map[string]*Elector, len(cfgs)), onResign: onResign}
	for _, c := range cfgs {
		c.ExternalHints = true
		e := New(client, c)
		s.electors = append(s.electors, e)
		s.byChan[e.keys.Resign] = e
	}
	return s
}

// Len is the number of electors.
func (s *Set) Len() int { return len(s.electors) }

// Elector returns the elector of partition i.
func (s *Set) Elector(i int) *Elector { return s.electors[i] }

// Run runs every elector and the resign listener until ctx ends. Each
// elector resigns its lease, if it holds one, as it stops. Every goroutine
// it starts has stopped when it returns.
func (s *Set) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	listenCtx, stopListen := context.WithCancel(ctx)
	wg.Go(func() { s.listen(listenCtx) })
	var runs sync.WaitGroup
	errs := make([]error, len(s.electors))
	for i, e := range s.electors {
		runs.Go(func() { errs[i] = e.Run(ctx) })
	}
	runs.Wait()
	stopListen()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// listen delivers resign notices to their electors. Losing a message only
// delays a takeover until the follower's own timer.
func (s *Set) listen(ctx context.Context) {
	chans := make([]string, 0, len(s.electors))
	for _, e := range s.electors {
		chans = append(chans, e.keys.Resign)
	}
	ps := s.client.Subscribe(ctx, chans...)
	defer ps.Close()
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			e := s.byChan[m.Channel]
			if e == nil {
				continue
			}
			if s.onResign != nil {
				s.onResign(e.cfg.Partition)
			}
			e.Hint()
		}
	}
}
