package schedstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// stateLua defines
//
//	chronos_save_state(key, changed, id, prev, next, start, times, repeat, complete, outcome, now)
//
// which writes a schedule's trigger state to its hash and notes the change
// in the changed index (mirror.go): the arguments are the decimal strings
// of TriggerState's fields (times in unix ms, complete "1" or "0"), the
// outcome word and when it was saved. Both scripts that change trigger
// state, saveStateScript and the fire script, use it.
const stateLua = changedLua + `
local function chronos_save_state(key, changed, id, prev, nxt, start, times, rep, complete, outcome, now)
  local old, at = chronos_changed(changed, now, id)
  redis.call('HSET', key, '` + FieldLastFired + `', prev, '` + FieldNextFire + `', nxt, '` + FieldTriggerStart + `', start,
    '` + FieldTimesTriggered + `', times, '` + FieldRepeatCount + `', rep, '` + FieldLastOutcome + `', outcome,
    '` + FieldStateSaved + `', now)
  if complete == '1' then
    redis.call('HSET', key, '` + FieldComplete + `', '1')
  else
    redis.call('HDEL', key, '` + FieldComplete + `')
  end
  return old, at
end
local function chronos_last_fired(key)
  return tonumber(redis.call('HGET', key, '` + FieldLastFired + `') or '0')
end
`

// stateArgs returns ts as chronos_save_state's prev … complete arguments.
func stateArgs(ts TriggerState) []any {
	complete := "0"
	if ts.Complete {
		complete = "1"
	}
	return []any{ms(ts.Prev), ms(ts.Next), ms(ts.Start), ts.TimesTriggered, ts.RepeatCount, complete}
}

// saveStateScript writes a schedule's trigger state inside the term of the
// leader that computed it. Prev (last_fired) never moves back, so a late or
// replayed write from an earlier evaluation cannot rewind what catch-up
// relies on; writing the same state again is harmless.
//
//	KEYS[1] lease, KEYS[2] schedule hash, KEYS[3] changed index
//	ARGV[1] token, ARGV[2..7] state (stateArgs), ARGV[8] outcome, ARGV[9] now (ms),
//	ARGV[10] schedule ID
//
// Returns 1 when saved, 0 when the schedule does not exist, 2 when the
// stored state has a later Prev.
var saveStateScript = leader.FenceScript(stateLua + `
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
if tonumber(ARGV[2]) < chronos_last_fired(KEYS[2]) then return 2 end
chronos_save_state(KEYS[2], KEYS[3], ARGV[10], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
return 1
`)

// ErrStale is returned (wrapped) by SaveState when the stored state already
// has a later Prev than the one being saved.
var ErrStale = errors.New("schedstore: a later firing is already recorded")

// SaveState stores ts as schedule id's trigger state under leadership term
// t of the schedule's partition, with an outcome word for operators ("misfire:doNothing", …). It
// returns an error wrapping leader.ErrFenced if t no longer holds the
// lease, ErrStale if a later firing is already recorded, ErrNotFound if the
// schedule does not exist.
//
// Fire makes the same update in the script that enqueues the firing, so
// that the enqueue and the state change are one atomic step; SaveState is
// that step on its own, for evaluations that enqueue nothing (slots
// skipped by a misfire policy) and for tools.
func (s *Store) SaveState(ctx context.Context, t leader.Term, id string, ts TriggerState, outcome string) error {
	args := append(stateArgs(ts), outcome, s.cfg.Now().UnixMilli(), id)
	pk := s.keys.of(id)
	n, err := saveStateScript.Run(ctx, s.client, leader.FenceKeys(pk.lease, s.keys.sched(id), pk.changed), leader.FenceArgs(t, args...)...).Int()
	if err := leader.CheckFence(err); err != nil {
		return fmt.Errorf("schedstore: save state of %q: %w", id, err)
	}
	switch n {
	case 0:
		return fmt.Errorf("schedstore: save state of %q: %w", id, ErrNotFound)
	case 2:
		return fmt.Errorf("schedstore: save state of %q (prev %v): %w", id, ts.Prev, ErrStale)
	}
	return nil
}

// Firing is one trigger of one schedule for Fire to enqueue: its jobs'
// tasks, ready to store, and the trigger state after it.
type Firing struct {
	Schedule string
	Slot     time.Time // the trigger it stands for (history)
	Dedup    string    // the trigger's dedup key (rdb.Keys.Dedup names its claim)
	Source   string    // trigger, catchup, request, backfill, isolated (history)
	Overlap  string    // the schedule's overlap mode: "allow", "skip" or "bufferOne"
	// State is the trigger state after this firing; nil for firings that
	// do not advance the trigger (operator requests, isolated schedules).
	State *TriggerState
	Jobs  []FireJob // the jobs not paused; may be empty
}

