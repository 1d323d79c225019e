package schedstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Every instance keeps, in memory, the last state it saw of the schedules
// it declares, so that when Redis loses its data (a restart without
// persistence, FLUSHALL, a failover to an empty replica) the instances put
// the registry back as it was, and the next leader catches up from where
// the cluster really was instead of from now. Every script that changes a
// schedule's state (a firing, SaveState, a pause or resume, a retirement)
// also scores the schedule in its partition's changed index (<p>changed)
// with the time of the change, so an instance reads only what changed
// since its last look (ChangedSince, then GetMany): a cost proportional to
// the changes, not to the registry.

// changedLua defines
//
//	chronos_changed(changed, now, id)
//
// which scores schedule id in the changed index with the time of a change:
// now (ms, the writer's clock), or one more than its score so far if that
// is not below now. A schedule's score so strictly grows with every change,
// however close two changes of different writers come, and a reader that
// knows it holds the state of change score S of a schedule (Change.At)
// needs to read it again only once its score passes S. It returns the
// score before (0: none) and after, as ChangeScore computes it.
const changedLua = `
local function chronos_changed(changed, now, id)
  local at = tonumber(now)
  local old = tonumber(redis.call('ZSCORE', changed, id) or '0')
  if old >= at then at = old + 1 end
  redis.call('ZADD', changed, at, id)
  return old, at
end
`

// ChangeScore is the score chronos_changed gives a change made at now
// (ms) to a schedule whose score was old.
func ChangeScore(old, now int64) int64 {
	if old >= now {
		return old + 1
	}
	return now
}

// Change is one entry of the changed index: schedule ID changed, last at
// At (its score, ms).
type Change struct {
	ID string
	At int64
}

// ChangedSince returns the schedules whose state changed at or after since
// (by the writer's clock), with the score of their latest change, and the
// latest change time among them (since when there is none): one
// ZRANGEBYSCORE per partition, in one pipeline, of at most Store.batch
// changes each; a partition with more (every schedule changed at once, as
// when instances start and claim them) is read whole in a round trip of
// its own, so that no reply of every partition's changes outlasts the
// read timeout.
func (s *Store) ChangedSince(ctx context.Context, since time.Time) ([]Change, time.Time, error) {
	cmds := make([]*redis.ZSliceCmd, len(s.keys.parts))
	rng := func() *redis.ZRangeBy {
		return &redis.ZRangeBy{Min: strconv.FormatInt(since.UnixMilli(), 10), Max: "+inf"}
	}
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range s.keys.parts {
			r := rng()
			r.Count = int64(s.batch) + 1
			cmds[i] = p.ZRangeByScoreWithScores(ctx, s.keys.parts[i].changed, r)
		}
		return nil
	})
	if err != nil {
		return nil, since, fmt.Errorf("schedstore: changed schedules: %w", err)
	}
	var out []Change
	last := since
	for i, c := range cmds {
		zs := c.Val()
		if len(zs) > s.batch {
			if zs, err = s.client.ZRangeByScoreWithScores(ctx, s.keys.parts[i].changed, rng()).Result(); err != nil {
				return nil, since, fmt.Errorf("schedstore: changed schedules: %w", err)
			}
		}
		for _, z := range zs {
			id, _ := z.Member.(string)
			out = append(out, Change{ID: id, At: int64(z.Score)})
			if t := time.UnixMilli(int64(z.Score)); t.After(last) {
				last = t
			}
		}
	}
	return out, last, nil
}

