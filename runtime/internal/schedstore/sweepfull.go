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

// deleteScript deletes a schedule, its history included, unless it was
// declared after the cutoff.
//
//	KEYS[1] schedule hash, KEYS[2] schedules index, KEYS[3] history,
//	KEYS[4] changed index
//	ARGV[1] id, ARGV[2] cutoff (ms)
//
// Returns 1 when deleted.
var deleteScript = redis.NewScript(`
local sc = redis.call('ZSCORE', KEYS[2], ARGV[1])
if sc and tonumber(sc) >= tonumber(ARGV[2]) then return 0 end
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
`)

// retireScript retires a schedule (a tombstone: the leader stops firing
// it, its state is kept) unless it was declared at or after the sweep
// read the registry, or is retired already.
//
//	KEYS[1] schedule hash, KEYS[2] schedules index, KEYS[3] changed index
//	ARGV[1] id, ARGV[2] when the sweep read (ms), ARGV[3] now (ms)
//
// Returns 1 when retired now.
var retireScript = redis.NewScript(changedLua + `
local sc = redis.call('ZSCORE', KEYS[2], ARGV[1])
if sc and tonumber(sc) >= tonumber(ARGV[2]) then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], '` + FieldRetired + `', ARGV[3]) == 0 then return 0 end
chronos_changed(KEYS[3], ARGV[3], ARGV[1])
return 1
`)

// fullPass reads the declarations of the live instances and the whole
// schedules index, and applies the rolling-deploy rule to every schedule
// (see Sweep). live and rec were read at now. It returns what the next
// sweeps need to remember of it.
func (s *Store) fullPass(ctx context.Context, now time.Time, live []liveInstance, rec sweepRecord) (SweepResult, sweepMemo, error) {
	res := SweepResult{Live: len(live), Full: true}
	memo := sweepMemo{valid: true, live: live, full: now}
	d, err := s.readDeclarations(ctx, now, live, rec)
	if err != nil {
		return res, memo, err
	}
	declarers, lastDeclared := d.byID, d.lastDeclared
	// A schedule no live instance declares is retired once a second look,
	// a heartbeat later, still finds none (an instance whose declarations
	// expired during an outage declares them again at its next
	// heartbeat), and deleted with its state once RetireGrace has passed
	// since the last declaration.
	cutoff := now.Add(-s.cfg.RetireGrace).UnixMilli()
	var gone, orphans []string
	var due time.Time
	if !s.selfLive(live) {
		// This leader's own heartbeat did not get through: every instance
		// may look gone. Decide about declarations once it does.
		clear(s.orphanSince)
		lastDeclared = nil
	}
	for id := range s.orphanSince {
		if len(declarers[id]) > 0 {
			delete(s.orphanSince, id)
		}
	}
	for id, score := range lastDeclared {
		if len(declarers[id]) > 0 {
			continue
		}
		if score < cutoff {
			gone = append(gone, id)
			delete(s.orphanSince, id)
			continue
		}
		since, seen := s.orphanSince[id]
		switch {
		case !seen:
			s.orphanSince[id] = now
			since = now
		case now.Sub(since) >= s.orphanConfirm():
			orphans = append(orphans, id)
		}
		due = earliest(due, since.Add(s.orphanConfirm()))
		due = earliest(due, time.UnixMilli(score+s.cfg.RetireGrace.Milliseconds()+1))
	}
	memo.retireDue = due
	handed, revived, undone, err := s.handOver(ctx, now, d)
	if err != nil {
		return res, memo, err
	}
	res.Handed, res.Revived = handed, revived
	if res.Retired, err = s.retireOrphans(ctx, orphans, now); err != nil {
		return res, memo, err
	}
	deleted, notDeleted, err := s.deleteGone(ctx, gone, cutoff)
	if err != nil {
		return res, memo, err
	}
	res.Deleted = deleted
	memo.undone = undone || notDeleted
	return res, memo, nil
}