// FireJob is one task of a firing.
type FireJob struct {
	Name    string    // the job's name in its schedule (history)
	Queue   string    // where the task goes
	TaskID  string    // the task's ID, inside Msg too
	Msg     []byte    // the encoded task (rdb.Message)
	Due     time.Time // zero or not after now: ready at once; later: delayed
	Overlap string    // the overlap marker of the schedule's job; "" under "allow"
}

// Fire statuses (FireResult.Status), the fire script's first reply word.
const (
	FireFired     = "fired"     // the jobs' outcomes are in FireResult.Jobs
	FireDuplicate = "duplicate" // the trigger's dedup key is held: enqueued before
	FireStale     = "stale"     // a later firing is recorded: the state was computed from old data
	FireGone      = "gone"      // the schedule no longer exists, or is retired
)

// FireResult is what the fire script did with one Firing.
type FireResult struct {
	Status string
	// Jobs holds, for FireFired, each job's outcome in order: "enqueued",
	// "buffered" or "skipped" (by the overlap policy).
	Jobs []string
	// Cleared lists the stale overlap markers the firing dropped before
	// deciding (rdb/overlap.go): runs that no longer existed.
	Cleared []FiringJob
	// ChangedBefore is, for FireFired with a state, the schedule's score in
	// the changed index before this firing (0: none): with the firing's
	// now, ChangeScore gives the score after it (a mirror's Change.At).
	ChangedBefore int64
	// Err is set when the firing did not run: a Redis error, or an error
	// wrapping leader.ErrFenced.
	Err error
}

// FireOptions are the parameters of Fire that do not change between calls.
type FireOptions struct {
	// DedupTTL is how long a trigger's dedup key lives.
	DedupTTL time.Duration
	// HistoryLimit is how many firing records are kept per schedule.
	HistoryLimit int
	// Guard, if it asks for replicas, makes the fire script refuse to run
	// on a master with fewer online than Guard.Required (an old master
	// after a failover: leader.ReplicaLua), and Fire wait (WAIT) for them
	// to acknowledge the batch, for up to ReplicaTimeout.
	Guard          *leader.ReplicaGuard
	ReplicaTimeout time.Duration
}

// ErrUnderReplicated is returned (wrapped) by Fire when fewer replicas than
// FireOptions.Replicas acknowledged a batch in time. The firings ran: a
// failover now could lose them and let them run again.
var ErrUnderReplicated = errors.New("schedstore: firings not acknowledged by enough replicas")

