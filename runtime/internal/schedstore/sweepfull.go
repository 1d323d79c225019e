package schedstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

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

// fullPass reads the declarations of the live instances and the whole
// schedules index, and applies the rolling-deploy rule to every schedule
// (see Sweep). live and rec were read at now. It returns what the next
// sweeps need to remember of it.
func (s *Store) fullPass(ctx context.Context, now time.Time, live []liveInstance, rec sweepRecord) (SweepResult, sweepMemo, error) {
	res := SweepResult{Live: len(live), Full: true}
	memo := sweepMemo{valid: true, live: live, full: now}

	// What the live instances declare, and when each schedule was last
	// declared.
	decls := make([]*redis.StringSliceCmd, len(live))
	var index *redis.ZSliceCmd
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, in := range live {
			decls[i] = p.HKeys(ctx, s.keys.decl(in.id))
		}
		index = p.ZRangeWithScores(ctx, s.keys.schedules(), 0, -1)
		return nil
	})
	if err != nil {
		return res, memo, fmt.Errorf("schedstore: sweep: read: %w", err)
	}
	declarers := map[string][]Declarer{}
	for i, in := range live {
		d := in.declarer()
		for _, sid := range decls[i].Val() {
			declarers[sid] = append(declarers[sid], d)
		}
	}
	nowMs := now.UnixMilli()
	var declared []string
	marks := make([]redis.Z, 0, len(declarers))
	for id := range declarers {
		declared = append(declared, id)
		marks = append(marks, redis.Z{Score: float64(nowMs), Member: id})
	}
	// A schedule no live instance declares keeps its score, unless the
	// record vouches it was declared later than that: then the score moves
	// up to what the record says, before the record is replaced.
	lastDeclared := make(map[string]int64, len(index.Val()))
	for _, z := range index.Val() {
		id, _ := z.Member.(string)
		score := int64(z.Score)
		if len(declarers[id]) == 0 && rec.vouches(score) {
			score = rec.confirmed
			marks = append(marks, redis.Z{Score: float64(score), Member: id})
		}
		lastDeclared[id] = score
	}

	// Decide.
	var orphans []string
	cutoff := now.Add(-s.cfg.RetireGrace).UnixMilli()
	var oldest int64
	for id, score := range lastDeclared {
		if len(declarers[id]) > 0 {
			continue
		}
		if score < cutoff {
			orphans = append(orphans, id)
		} else if oldest == 0 || score < oldest {
			oldest = score
		}
	}
	if oldest != 0 {
		// Retired by the first sweep whose cutoff passes it.
		memo.retireDue = time.UnixMilli(oldest + s.cfg.RetireGrace.Milliseconds() + 1)
	}
	cur, err := s.readCurrent(ctx, declared)
	if err != nil {
		return res, memo, err
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

	// The "declared" marks (never moved back), then the record of this
	// pass: a later sweep that finds nothing changed moves its confirmed
	// time on. The definitions to hand over, from their new declarers.
	defCmds := make([]*redis.StringCmd, len(hands))
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		if len(marks) > 0 {
			p.ZAddArgs(ctx, s.keys.schedules(), redis.ZAddArgs{GT: true, Members: marks})
		}
		p.HSet(ctx, s.keys.sweep(), "full", nowMs, "confirmed", nowMs)
		for i, h := range hands {
			defCmds[i] = p.HGet(ctx, s.keys.decl(h.by.InstanceID), h.id)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return res, memo, fmt.Errorf("schedstore: sweep: %w", err)
	}
	var claims []claim
	for i, h := range hands {
		var def Definition
		if err := json.Unmarshal([]byte(defCmds[i].Val()), &def); err != nil || def.Validate() != nil {
			memo.undone = true // declaration vanished (instance died) or is unreadable: next sweep
			continue
		}
		claims = append(claims, claim{def: def, by: h.by, cur: h.c})
	}
	failed, err := s.claim(ctx, now, claims)
	if err != nil {
		return res, memo, fmt.Errorf("schedstore: sweep: %w", err)
	}
	for i, cl := range claims {
		if failed[i] {
			memo.undone = true
		} else {
			res.Handed = append(res.Handed, cl.def.ID)
		}
	}

	// Retire.
	calls := make([]scriptCall, len(orphans))
	for i, id := range orphans {
		calls[i] = scriptCall{keys: []string{s.keys.sched(id), s.keys.schedules()}, args: []any{id, strconv.FormatInt(cutoff, 10)}}
	}
	retCmds, err := s.evalPipelined(ctx, retireScript, calls, nil)
	if err != nil {
		return res, memo, fmt.Errorf("schedstore: sweep: retire: %w", err)
	}
	for i, c := range retCmds {
		if n, _ := c.Int(); n == 1 {
			res.Retired = append(res.Retired, orphans[i])
		} else {
			memo.undone = true // declared again meanwhile, or failed: look again
		}
	}
	sortedStrings(res.Retired)
	return res, memo, nil
}