// selfLive reports whether the Store's owner is among live, or has no ID.
func (s *Store) selfLive(live []liveInstance) bool {
	if s.cfg.Self == "" {
		return true
	}
	for _, in := range live {
		if in.id == s.cfg.Self {
			return true
		}
	}
	return false
}

// orphanConfirm is how long a schedule must stay undeclared by any live
// instance before it is retired: about a heartbeat.
func (s *Store) orphanConfirm() time.Duration { return s.cfg.InstanceTTL / 3 }

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// declarations is what a full pass read of the registry's declarations.
type declarations struct {
	byID         map[string][]Declarer // schedule ID → the live instances that declare it
	lastDeclared map[string]int64      // schedule ID → when a live instance last declared it (ms)
	marks        []redis.Z             // "declared" scores to raise (never moved back)
}

// readDeclarations reads what the live instances declare and when each
// schedule was last declared. A schedule no live instance declares keeps
// its score, unless the record vouches it was declared later than that:
// then the score moves up to what the record says, before the record is
// replaced (handOver writes the marks).
func (s *Store) readDeclarations(ctx context.Context, now time.Time, live []liveInstance, rec sweepRecord) (declarations, error) {
	// A round trip per instance's declarations and per batch of each
	// partition's index: with a million schedules, one pipeline of them all
	// answered tens of megabytes, more than a read timeout allows.
	decls := make([][]string, len(live))
	for i, in := range live {
		var err error
		if decls[i], err = s.client.HKeys(ctx, s.keys.decl(in.id)).Result(); err != nil {
			return declarations{}, fmt.Errorf("schedstore: sweep: read the declarations of %s: %w", in.id, err)
		}
	}
	// ZSCAN, not ranges by rank: the marks move members while it reads,
	// and a scan returns every member present throughout (some twice).
	var zs []redis.Z
	for i := range s.keys.parts {
		for cursor := uint64(0); ; {
			kv, next, err := s.client.ZScan(ctx, s.keys.parts[i].schedules, cursor, "", int64(s.batch)).Result()
			if err != nil {
				return declarations{}, fmt.Errorf("schedstore: sweep: read: %w", err)
			}
			for k := 0; k+1 < len(kv); k += 2 {
				score, err := strconv.ParseFloat(kv[k+1], 64)
				if err != nil {
					return declarations{}, fmt.Errorf("schedstore: sweep: read: score of %q: %w", kv[k], err)
				}
				zs = append(zs, redis.Z{Member: kv[k], Score: score})
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	d := declarations{byID: map[string][]Declarer{}, lastDeclared: make(map[string]int64, len(zs))}
	for i, in := range live {
		dr := in.declarer()
		for _, sid := range decls[i] {
			d.byID[sid] = append(d.byID[sid], dr)
		}
	}
	nowMs := now.UnixMilli()
	d.marks = make([]redis.Z, 0, len(d.byID))
	for id := range d.byID {
		d.marks = append(d.marks, redis.Z{Score: float64(nowMs), Member: id})
	}
	for _, z := range zs {
		id, _ := z.Member.(string)
		score := int64(z.Score)
		if len(d.byID[id]) == 0 && rec.vouches(score) {
			score = rec.confirmed
			d.marks = append(d.marks, redis.Z{Score: float64(score), Member: id})
		}
		d.lastDeclared[id] = score
	}
	return d, nil
}

// handOver writes the pass's "declared" marks and its record, and gives
// each declared schedule whose declarer is not its highest-ranked live
// declarer (or that is missing, or retired) to that declarer, with its
// declaration. It returns the schedules handed over and those of them that
// were retired and are in force again, and reports whether it left work
// for a later sweep: a declaration that vanished or a claim that lost its
// race.
func (s *Store) handOver(ctx context.Context, now time.Time, d declarations) (handed, revived []string, undone bool, err error) {
	declarers := d.byID
	declared := make([]string, 0, len(declarers))
	for id := range declarers {
		declared = append(declared, id)
	}
	cur, err := s.readCurrent(ctx, declared)
	if err != nil {
		return nil, nil, false, err
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
		if c := cur[id]; !c.exists || c.retired || c.declarer.InstanceID != best.InstanceID {
			hands = append(hands, handover{id, best, c})
		}
	}
	// The marks (never moved back), then the record of this pass: a later
	// sweep that finds nothing changed moves its confirmed time on. The
	// definitions to hand over, from their new declarers.
	nowMs := now.UnixMilli()
	if err := s.zaddBatches(ctx, d.marks, true); err != nil {
		return nil, nil, false, fmt.Errorf("schedstore: sweep: %w", err)
	}
	if err := s.client.HSet(ctx, s.keys.sweep(), "full", nowMs, "confirmed", nowMs).Err(); err != nil {
		return nil, nil, false, fmt.Errorf("schedstore: sweep: %w", err)
	}
	defCmds := make([]*redis.StringCmd, len(hands))
	err = s.pipelinedBatches(ctx, len(hands), func(p redis.Pipeliner, i int) {
		defCmds[i] = p.HGet(ctx, s.keys.decl(hands[i].by.InstanceID), hands[i].id)
	}, nil)
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, false, fmt.Errorf("schedstore: sweep: %w", err)
	}
	var claims []claim
	for i, h := range hands {
		var def Definition
		if err := json.Unmarshal([]byte(defCmds[i].Val()), &def); err != nil || def.Validate() != nil {
			undone = true // declaration vanished (instance died) or is unreadable: next sweep
			continue
		}
		claims = append(claims, claim{def: def, by: h.by, cur: h.c})
	}
	results, err := s.claim(ctx, now, claims)
	if err != nil {
		return nil, nil, undone, fmt.Errorf("schedstore: sweep: %w", err)
	}
	for i, cl := range claims {
		switch results[i] {
		case claimLost:
			undone = true
		case claimRevived:
			revived = append(revived, cl.def.ID)
			handed = append(handed, cl.def.ID)
		default:
			handed = append(handed, cl.def.ID)
		}
	}
	return handed, revived, undone, nil
}

// retireOrphans retires the orphans (retireScript) and returns those
// retired now.
func (s *Store) retireOrphans(ctx context.Context, orphans []string, now time.Time) ([]string, error) {
	calls := make([]scriptCall, len(orphans))
	for i, id := range orphans {
		pk := s.keys.of(id)
		calls[i] = scriptCall{keys: []string{s.keys.sched(id), pk.schedules, pk.changed}, args: []any{id, now.UnixMilli(), now.UnixMilli()}}
	}
	cmds, err := s.evalPipelined(ctx, retireScript, calls, nil)
	if err != nil {
		return nil, fmt.Errorf("schedstore: sweep: retire: %w", err)
	}
	var retired []string
	for i, c := range cmds {
		if n, _ := c.Int(); n == 1 {
			retired = append(retired, orphans[i])
		}
	}
	return sortedStrings(retired), nil
}

// deleteGone deletes the schedules not declared since cutoff, with their
// state and history. It reports whether one was refused (declared again
// meanwhile, or failed): look again.
func (s *Store) deleteGone(ctx context.Context, gone []string, cutoff int64) ([]string, bool, error) {
	calls := make([]scriptCall, len(gone))
	for i, id := range gone {
		pk := s.keys.of(id)
		calls[i] = scriptCall{keys: []string{s.keys.sched(id), pk.schedules, s.keys.history(id), pk.changed},
			args: []any{id, strconv.FormatInt(cutoff, 10)}}
	}
	cmds, err := s.evalPipelined(ctx, deleteScript, calls, nil)
	if err != nil {
		return nil, false, fmt.Errorf("schedstore: sweep: delete: %w", err)
	}
	var deleted []string
	refused := false
	for i, c := range cmds {
		if n, _ := c.Int(); n == 1 {
			deleted = append(deleted, gone[i])
		} else {
			refused = true
		}
	}
	return sortedStrings(deleted), refused, nil
}