// fireBody is the fire script after the fence: one run is one trigger of
// one schedule, one atomic step.
//
//	KEYS[1] lease (the fence), KEYS[2] schedule hash, KEYS[3] the trigger's
//	dedup claim, KEYS[4] history list, KEYS[5] changed index, then per job
//	fireJobKeys keys:
//	rdb.EnqueueKeys (stream, delayed set, dedup claim), then the overlap
//	marker's active set, buffer and where (rdb/overlap.go)
//	ARGV[1] token, ARGV[2] now (ms), ARGV[3] dedup TTL (ms), ARGV[4] dedup
//	value (the first job's task ID), ARGV[5..10] the state after the
//	firing (stateArgs; prev 0: do not touch the trigger state), ARGV[11]
//	slot (ms), ARGV[12] history cap, ARGV[13] source, ARGV[14] overlap
//	mode, ARGV[15] job count, ARGV[16] the replicas that must be online
//	(leader.ReplicaLua), then per job fireJobArgs arguments: its name
//	and rdb.EnqueueArgs (dedup TTL 0: the trigger's claim is made once)
//
// Steps: the schedule must still exist and not be retired (else "gone");
// the dedup key is
// claimed with SET NX PX (taken: "duplicate"); the new state must move
// last_fired forward (else "stale": a later firing is recorded); each job
// is enqueued unless its overlap marker says skip or buffer (after dropping
// the marker's runs that no longer exist); the state is written; the firing
// goes to the history. Returns {"fired", the changed-index score before
// (FireResult.ChangedBefore), job outcomes..., ["cleared", job, task ID,
// ...]}, or {status, detail} for the others.
var fireBody = leader.ReplicaLua + rdb.EnqueueFunc + rdb.OverlapFunc + stateLua + historyLua + `
chronos_require_replicas(tonumber(ARGV[16]))
local now = tonumber(ARGV[2])
local prev = tonumber(ARGV[5])
local sched = redis.call('HMGET', KEYS[2], '` + FieldID + `', '` + FieldRetired + `', '` + FieldLastFired + `')
if prev > 0 and (not sched[1] or sched[2]) then return {'gone'} end
if not redis.call('SET', KEYS[3], ARGV[4], 'NX', 'PX', ARGV[3]) then
  return {'duplicate', redis.call('GET', KEYS[3]) or ''}
end
local stored = tonumber(sched[3] or '0')
if prev > 0 and prev <= stored then return {'stale', tostring(stored)} end
local mode = ARGV[14]
local out = {'fired', '0'}
local hist = {}
local outcome = 'fired'
local stale = {}
for j = 1, tonumber(ARGV[15]) do
  local k, a = 5 + ` + strconv.Itoa(fireJobKeys) + ` * (j - 1), 16 + ` + strconv.Itoa(fireJobArgs) + ` * (j - 1)
  local e, o = a + 1, k + ` + strconv.Itoa(rdb.EnqueueKeyCount) + `
  local name, msg, id, due = ARGV[a + 1], ` + rdb.EnqueueArgAt("e", rdb.EnqueueArgMsg) + `, ` +
	rdb.EnqueueArgAt("e", rdb.EnqueueArgID) + `, ` + rdb.EnqueueArgAt("e", rdb.EnqueueArgDue) + `
  local stream, delayed = ` + rdb.EnqueueKeyAt("k", rdb.EnqueueKeyStream) + `, ` + rdb.EnqueueKeyAt("k", rdb.EnqueueKeyDelayed) + `
  local active, buffer, where = KEYS[o + 1], KEYS[o + 2], KEYS[o + 3]
  local res = 'enqueued'
  local busy = mode ~= 'allow' and redis.call('SCARD', active) > 0
  local cleared = {}
  if busy then
    cleared = chronos_overlap_heal(active, buffer, where, stream, delayed)
    if #cleared > 0 then busy = redis.call('SCARD', active) > 0 end
  end
  if busy then
    if mode == 'bufferOne' and chronos_overlap_buffer(buffer, id, msg) then
      res = 'buffered'
    else
      res = 'skipped'
      outcome = 'skipped:overlap'
    end
  else
    ` + rdb.EnqueueCallAt("k", "e") + `
    if mode ~= 'allow' then chronos_overlap_track(active, where, stream, id, due, now) end
  end
  out[#out + 1] = res
  hist[#hist + 1] = {name, id, res}
  for _, c in ipairs(cleared) do
    hist[#hist + 1] = {name, c, 'cleared'}
    stale[#stale + 1] = name
    stale[#stale + 1] = c
  end
end
if prev > 0 then
  local old = chronos_save_state(KEYS[2], KEYS[5], sched[1], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], outcome, ARGV[2])
  out[2] = string.format('%d', old)
end
chronos_history(KEYS[4], tonumber(ARGV[12]), ARGV[2], ARGV[11], ARGV[13], hist)
if #stale > 0 then
  out[#out + 1] = 'cleared'
  for _, v in ipairs(stale) do out[#out + 1] = v end
end
return out
`

// The per-job strides of the fire script's KEYS and ARGV.
const (
	fireJobKeys = rdb.EnqueueKeyCount + 3 // + overlap active, buffer, where
	fireJobArgs = 1 + rdb.EnqueueArgCount // name + EnqueueArgs
)

// fireScript is the leader's fire script: leader.FenceLua, then fireBody.
var fireScript = leader.FenceScript(fireBody)

// FireScriptHash is the SHA1 of the leader's fire script, for tests and
// benchmarks that count its runs in Redis's command statistics.
func FireScriptHash() string { return fireScript.Hash() }

