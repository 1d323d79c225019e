package chronos

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/leader"
)

// Leadership per partition (docs/scheduler.md, "Leadership per
// partition"). A partitioned namespace has one fenced lease per partition;
// this instance runs an elector for each (leader.Set, one pub/sub
// connection for all their resign notices), and a leader session for each
// partition it holds (scheduler_leader.go), each with its own firing loop.
//
// Who contends for what: at every heartbeat, and at once after a resign
// notice, the instance reads the live instances and the holder of every
// lease, and computes the same assignment as every other instance
// (leader.Assign: balanced and sticky). It contends for the partitions it
// owns, stands by for those it would own if their server went
// (leader.Standbys: taken only once their lease stayed free for the
// elector's grace, so a crashed server's partitions move within LeaderTTL
// plus that grace, before its heartbeat expires), and leaves the rest
// alone. A partition it holds but no longer owns (a new instance joined,
// or it stood in for an owner that stalled and came back) is handed over
// once the new owner is seen heartbeating after the hand-over was decided,
// so that nothing is resigned to an instance that crashed but is still
// listed. A partition whose lease stayed free for more than InstanceTTL is
// contended for whatever the assignment says; one taken over that way, or
// taken back as a standby after it was handed over with the live instances
// unchanged (the owner is live but cannot take it), is kept while the live
// instances stay the same, so such an owner does not leave it without a
// leader.
//
// Layout 1 has one partition, and every instance contends for it as
// versions before partitions did (they know no assignment).

// partitions is this instance's part in the elections of its namespace.
type partitions struct {
	s        *Scheduler
	electors []*leader.Elector
	set      *leader.Set // nil in layout 1
	keys     []leader.Keys
	changes  []chan leader.Change
	notices  chan struct{} // a resign notice arrived: assign again now

	mu      sync.Mutex
	leading int    // partitions led, for Metrics.LeaderChanged
	live    string // the live instances at the last assignment, joined
	why     []string
	// rescued holds, for a partition this instance took over for an
	// owner that could not take it (see the top of this file), the live
	// instances when it did; it keeps the partition while they stay the
	// same.
	rescued []string
	// handed holds, for a partition this instance handed over to its
	// owner, the live instances then.
	handed  []string
	handing []handOver  // a partition held here and owned by another
	free    []time.Time // since when each lease was seen free (zero: held)
}

// handOver is a hand-over this instance decided: to the instance whose
// heartbeat score was score then. It resigns once the score moved on.
type handOver struct {
	to    string
	score int64
}

// Reasons for an elector's mode (partitions.why).
const (
	whyOwner   = "owner"
	whyKeep    = "keep"
	whyStandby = "standby"
	whyRescue  = "rescue"
)

func newPartitions(s *Scheduler) *partitions {
	l := s.store.Layout()
	n := l.Partitions()
	ps := &partitions{s: s, notices: make(chan struct{}, 1), why: make([]string, n), rescued: make([]string, n),
		handed: make([]string, n), handing: make([]handOver, n), free: make([]time.Time, n)}
	cfgs := make([]leader.Config, n)
	for p := range n {
		ch := make(chan leader.Change, 16)
		ps.changes = append(ps.changes, ch)
		cfgs[p] = leader.Config{
			Namespace:  s.cfg.Namespace,
			Prefix:     l.Partition(p),
			Partition:  p,
			InstanceID: s.cfg.InstanceID,
			TTL:        s.cfg.LeaderTTL,
			Replicas:   s.cfg.Replicas,
			// A guard per partition, shared with its firings: on a
			// cluster the partitions' masters differ.
			Guard:    leader.NewReplicaGuard(s.cfg.Replicas),
			Logger:   s.log,
			OnChange: func(c leader.Change) { ch <- c },
		}
		ps.keys = append(ps.keys, leader.KeysAt(l.Partition(p)))
	}
	if l.IsSingle() {
		ps.electors = []*leader.Elector{leader.New(s.client, cfgs[0])}
		return ps
	}
	for p := range cfgs {
		cfgs[p].Mode = leader.Idle // until the first assignment
	}
	ps.set = leader.NewSet(s.client, cfgs, func(int) {
		select {
		case ps.notices <- struct{}{}:
		default:
		}
	})
	for p := range n {
		ps.electors = append(ps.electors, ps.set.Elector(p))
	}
	return ps
}

// run takes part in the elections, and runs a leader session for every
// term held, until ctx ends; then every elector resigns what it holds.
func (ps *partitions) run(ctx context.Context) {
	var wg sync.WaitGroup
	for p := range ps.electors {
		wg.Go(func() { ps.coordinate(ctx, p) })
	}
	if ps.set != nil {
		_ = ps.set.Run(ctx)
	} else {
		_ = ps.electors[0].Run(ctx)
	}
	for _, c := range ps.changes {
		close(c)
	}
	wg.Wait()
}

