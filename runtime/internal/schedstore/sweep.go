package schedstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// SweepResult reports what Sweep did.
type SweepResult struct {
	// Live is the number of live instances.
	Live int
	// Handed lists schedules whose definition passed to another live
	// declarer (the previous one died or stopped declaring it), and
	// schedules created from a live declaration they were missing.
	Handed []string
	// Retired lists schedules deleted because no live instance declared
	// them for RetireGrace.
	Retired []string
}

// retireScript deletes a schedule unless it was declared after the cutoff.
//
//	KEYS[1] schedule hash, KEYS[2] schedules index
//	ARGV[1] id, ARGV[2] cutoff (ms)
//
// Returns 1 when deleted.
var retireScript = redis.NewScript(`
local sc = redis.call('ZSCORE', KEYS[2], ARGV[1])
if sc and tonumber(sc) >= tonumber(ARGV[2]) then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
`)

// Sweep applies the rolling-deploy rule to the whole registry; the leader
// runs it periodically (about once per InstanceTTL is plenty). For every
// schedule it:
//
//   - marks it declared now if any live instance declares it;
//   - hands its definition to the highest-ranked live declarer if the
//     current declarer is gone or no longer declares it (so a rollback
//     takes effect when the newer instances stop);
//   - retires it (deletes definition and state) when no live instance has
//     declared it for RetireGrace.
//
// Sweep reads everything first and writes with compare-and-set scripts, so
// it is safe to run while instances register; a lost race is settled by
// the next sweep.
func (s *Store) Sweep(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	now := s.cfg.Now()
	live, err := s.liveIDs(ctx, now)
	if err != nil {
		return res, err
	}
	res.Live = len(live)

	// Who is live, with what rank, declaring what.
	infos := make([]*redis.SliceCmd, len(live))
	decls := make([]*redis.StringSliceCmd, len(live))
	var index *redis.ZSliceCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range live {
			infos[i] = p.HMGet(ctx, s.keys.instance(id), "version", "started")
			decls[i] = p.HKeys(ctx, s.keys.decl(id))
		}
		index = p.ZRangeWithScores(ctx, s.keys.schedules(), 0, -1)
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("schedstore: sweep: read: %w", err)
	}
	declarers := map[string][]Declarer{}
	for i, id := range live {
		v := infos[i].Val()
		d := Declarer{InstanceID: id}
		if len(v) == 2 {
			d.Version, _ = v[0].(string)
			st, _ := v[1].(string)
			d.Started = msTime(st)
		}
		for _, sid := range decls[i].Val() {
			declarers[sid] = append(declarers[sid], d)
		}
	}
	lastDeclared := map[string]float64{}
	for _, z := range index.Val() {
		id, _ := z.Member.(string)
		lastDeclared[id] = z.Score
	}

	// Decide.
	var declared, orphans []string
	for id := range declarers {
		declared = append(declared, id)
	}
	cutoff := now.Add(-s.cfg.RetireGrace).UnixMilli()
	for id, score := range lastDeclared {
		if len(declarers[id]) == 0 && int64(score) < cutoff {
			orphans = append(orphans, id)
		}
	}
	cur, err := s.readCurrent(ctx, declared)
	if err != nil {
		return res, err
	}
	type handover struct {
		id string
		by Declarer
		c  current
	}
	var hands []handover
	for _, id := range sortedStrings(declared) {
		best := declarers[id][0]
		for _, d := range declarers[id][1:] {
			if d.Outranks(best) {
				best = d
			}
		}
		if c := cur[id]; !c.exists || c.declarer.InstanceID != best.InstanceID {
			hands = append(hands, handover{id, best, c})
		}
	}

	// The definitions to hand over, from their new declarers.
	defCmds := make([]*redis.StringCmd, len(hands))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if len(declared) > 0 {
			zs := make([]redis.Z, len(declared))
			for i, id := range declared {
				zs[i] = redis.Z{Score: float64(now.UnixMilli()), Member: id}
			}
			p.ZAdd(ctx, s.keys.schedules(), zs...)
		}
		for i, h := range hands {
			defCmds[i] = p.HGet(ctx, s.keys.decl(h.by.InstanceID), h.id)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return res, fmt.Errorf("schedstore: sweep: %w", err)
	}
	var claims []claim
	for i, h := range hands {
		var def Definition
		if err := json.Unmarshal([]byte(defCmds[i].Val()), &def); err != nil || def.Validate() != nil {
			continue // declaration vanished (instance died) or is unreadable: next sweep
		}
		claims = append(claims, claim{def: def, by: h.by, cur: h.c})
	}
	failed, err := s.claim(ctx, now, claims)
	if err != nil {
		return res, fmt.Errorf("schedstore: sweep: %w", err)
	}
	for i, cl := range claims {
		if !failed[i] {
			res.Handed = append(res.Handed, cl.def.ID)
		}
	}

	// Retire.
	calls := make([]scriptCall, len(orphans))
	for i, id := range orphans {
		calls[i] = scriptCall{keys: []string{s.keys.sched(id), s.keys.schedules()}, args: []any{id, strconv.FormatInt(cutoff, 10)}}
	}
	retCmds, err := s.evalPipelined(ctx, retireScript, calls)
	if err != nil {
		return res, fmt.Errorf("schedstore: sweep: retire: %w", err)
	}
	for i, c := range retCmds {
		if n, _ := c.Int(); n == 1 {
			res.Retired = append(res.Retired, orphans[i])
		}
	}
	sortedStrings(res.Retired)
	return res, nil
}
