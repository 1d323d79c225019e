package chronos

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// fireBody is the part of the fire script after the leader fence. One
// script run is one trigger of one schedule: one round trip, atomic.
//
//	KEYS[1] lease (checked by the fence), KEYS[2] schedule hash,
//	KEYS[3] dedup key of the trigger, KEYS[4] history list,
//	then per job: stream, delayed set, overlap active set, overlap buffer,
//	overlap where (rdb/overlap.go)
//	ARGV[1] token, ARGV[2] wake channel, ARGV[3] now (ms),
//	ARGV[4] dedup TTL (ms), ARGV[5] new prev (ms; 0 = do not touch the
//	trigger state: operator requests and isolated firings),
//	ARGV[6] next, ARGV[7] trigger start, ARGV[8] times triggered,
//	ARGV[9] repeat count, ARGV[10] complete (1/0), ARGV[11] slot (ms),
//	ARGV[12] history cap, ARGV[13] source word, ARGV[14] overlap mode,
//	ARGV[15] job count, then per job: name, message, task ID, due (ms)
//
// Steps: the schedule must still exist; the dedup key <schedule>:<slot> is
// claimed with SET NX PX (taken: "duplicate"); the new state must move
// last_fired forward (else "stale": a later firing is recorded); each job
// is enqueued with rdb.EnqueueFunc unless its overlap marker says skip or
// buffer (after dropping the marker's tasks that no longer exist: history
// result "cleared"); the trigger state is written; the firing goes to the
// history. Returns {status, job outcomes..., ["cleared", job, task ID...]}.
const fireBody = rdb.EnqueueFunc + rdb.OverlapFunc + `
local now = tonumber(ARGV[3])
local prev = tonumber(ARGV[5])
if prev > 0 and redis.call('EXISTS', KEYS[2]) == 0 then return {'gone'} end
if not redis.call('SET', KEYS[3], ARGV[18], 'NX', 'PX', ARGV[4]) then
  return {'duplicate', redis.call('GET', KEYS[3]) or ''}
end
if prev > 0 then
  local stored = tonumber(redis.call('HGET', KEYS[2], 'last_fired') or '0')
  if prev <= stored then return {'stale', tostring(stored)} end
end
local mode = ARGV[14]
local out = {'fired'}
local hist = {}
local outcome = 'fired'
local stale = {}
for j = 1, tonumber(ARGV[15]) do
  local k, a = 4 + 5 * (j - 1), 15 + 4 * (j - 1)
  local name, msg, id = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local res = 'enqueued'
  local busy = mode ~= 'allow' and redis.call('SCARD', KEYS[k + 3]) > 0
  local cleared = {}
  if busy then
    cleared = chronos_overlap_heal(KEYS[k + 3], KEYS[k + 4], KEYS[k + 5], KEYS[k + 1], KEYS[k + 2])
    if #cleared > 0 then busy = redis.call('SCARD', KEYS[k + 3]) > 0 end
  end
  if busy then
    if mode == 'bufferOne' and redis.call('EXISTS', KEYS[k + 4]) == 0 then
      redis.call('HSET', KEYS[k + 4], 'id', id, 'm', msg)
      res = 'buffered'
    else
      res = 'skipped'
      outcome = 'skipped:overlap'
    end
  else
    chronos_enqueue(KEYS[k + 1], KEYS[k + 2], KEYS[3], ARGV[2], msg, id, tonumber(ARGV[a + 4]), now, 0)
    if mode ~= 'allow' then
      redis.call('DEL', KEYS[k + 5]) -- the set was empty: any record left is an orphan
      chronos_overlap_track(KEYS[k + 3], KEYS[k + 5], KEYS[k + 1], id, ARGV[a + 4], now)
    end
  end
  out[#out + 1] = res
  hist[#hist + 1] = {job = name, task = id, result = res}
  for _, c in ipairs(cleared) do
    hist[#hist + 1] = {job = name, task = c, result = 'cleared'}
    stale[#stale + 1] = name
    stale[#stale + 1] = c
  end
end
if prev > 0 then
  redis.call('HSET', KEYS[2], 'last_fired', ARGV[5], 'next_fire', ARGV[6], 'trigger_start', ARGV[7],
    'times_triggered', ARGV[8], 'repeat_count', ARGV[9], 'last_outcome', outcome, 'state_saved', ARGV[3])
  if ARGV[10] == '1' then
    redis.call('HSET', KEYS[2], 'complete', '1')
  else
    redis.call('HDEL', KEYS[2], 'complete')
  end
end
redis.call('LPUSH', KEYS[4], cjson.encode({at = now, slot = tonumber(ARGV[11]), src = ARGV[13], jobs = hist}))
redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[12]) - 1)
if #stale > 0 then
  out[#out + 1] = 'cleared'
  for _, v in ipairs(stale) do out[#out + 1] = v end
end
return out
`