// ChangeScores returns the changed-index score of each of ids (0: none):
// one ZMSCORE per partition for each batch of batchSize IDs, a pipeline
// per batch. Read before the schedules
// themselves, a score is a lower bound of the change their state holds.
func (s *Store) ChangeScores(ctx context.Context, ids []string) (map[string]int64, error) {
	out := make(map[string]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	err := s.inBatches(len(ids), func(lo, hi int) error {
		byPart := make([][]string, len(s.keys.parts))
		for _, id := range ids[lo:hi] {
			p := s.PartitionOf(id)
			byPart[p] = append(byPart[p], id)
		}
		cmds := make([]*redis.FloatSliceCmd, len(s.keys.parts))
		_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, part := range byPart {
				if len(part) > 0 {
					cmds[i] = p.ZMScore(ctx, s.keys.parts[i].changed, part...)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i, c := range cmds {
			if c == nil {
				continue
			}
			for k, sc := range c.Val() {
				out[byPart[i][k]] = int64(sc)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schedstore: change scores: %w", err)
	}
	return out, nil
}

// mirrorFields are the fields of a schedule hash that GetStates reads:
// everything but the definition.
var mirrorFields = []string{
	FieldID, FieldCreated, FieldDefChanged, FieldRetired, FieldRetiredBy,
	FieldNextFire, FieldLastFired, FieldTriggerStart, FieldTimesTriggered, FieldRepeatCount, FieldComplete,
	FieldLastOutcome, FieldStateSaved, FieldResumedAt,
	FieldPaused, FieldPauseNote, FieldPausedBy, FieldPausedAt, FieldPauseUntil,
}

// GetStates returns the schedules of ids that exist without their
// definitions: the creation and definition-change times, the retirement,
// the trigger state and the pauses, of the whole schedule and of the jobs
// jobs(id) names. One HMGET per schedule, pipelined (pipelinedBatches).
// It is what an instance remembers of the schedules it declares (it has their
// definitions itself), read without the definitions' fields and JSON.
func (s *Store) GetStates(ctx context.Context, ids []string, jobs func(id string) []string) (map[string]Schedule, error) {
	cmds := make([]*redis.SliceCmd, len(ids))
	names := make([][]string, len(ids))
	out := make(map[string]Schedule, len(ids))
	err := s.pipelinedBatches(ctx, len(ids), func(p redis.Pipeliner, i int) {
		id := ids[i]
		names[i] = mirrorFields
		if js := jobs(id); len(js) > 0 {
			names[i] = slices.Clone(mirrorFields)
			for _, j := range js {
				names[i] = append(names[i], FieldJobPausePrefix+j)
			}
		}
		cmds[i] = p.HMGet(ctx, s.keys.sched(id), names[i]...)
	}, func(i int) error {
		vals, fields := cmds[i].Val(), names[i]
		cmds[i], names[i] = nil, nil
		if len(vals) == 0 || vals[0] == nil {
			return nil // no such schedule
		}
		m := make(map[string]string, len(vals))
		for k, v := range vals {
			if str, ok := v.(string); ok {
				m[fields[k]] = str
			}
		}
		sc, err := decodeSchedule(m)
		if err != nil {
			return err
		}
		out[sc.ID] = sc
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schedstore: get the state of %d schedules: %w", len(ids), err)
	}
	return out, nil
}

// encodeSchedule is the schedule hash of sc, as field/value pairs: what
// decodeSchedule reads.
func encodeSchedule(sc Schedule) ([]any, error) {
	d := sc.Definition
	jobs, err := json.Marshal(d.Jobs)
	if err != nil {
		return nil, err
	}
	a := []any{
		FieldID, d.ID, FieldKind, d.Kind, FieldSpec, d.Spec, FieldJobs, jobs, FieldDefHash, sc.DefHash,
		FieldDeclaredBy, sc.DeclaredBy.InstanceID, FieldDeclaredVersion, sc.DeclaredBy.Version,
		FieldDeclaredStart, ms(sc.DeclaredBy.Started), FieldCreated, ms(sc.Created), FieldDefChanged, ms(sc.DefChanged),
	}
	for _, kv := range [][2]string{{FieldZone, d.Zone}, {FieldPolicy, d.Policy}, {FieldGroup, d.Group}, {FieldOverlap, d.Overlap}, {FieldSource, d.Source}} {
		if kv[1] != "" {
			a = append(a, kv[0], kv[1])
		}
	}
	if d.Isolated {
		a = append(a, FieldIsolated, "1")
	}
	st := sc.State
	if !st.Saved.IsZero() || !st.Next.IsZero() || !st.Prev.IsZero() {
		a = append(a, FieldNextFire, ms(st.Next), FieldLastFired, ms(st.Prev), FieldTriggerStart, ms(st.Start),
			FieldTimesTriggered, st.TimesTriggered, FieldRepeatCount, st.RepeatCount, FieldStateSaved, ms(st.Saved))
		if st.LastOutcome != "" {
			a = append(a, FieldLastOutcome, st.LastOutcome)
		}
		if st.Complete {
			a = append(a, FieldComplete, "1")
		}
	}
	if p := st.Pause; p != nil {
		a = append(a, FieldPaused, "1", FieldPauseNote, p.Note, FieldPausedBy, p.Who, FieldPausedAt, ms(p.At), FieldPauseUntil, ms(p.Until))
	}
	for job, p := range st.JobPauses {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		a = append(a, FieldJobPausePrefix+job, b)
	}
	if !sc.Retired.IsZero() {
		a = append(a, FieldRetired, ms(sc.Retired))
		if sc.RetiredBy != "" {
			a = append(a, FieldRetiredBy, sc.RetiredBy)
		}
	}
	return a, nil
}

// seedScript puts a schedule back as an instance last saw it: the whole
// hash when it is missing, or only a later trigger state than the stored
// one (another instance seeded it from an older look).
//
//	KEYS[1] schedule hash, KEYS[2] schedules index, KEYS[3] changed index
//	ARGV[1] id, ARGV[2] now (ms), ARGV[3..8] state (stateArgs), ARGV[9]
//	outcome, ARGV[10] saved (ms), ARGV[11…] the hash's field/value pairs
//
// Returns 1 when created, 2 when its state was advanced, 0 otherwise.
var seedScript = redis.NewScript(changedLua + stateLua + `
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 11))
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
  chronos_changed(KEYS[3], ARGV[2], ARGV[1])
  return 1
end
if tonumber(ARGV[3]) > chronos_last_fired(KEYS[1]) then
  chronos_save_state(KEYS[1], KEYS[3], ARGV[1], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10])
  return 2
end
return 0
`)

// SeedResult says what Seed did.
type SeedResult struct {
	Created  int // schedules put back whole
	Advanced int // schedules whose stored state was older than the seed's
}

// Seed puts schedules back into a registry that lost them, as the caller
// last saw them (see the comment at the top of this file), in one
// pipeline: a missing schedule is written whole, definition, creation
// time, state and pauses; one that another instance seeded already only
// gets a later state. Run it before Register, which would otherwise create
// a missing schedule afresh.
func (s *Store) Seed(ctx context.Context, scs []Schedule) (SeedResult, error) {
	var res SeedResult
	calls := make([]scriptCall, 0, len(scs))
	now := s.cfg.Now().UnixMilli()
	for _, sc := range scs {
		fields, err := encodeSchedule(sc)
		if err != nil {
			return res, fmt.Errorf("schedstore: seed %q: %w", sc.ID, err)
		}
		args := append([]any{sc.ID, now}, stateArgs(sc.State.TriggerState)...)
		args = append(args, sc.State.LastOutcome, ms(sc.State.Saved))
		pk := s.keys.of(sc.ID)
		calls = append(calls, scriptCall{
			keys: []string{s.keys.sched(sc.ID), pk.schedules, pk.changed},
			args: append(args, fields...),
		})
	}
	cmds, err := s.evalPipelined(ctx, seedScript, calls, nil)
	if err != nil {
		return res, fmt.Errorf("schedstore: seed: %w", err)
	}
	for i, c := range cmds {
		n, err := c.Int()
		if err != nil {
			return res, fmt.Errorf("schedstore: seed %q: %w", scs[i].ID, err)
		}
		switch n {
		case 1:
			res.Created++
		case 2:
			res.Advanced++
		}
	}
	return res, nil
}
