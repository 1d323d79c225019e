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

// Outcome says what Register did with one definition.
type Outcome int

const (
	// Created: the schedule did not exist; this definition now does.
	Created Outcome = iota + 1
	// Changed: this declarer's definition replaced a different one.
	Changed
	// Claimed: this declarer took over a schedule with the same definition.
	Claimed
	// Current: this declarer's definition was already in force.
	Current
	// Outranked: another live instance outranks this one; its definition
	// stays in force. RegisterResult.Conflicts lists it if the definitions
	// differ.
	Outranked
)

func (o Outcome) String() string {
	switch o {
	case Created:
		return "created"
	case Changed:
		return "changed"
	case Claimed:
		return "claimed"
	case Current:
		return "current"
	case Outranked:
		return "outranked"
	}
	return "unknown"
}

// RegisterResult reports what Register did.
type RegisterResult struct {
	// Outcomes holds the outcome of every registered ID.
	Outcomes map[string]Outcome
	// Conflicts lists the IDs whose definition in force differs from the
	// one registered, because a live instance outranks the registrant.
	Conflicts []string
	// Revived lists the IDs that were retired (no live instance declared
	// them) and are in force again, continuing from their state.
	Revived []string
}

// claimScript writes a definition and its declarer if the schedule's
// declarer is still the one the caller read (compare-and-set), so two
// instances registering at once cannot interleave.
//
//	KEYS[1] schedule hash, KEYS[2] schedules index, KEYS[3] changed index
//	ARGV[1] id, ARGV[2] expected declared_by ("" = must not exist),
//	ARGV[3] expected declared_start, ARGV[4] now (ms), ARGV[5] def hash,
//	ARGV[6…] field/value pairs to set
//
// Returns 1 when written, 2 when written and the schedule was retired (it
// is in force again), 0 when the declarer changed meanwhile.
var claimScript = redis.NewScript(changedLua + `
local cur = redis.call('HMGET', KEYS[1], 'declared_by', 'declared_start', 'def_hash')
if ARGV[2] == '' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
  redis.call('HSET', KEYS[1], 'created', ARGV[4])
elseif cur[1] ~= ARGV[2] or cur[2] ~= ARGV[3] then
  return 0
end
if cur[3] ~= ARGV[5] then
  redis.call('HSET', KEYS[1], 'def_changed', ARGV[4])
end
redis.call('HDEL', KEYS[1], 'zone', 'policy', 'isolated', 'group', 'overlap', 'source', 'late_after', 'failing_after')
local revived = redis.call('HDEL', KEYS[1], 'retired', 'retired_by')
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
chronos_changed(KEYS[3], ARGV[4], ARGV[1])
if revived > 0 then return 2 end
return 1
`)

// swapDeclScript puts an instance's declarations written to their own key
// in place of its declarations, with their digest.
//
//	KEYS[1] declarations, KEYS[2] the new ones, KEYS[3] instance hash
//	ARGV[1] digest, ARGV[2] TTL (ms), ARGV[3] "1" if there are any
//
// Returns 0, changing nothing, when there are new declarations and their
// key is gone (expired), else 1.
var swapDeclScript = redis.NewScript(`
local any = ARGV[3] == '1'
if any and redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('UNLINK', KEYS[1])
if any then
  redis.call('RENAME', KEYS[2], KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
redis.call('HSET', KEYS[3], '` + fieldDeclDigest + `', ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1
`)

// zaddBatches adds marks, each to the schedules index of its member's
// partition, batchSize members a pipeline; gt adds them with GT (a score
// never moves back).
func (s *Store) zaddBatches(ctx context.Context, marks []redis.Z, gt bool) error {
	return s.inBatches(len(marks), func(lo, hi int) error {
		byPart := make([][]redis.Z, len(s.keys.parts))
		for _, z := range marks[lo:hi] {
			id, _ := z.Member.(string)
			p := s.PartitionOf(id)
			byPart[p] = append(byPart[p], z)
		}
		_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, zs := range byPart {
				switch {
				case len(zs) == 0:
				case gt:
					p.ZAddArgs(ctx, s.keys.parts[i].schedules, redis.ZAddArgs{GT: true, Members: zs})
				default:
					p.ZAdd(ctx, s.keys.parts[i].schedules, zs...)
				}
			}
			return nil
		})
		return err
	})
}

// current is what the store holds about a schedule's declarer.
type current struct {
	exists   bool
	declarer Declarer
	start    string // declared_start exactly as stored, for the CAS
	hash     string
	retired  bool
}