// fireScript is the leader's fire script: leader.FenceLua, then fireBody.
var fireScript = leader.FenceScript(fireBody)

// isolatedFireScript fires an isolated schedule. It has no fence (every
// instance fires its own isolated schedules) and never writes trigger
// state (that lives in the instance's memory); its dedup key includes the
// instance. KEYS[1] and ARGV[1] are unused.
var isolatedFireScript = redis.NewScript(fireBody)

// Fire statuses returned by the script.
const (
	fireFired     = "fired"
	fireDuplicate = "duplicate"
	fireStale     = "stale"
	fireGone      = "gone"
)

// fireReq is one trigger to fire.
type fireReq struct {
	id     string
	plan   *plan
	slot   time.Time // the trigger's identity (trigger.Fire.Scheduled)
	at     time.Time // when it should run
	dedup  string
	source string // "trigger", "catchup", "request", "backfill", "isolated"
	// state is the trigger state after this firing; nil for firings that do
	// not advance the trigger (requests, isolated schedules).
	state *trigger.State
	// paused reports jobs of a group paused at firing time.
	paused func(job string) bool
}

// fireResult is what the script did with one fireReq.
type fireResult struct {
	status  string
	jobs    []string // per job: enqueued, buffered, skipped
	cleared []string // job, task ID pairs: stale overlap markers dropped
	err     error
}

// dedupTTL is how long a trigger's dedup key lives.
//
// The dedup key is the second net under exactly-once; the first is the
// fence plus the last_fired check in the same script, which already stops
// any firing computed from a state older than the stored one, for good. The
// key matters only while a second evaluation of the same slot can still
// reach Redis without being stopped by those: an instance that (wrongly)
// holds the current token, or a leader's evaluation in flight during a
// handoff. Such an evaluation is at most one trust window (LeaderTTL) old
// when it arrives, and a catch-up evaluation can hand out a slot up to
// MisfireThreshold late. Twice their sum, and never under a minute, covers
// both with margin, while keeping the keys few: a schedule firing every
// second holds about 2×(5+60) = 130 of them with the defaults. A longer TTL
// would buy nothing but memory (100k schedules at 1,000 triggers/s would
// hold 3.6M keys per hour of TTL).
func (s *Scheduler) dedupTTL() time.Duration {
	return max(2*(s.cfg.LeaderTTL+s.cfg.MisfireThreshold), time.Minute)
}

// historyKey is the capped list of a schedule's firing records.
func (s *Scheduler) historyKey(id string) string { return s.q.K.Prefix() + "history:" + id }

// fireCall builds the keys and arguments of one fire script run.
func (s *Scheduler) fireCall(term leader.Term, r *fireReq, now time.Time) ([]string, []any, error) {
	p := r.plan
	keys := make([]string, 0, 4+5*len(p.jobs))
	keys = append(keys, leader.KeysFor(s.cfg.Namespace).Lock, s.store.SchedKey(r.id), s.q.K.Dedup(r.dedup), s.historyKey(r.id))
	args := make([]any, 0, 15+4*len(p.jobs))
	args = append(args, term.Token, s.q.K.Wake(), now.UnixMilli(), s.dedupTTL().Milliseconds())
	if st := r.state; st != nil {
		complete := "0"
		if st.Complete {
			complete = "1"
		}
		args = append(args, st.Prev.UnixMilli(), msOrZero(st.Next), msOrZero(st.Start), st.TimesTriggered, st.RepeatCount, complete)
	} else {
		args = append(args, 0, 0, 0, 0, 0, "0")
	}
	args = append(args, r.slot.UnixMilli(), s.cfg.HistoryLimit, r.source, p.overlap.String())
	njobIdx := len(args)
	args = append(args, 0)
	n := 0
	for _, j := range p.jobs {
		if r.paused != nil && r.paused(j.name) {
			continue
		}
		m, due := j.opts.message(j.kind, j.payload, now)
		m.ScheduleID = r.id
		m.TriggerTime = r.slot.UnixMilli()
		if p.def.Isolated {
			m.Queue = s.IsolatedQueue()
		}
		if p.overlap != OverlapAllow {
			m.Overlap = r.id + ":" + j.name
		}
		b, err := m.Encode()
		if err != nil {
			return nil, nil, err
		}
		marker := r.id + ":" + j.name
		keys = append(keys, s.q.K.Stream(m.Queue), s.q.K.Delayed(m.Queue), s.q.K.OverlapActive(marker), s.q.K.OverlapBuffer(marker),
			s.q.K.OverlapWhere(marker))
		args = append(args, j.name, b, m.ID, msOrZero(due))
		n++
	}
	args[njobIdx] = n
	if n == 0 {
		// Every job is paused: the dedup value (ARGV[18]) must still exist.
		args = append(args, "", "", "", 0)
	}
	return keys, args, nil
}