// coordinate runs a leader session for every term this instance holds of
// partition p, and stops it as soon as the term ends. It returns when the
// elector is done.
func (ps *partitions) coordinate(ctx context.Context, p int) {
	s := ps.s
	var stop func()
	end := func() {
		if stop != nil {
			stop()
			stop = nil
		}
	}
	defer end()
	for c := range ps.changes[p] {
		end()
		ps.noted(p, c)
		if !c.Leader {
			if c.Err != nil {
				s.log.Warn("chronos: lost leadership", "instance", s.cfg.InstanceID, "partition", p, "epoch", c.Term.Epoch, "err", c.Err)
			} else {
				s.log.Info("chronos: resigned leadership", "instance", s.cfg.InstanceID, "partition", p, "epoch", c.Term.Epoch)
			}
			continue
		}
		s.log.Info("chronos: became leader", "instance", s.cfg.InstanceID, "partition", p, "epoch", c.Term.Epoch)
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		sess := newSession(s, p, ps.electors[p], c.Term)
		go func() {
			defer close(done)
			sess.run(sctx)
		}()
		stop = func() { cancel(); <-done }
	}
}

// noted records a transition of partition p: the count of partitions led
// (Metrics.LeaderChanged reports this instance leading any), and why a
// term began.
func (ps *partitions) noted(p int, c leader.Change) {
	ps.mu.Lock()
	before := ps.leading
	if c.Leader {
		ps.leading++
		ps.rescued[p] = ""
		switch {
		case ps.set == nil || ps.why[p] == whyOwner:
		case ps.why[p] == whyRescue || ps.handed[p] == ps.live:
			ps.rescued[p] = ps.live
		}
	} else {
		ps.leading--
		ps.rescued[p] = ""
	}
	after := ps.leading
	// Reported in order, under the lock: the sessions of the partitions
	// end and begin concurrently.
	if !c.Leader && c.Err != nil {
		ps.s.recordRenewFailed()
	}
	if (before == 0) != (after == 0) {
		ps.s.recordLeading(after > 0)
	}
	ps.mu.Unlock()
}

// leadingAny reports whether this instance leads a partition.
func (ps *partitions) leadingAny() bool {
	for _, e := range ps.electors {
		if _, ok := e.Current(); ok {
			return true
		}
	}
	return false
}

// assign reads the live instances and the leases' holders and sets every
// elector's mode from the assignment (see the top of this file), leaving
// out the instances that are starting (schedstore.Instance.Starting). It does
// nothing in layout 1, nor when this instance is not among the live ones
// (its own heartbeat did not get through: it could not tell who is gone).
func (ps *partitions) assign(ctx context.Context) {
	if ps.set == nil {
		return
	}
	s := ps.s
	live, err := s.store.Live(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.beats.failed(err, "instance", s.cfg.InstanceID, "what", "read the live instances")
		}
		return
	}
	holders, err := leader.Holders(ctx, s.client, ps.keys)
	if err != nil {
		if ctx.Err() == nil {
			s.beats.failed(err, "instance", s.cfg.InstanceID, "what", "read the partitions' leases")
		}
		return
	}
	self := s.cfg.InstanceID
	ids := make([]string, 0, len(live))
	score := make(map[string]int64, len(live))
	for _, in := range live {
		if in.Starting && in.ID != self {
			continue // still declaring: it could not take a partition yet
		}
		ids = append(ids, in.ID)
		score[in.ID] = in.Expires
	}
	if !slices.Contains(ids, self) {
		return
	}
	owners := leader.Assign(holders, ids)
	standbys := leader.Standbys(holders, ids, owners)
	sig := strings.Join(ids, "\x00")
	now := time.Now()

	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.live = sig
	for p, e := range ps.electors {
		mode, why := leader.Idle, ""
		switch {
		case owners[p] == self:
			mode, why = leader.Contend, whyOwner
		case holders[p] == self:
			mode, why = leader.Contend, whyKeep
			if ps.rescued[p] == sig {
				break // taken over for an owner that did not take it: kept while nothing changes
			}
			h := ps.handing[p]
			switch to := owners[p]; {
			case h.to != to:
				ps.handing[p] = handOver{to: to, score: score[to]}
			case score[to] > h.score:
				// The new owner heartbeated since: it is running, and
				// contends. Resign (Idle) so that it takes over at once.
				mode, why = leader.Idle, ""
				ps.handed[p] = sig
				s.log.Info("chronos: handing a partition over to its owner", "instance", self, "partition", p, "to", to)
			}
		case standbys[p] == self:
			mode, why = leader.Standby, whyStandby
		}
		if holders[p] != self {
			ps.handing[p] = handOver{}
		}
		if holders[p] == "" {
			if ps.free[p].IsZero() {
				ps.free[p] = now
			}
			if mode == leader.Idle && now.Sub(ps.free[p]) > s.cfg.InstanceTTL {
				mode, why = leader.Contend, whyRescue
				s.log.Warn("chronos: a partition's lease stayed free for more than InstanceTTL; contending for it whatever the assignment",
					"instance", self, "partition", p, "owner", owners[p], "free_since", ps.free[p])
			}
		} else {
			ps.free[p] = time.Time{}
		}
		ps.why[p] = why
		e.SetMode(mode)
	}
}