// Register records that instance d declares defs (replacing its previous
// declarations) and puts each definition in force unless a live instance
// that outranks d (see Declarer) declares the same ID. Call it after the
// instance's first Heartbeat, and again whenever its definitions change.
// State (next fire, last fired, pauses) is kept when a definition changes.
func (s *Store) Register(ctx context.Context, d Declarer, defs []Definition) (RegisterResult, error) {
	res := RegisterResult{Outcomes: make(map[string]Outcome, len(defs))}
	byID := make(map[string]Definition, len(defs))
	decl := make([]any, 0, 2*len(defs))
	encoded := make(map[string][]byte, len(defs))
	for _, def := range defs {
		if err := def.Validate(); err != nil {
			return res, err
		}
		if _, dup := byID[def.ID]; dup {
			return res, fmt.Errorf("%w: schedule %q declared twice", ErrInvalidDefinition, def.ID)
		}
		byID[def.ID] = def
		b, err := json.Marshal(def)
		if err != nil {
			return res, fmt.Errorf("schedstore: encode %q: %w", def.ID, err)
		}
		decl = append(decl, def.ID, b)
		encoded[def.ID] = b
	}
	now := s.cfg.Now()

	// The declarations, replaced as a whole, and their digest (which tells
	// the leader's Sweep that they changed). They are written to a key of
	// their own, batchSize at a time, then swapped in with the digest by
	// one script on the control keys: a million of them in one HSET (and
	// the DEL of the last ones) held Redis for most of a second each and
	// outlasted a client's timeouts. The hash replaced is UNLINKed: freed
	// off Redis's main thread.
	next := s.keys.declNext(d.InstanceID)
	ttl := (2 * s.cfg.InstanceTTL).Milliseconds()
	err := s.inBatches(len(decl)/2, func(lo, hi int) error {
		_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			if lo == 0 {
				p.Unlink(ctx, next) // what a registration that failed midway left
			}
			p.HSet(ctx, next, decl[2*lo:2*hi]...)
			p.PExpire(ctx, next, 2*s.cfg.InstanceTTL)
			return nil
		})
		return err
	})
	if err != nil {
		return res, fmt.Errorf("schedstore: register %s: declarations: %w", d.InstanceID, err)
	}
	swapped, err := swapDeclScript.Run(ctx, s.client, []string{s.keys.decl(d.InstanceID), next, s.keys.instance(d.InstanceID)},
		declDigest(encoded), ttl, boolArg(len(decl) > 0)).Int()
	if err == nil && swapped == 0 {
		err = errors.New("the declarations written expired before they were swapped in")
	}
	if err != nil {
		return res, fmt.Errorf("schedstore: register %s: declarations: %w", d.InstanceID, err)
	}
	// "Declared now" marks, in each schedule's partition's index.
	if len(byID) > 0 {
		marks := make([]redis.Z, 0, len(byID))
		for id := range byID {
			marks = append(marks, redis.Z{Score: float64(now.UnixMilli()), Member: id})
		}
		if err := s.zaddBatches(ctx, marks, false); err != nil {
			return res, fmt.Errorf("schedstore: register %s: declared marks: %w", d.InstanceID, err)
		}
	}

	pending := make([]string, 0, len(byID))
	for id := range byID {
		pending = append(pending, id)
	}
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt == 5 {
			return res, fmt.Errorf("schedstore: register %s: %d schedules kept changing under us", d.InstanceID, len(pending))
		}
		cur, err := s.readCurrent(ctx, pending)
		if err != nil {
			return res, err
		}
		live, err := s.liveSet(ctx, now)
		if err != nil {
			return res, err
		}
		var claims []claim
		for _, id := range pending {
			def, c := byID[id], cur[id]
			hash := def.Hash()
			switch {
			case !c.exists:
				claims = append(claims, claim{def: def, by: d, cur: c, outcome: Created})
			case c.declarer.InstanceID == d.InstanceID || !live[c.declarer.InstanceID] || d.Outranks(c.declarer):
				o := Claimed
				if c.hash != hash {
					o = Changed
				} else if c.declarer.same(d) && !c.retired {
					res.Outcomes[id] = Current // nothing to write
					continue
				}
				claims = append(claims, claim{def: def, by: d, cur: c, outcome: o})
			default:
				res.Outcomes[id] = Outranked
				if c.hash != hash {
					res.Conflicts = append(res.Conflicts, id)
				}
			}
		}
		results, err := s.claim(ctx, now, claims)
		if err != nil {
			return res, fmt.Errorf("schedstore: register %s: %w", d.InstanceID, err)
		}
		pending = pending[:0]
		for i, cl := range claims {
			switch results[i] {
			case claimLost:
				pending = append(pending, cl.def.ID)
			case claimRevived:
				res.Revived = append(res.Revived, cl.def.ID)
				fallthrough
			default:
				res.Outcomes[cl.def.ID] = cl.outcome
			}
		}
	}
	return res, nil
}