func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fire runs the fire script for each request, all in one pipeline: one
// EVALSHA, and so one round trip's share, per trigger. Requests that meet
// NOSCRIPT (Redis restarted) did not run; they are sent again after the
// script is loaded.
func (s *Scheduler) fire(ctx context.Context, script *redis.Script, term leader.Term, reqs []*fireReq) []fireResult {
	out := make([]fireResult, len(reqs))
	if len(reqs) == 0 {
		return out
	}
	now := s.now()
	type call struct {
		keys []string
		args []any
	}
	calls := make([]call, len(reqs))
	todo := make([]int, 0, len(reqs))
	for i, r := range reqs {
		k, a, err := s.fireCall(term, r, now)
		if err != nil {
			out[i].err = err
			continue
		}
		calls[i] = call{k, a}
		todo = append(todo, i)
	}
	cmds := make([]*redis.Cmd, len(reqs))
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt > 0 {
			if err := script.Load(ctx, s.rdb).Err(); err != nil {
				for _, i := range todo {
					out[i].err = err
				}
				break
			}
		}
		var wait *redis.Cmd
		if len(todo) == 1 && s.cfg.Replicas == 0 {
			i := todo[0]
			cmds[i] = script.EvalSha(ctx, s.rdb, calls[i].keys, calls[i].args...)
		} else {
			_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, i := range todo {
					cmds[i] = script.EvalSha(ctx, p, calls[i].keys, calls[i].args...)
				}
				if s.cfg.Replicas > 0 {
					// WAIT counts the writes of its own connection: a
					// pipeline keeps it on the scripts' connection.
					wait = p.Do(ctx, "WAIT", s.cfg.Replicas, max(s.cfg.LeaderTTL/10, time.Millisecond).Milliseconds())
				}
				return nil
			})
		}
		if wait != nil {
			if n, err := wait.Int64(); err != nil || n < int64(s.cfg.Replicas) {
				s.log.Warn("chronos: firings not acknowledged by enough replicas; a failover now could fire them again",
					"replicas", n, "want", s.cfg.Replicas, "firings", len(todo), "err", err)
			}
		}
		var again []int
		for _, i := range todo {
			if err := cmds[i].Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") && attempt == 0 {
				again = append(again, i)
			}
		}
		todo = again
	}
	defer s.recordFirings(reqs, out, s.now()) // the replies are in: now is when the enqueues were confirmed
	for i, c := range cmds {
		if c == nil || out[i].err != nil {
			continue
		}
		res, err := c.StringSlice()
		if err != nil {
			out[i].err = leader.CheckFence(err)
			continue
		}
		if len(res) == 0 {
			out[i].err = fmt.Errorf("empty reply")
			continue
		}
		out[i].status, out[i].jobs = res[0], res[1:]
		if k := slices.Index(out[i].jobs, "cleared"); k >= 0 {
			out[i].jobs, out[i].cleared = out[i].jobs[:k], out[i].jobs[k+1:]
			for c := 0; c+1 < len(out[i].cleared); c += 2 {
				s.log.Warn("chronos: overlap: cleared the marker of a run that is no longer queued, delayed or running",
					"schedule", reqs[i].id, "job", out[i].cleared[c], "task_id", out[i].cleared[c+1], "trigger", reqs[i].slot)
			}
		}
	}
	return out
}

// dedupKey is the dedup identity of a trigger: <schedule>:<slot unix
// seconds>, or <schedule>:<slot unix ms> for the rare slot that is not on
// a whole second (a fire moved to "now" keeps its slot's identity, so this
// only concerns simple triggers with a sub-second start).
func dedupKey(id string, slot time.Time) string {
	if slot.Nanosecond() == 0 {
		return id + ":" + strconv.FormatInt(slot.Unix(), 10)
	}
	return id + ":" + strconv.FormatInt(slot.UnixMilli(), 10) + "ms"
}