// fireCall returns the keys and arguments of the fire script for f.
func (s *Store) fireCall(t leader.Term, f *Firing, now time.Time, o *FireOptions) ([]string, []any) {
	pk := s.keys.of(f.Schedule)
	q := pk.queue
	dedup := q.Dedup(f.Dedup)
	keys := make([]string, 0, 5+fireJobKeys*len(f.Jobs))
	keys = append(keys, pk.lease.Lock, s.keys.sched(f.Schedule), dedup, s.keys.history(f.Schedule), pk.changed)
	claim := ""
	if len(f.Jobs) > 0 {
		claim = f.Jobs[0].TaskID
	}
	args := make([]any, 0, 16+fireJobArgs*len(f.Jobs))
	args = append(args, t.Token, now.UnixMilli(), max(o.DedupTTL.Milliseconds(), 1), claim)
	if f.State != nil {
		args = append(args, stateArgs(*f.State)...)
	} else {
		args = append(args, 0, 0, 0, 0, 0, "0")
	}
	args = append(args, ms(f.Slot), max(o.HistoryLimit, 1), f.Source, f.Overlap, len(f.Jobs), o.Guard.Required())
	for _, j := range f.Jobs {
		keys = append(keys, q.EnqueueKeys(j.Queue, f.Dedup)...)
		keys = append(keys, q.OverlapActive(j.Overlap), q.OverlapBuffer(j.Overlap), q.OverlapWhere(j.Overlap))
		args = append(args, j.Name)
		args = append(args, q.EnqueueArgs(j.Msg, j.TaskID, j.Due, now, 0)...)
	}
	return keys, args
}

// Fire runs the fire script once per firing, all in one pipeline: one
// EVALSHA, and so a share of one round trip, per trigger, each fenced by
// the leader's term t. Every firing must be of a schedule of the partition
// whose lease t holds: the script runs in the schedule's partition, with
// that partition's lease, and enqueues into that partition's share of the
// queues.
// Firings that meet NOSCRIPT (Redis restarted and lost its script cache)
// did not run; they are sent again once the script is loaded. With
// FireOptions.Replicas the pipeline ends with WAIT, on the scripts'
// connection, and a shortfall is reported by an error wrapping
// ErrUnderReplicated alongside the results, which stand.
func (s *Store) Fire(ctx context.Context, t leader.Term, now time.Time, firings []*Firing, o FireOptions) ([]FireResult, error) {
	out := make([]FireResult, len(firings))
	if len(firings) == 0 {
		return out, nil
	}
	calls := make([]scriptCall, len(firings))
	for i, f := range firings {
		calls[i].keys, calls[i].args = s.fireCall(t, f, now, &o)
	}
	var wait *waitFor
	if o.Guard.Want() > 0 {
		wait = &waitFor{replicas: o.Guard.Required(), timeout: o.ReplicaTimeout}
	}
	cmds, err := s.evalPipelined(ctx, fireScript, calls, wait)
	if err != nil {
		for i := range out {
			out[i].Err = err
		}
		return out, nil
	}
	for i, c := range cmds {
		out[i] = fireResult(c)
	}
	if wait != nil {
		o.Guard.Observe(wait.info)
		if wait.acked < wait.replicas {
			return out, fmt.Errorf("%w: %d of %d within %v: %v", ErrUnderReplicated, wait.acked, wait.replicas, o.ReplicaTimeout, wait.err)
		}
	}
	return out, nil
}

// Outcome is the outcome word a FireFired result stored as the schedule's
// last outcome: "skipped:overlap" when the overlap policy skipped a job,
// else "fired" (the fire script's rule).
func (r FireResult) Outcome() string {
	for _, j := range r.Jobs {
		if j == "skipped" {
			return "skipped:overlap"
		}
	}
	return "fired"
}

// fireResult reads the fire script's reply.
func fireResult(c *redis.Cmd) FireResult {
	res, err := c.StringSlice()
	if leader.IsNoReplicas(err) {
		return FireResult{Err: fmt.Errorf("%w: %v", leader.ErrNotReplicated, err)}
	}
	if err != nil {
		return FireResult{Err: leader.CheckFence(err)}
	}
	if len(res) == 0 {
		return FireResult{Err: errors.New("schedstore: fire: empty reply")}
	}
	r := FireResult{Status: res[0], Jobs: res[1:]}
	if r.Status == FireFired && len(r.Jobs) > 0 {
		r.ChangedBefore, _ = strconv.ParseInt(r.Jobs[0], 10, 64)
		r.Jobs = r.Jobs[1:]
	}
	for k, w := range r.Jobs {
		if w != "cleared" {
			continue
		}
		pairs := r.Jobs[k+1:]
		r.Jobs = r.Jobs[:k]
		for c := 0; c+1 < len(pairs); c += 2 {
			r.Cleared = append(r.Cleared, FiringJob{Job: pairs[c], Task: pairs[c+1], Result: "cleared"})
		}
		break
	}
	if r.Status != FireFired {
		r.Jobs = nil // the rest of the reply is the holder's ID or the stored last_fired
	}
	return r
}