// claim is one compare-and-set of a definition.
type claim struct {
	def     Definition
	by      Declarer
	cur     current
	outcome Outcome
}

// What one claim did.
type claimResult int

const (
	claimLost    claimResult = iota // the declarer changed meanwhile: nothing written
	claimWritten                    // the definition is in force
	claimRevived                    // in force again: it was retired
)

// claim runs the claims, a pipeline per batch (the arguments of a batch
// are made for it, not those of every claim at once), and reports what
// each did.
func (s *Store) claim(ctx context.Context, now time.Time, claims []claim) ([]claimResult, error) {
	if len(claims) == 0 {
		return nil, nil
	}
	out := make([]claimResult, len(claims))
	err := s.inBatches(len(claims), func(lo, hi int) error {
		calls := make([]scriptCall, hi-lo)
		for i, cl := range claims[lo:hi] {
			args, err := claimArgs(now, cl)
			if err != nil {
				return err
			}
			pk := s.keys.of(cl.def.ID)
			calls[i] = scriptCall{keys: []string{s.keys.sched(cl.def.ID), pk.schedules, pk.changed}, args: args}
		}
		cmds, err := s.evalPipelined(ctx, claimScript, calls, nil)
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		for i, c := range cmds {
			n, err := c.Int()
			if err != nil {
				return fmt.Errorf("claim %q: %w", claims[lo+i].def.ID, err)
			}
			out[lo+i] = claimResult(n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func claimArgs(now time.Time, cl claim) ([]any, error) {
	d := cl.def
	jobs, err := json.Marshal(d.Jobs)
	if err != nil {
		return nil, fmt.Errorf("encode jobs of %q: %w", d.ID, err)
	}
	hash := d.Hash()
	args := []any{d.ID, "", "", now.UnixMilli(), hash}
	if cl.cur.exists {
		args[1], args[2] = cl.cur.declarer.InstanceID, cl.cur.start
	}
	args = append(args,
		FieldID, d.ID, FieldKind, d.Kind, FieldSpec, d.Spec, FieldJobs, jobs, FieldDefHash, hash,
		FieldDeclaredBy, cl.by.InstanceID, FieldDeclaredVersion, cl.by.Version,
		FieldDeclaredStart, strconv.FormatInt(ms(cl.by.Started), 10))
	for _, kv := range [][2]string{{FieldZone, d.Zone}, {FieldPolicy, d.Policy}, {FieldGroup, d.Group}, {FieldOverlap, d.Overlap}, {FieldSource, d.Source}} {
		if kv[1] != "" {
			args = append(args, kv[0], kv[1])
		}
	}
	if d.Isolated {
		args = append(args, FieldIsolated, "1")
	}
	if d.LateAfter > 0 {
		args = append(args, FieldLateAfter, strconv.FormatInt(max(d.LateAfter.Milliseconds(), 1), 10))
	}
	if d.FailingAfter > 0 {
		args = append(args, FieldFailingAfter, strconv.Itoa(d.FailingAfter))
	}
	return args, nil
}

// readCurrent reads the declarer and definition hash of ids, pipelined
// (pipelinedBatches).
func (s *Store) readCurrent(ctx context.Context, ids []string) (map[string]current, error) {
	cmds := make([]*redis.SliceCmd, len(ids))
	out := make(map[string]current, len(ids))
	err := s.pipelinedBatches(ctx, len(ids), func(p redis.Pipeliner, i int) {
		cmds[i] = p.HMGet(ctx, s.keys.sched(ids[i]), FieldDeclaredBy, FieldDeclaredVersion, FieldDeclaredStart, FieldDefHash, FieldID, FieldRetired)
	}, func(i int) error {
		v := cmds[i].Val()
		cmds[i] = nil
		str := func(j int) string { s, _ := v[j].(string); return s }
		if len(v) != 6 || v[4] == nil {
			out[ids[i]] = current{}
			return nil
		}
		out[ids[i]] = current{
			exists:   true,
			declarer: Declarer{InstanceID: str(0), Version: str(1), Started: msTime(str(2))},
			start:    str(2),
			hash:     str(3),
			retired:  v[5] != nil,
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schedstore: read declarers: %w", err)
	}
	return out, nil
}
