package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// count fills the report of a dry run: what a migration would move, by
// kind, in a few round trips and without writing.
func (m *migration) count(ctx context.Context, in *inventory) error {
	q, r := m.old.q, m.old.reg
	var (
		hashes, xlen []*redis.IntCmd
		hist         []*redis.StringSliceCmd
		xpend        []*redis.XPendingCmd
		zcard, runs  []*redis.IntCmd
		idx, changed *redis.IntCmd
		req, dead, p *redis.IntCmd
		epoch        *redis.StringCmd
	)
	_, err := m.c.Pipelined(ctx, func(pp redis.Pipeliner) error {
		for _, id := range in.scheds {
			hashes = append(hashes, pp.Exists(ctx, r.Sched(id)))
			hist = append(hist, pp.LRange(ctx, r.History(id), 0, -1)) // capped; LLEN is not in chronos.ACLRules
		}
		idx = pp.ZCard(ctx, r.Schedules)
		changed = pp.ZCard(ctx, r.Changed)
		req = pp.HLen(ctx, r.RequestData)
		for _, s := range in.streams {
			xlen = append(xlen, pp.XLen(ctx, q.Stream(s)))
			xpend = append(xpend, pp.XPending(ctx, q.Stream(s), rdb.Group))
		}
		for _, d := range in.delayed {
			zcard = append(zcard, pp.ZCard(ctx, q.Delayed(d)))
		}
		for _, k := range in.runs {
			runs = append(runs, pp.XLen(ctx, q.Runs(k)))
		}
		dead = pp.HLen(ctx, q.Dead())
		p = pp.SCard(ctx, q.Paused())
		epoch = pp.Get(ctx, m.old.lease.Epoch)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) && !rdb.IsNoGroup(err) {
		return fmt.Errorf("migrate: count what namespace %q holds: %w", m.ns, err)
	}
	mv := m.rep.Moved
	for i := range in.scheds {
		mv[KindSchedules] += int(hashes[i].Val())
		mv[KindHistory] += len(hist[i].Val())
	}
	mv[KindIndexes] = int(idx.Val() + changed.Val())
	mv[KindRequests] = int(req.Val())
	mv[KindDedup] = len(in.dedup)
	for i := range in.streams {
		n := 0
		if x := xpend[i].Val(); x != nil { // nil without a group
			n = int(x.Count)
		}
		mv[KindPending] += n
		mv[KindReady] += int(xlen[i].Val()) - n
	}
	for _, z := range zcard {
		mv[KindDelayed] += int(z.Val())
	}
	mv[KindDead] = int(dead.Val())
	mv[KindOverlap] = len(in.overlap)
	for _, x := range runs {
		mv[KindRuns] += int(x.Val())
	}
	mv[KindPaused] = int(p.Val())
	if v, err := epoch.Int(); err == nil {
		mv[KindEpoch] = v
	}
	for k, v := range mv {
		if v == 0 {
			delete(mv, k)
		}
	}
	m.rep.Queues = in.queues()
	return nil
}
