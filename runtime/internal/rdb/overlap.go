package rdb

import (
	"context"
	"fmt"
)

// Overlap control (the scheduler's WithOverlap) needs the queue to say when a
// scheduled run is over. A task whose Message.Overlap names a marker is a
// member of that marker's "active" set from the moment the scheduler's fire
// script enqueues it until its delivery finishes for good (done or dead; a
// retry is still the same run). The fire script skips, or buffers one
// firing, while the set is not empty; Finish removes the task and, when the
// set becomes empty, moves a buffered firing to the stream, all in the
// same script as the acknowledgement, so no crash can leave a marker behind.
//
//	{ns}:overlap:<marker>         SET   IDs of the queued or running tasks of a schedule's job
//	{ns}:overlap-buffer:<marker>  HASH  id, m: the one firing waiting for them (OverlapBufferOne)
//	{ns}:overlap-where:<marker>   HASH  task ID → where that active task is (below)
//
// # Stale markers
//
// A task can still vanish without finishing: its stream deleted or trimmed
// by hand, its delayed set deleted, Redis failing over to a replica that
// had not seen all of it. Its ID would then stay in the active set for good
// and the schedule would skip every firing. So the fire script, before it
// decides, checks each active member against the place the task must be if
// it exists, drops the ones that are not there (as if their finish had run,
// buffered firing included) and reports them.
//
// A task ID alone does not find a task: stream entries have IDs of their
// own and a delayed task is stored as its encoded message. The "where" hash
// records, for each active task, one of
//
//	s <entry> <stream>          queued or running: the stream entry <entry>
//	d <due> <after> <stream>    delayed until <due> (the delayed set's score),
//	                            or since moved by the forwarder to <stream>
//	                            at an entry ID greater than <after> ("-": any)
//
// The check costs one XRANGE of a single entry for "s"; for "d" one
// ZRANGEBYSCORE of the exact score and, only once the task has left the
// delayed set, one XRANGE of at most overlapScan entries after <after>. A
// task found in the stream that way is recorded as "s" from then on; a scan
// that finds neither it nor the end of the stream moves <after> forward and
// concludes nothing, so the next firing continues from there.
//
// # Why a live task is never dropped
//
// Scripts run one at a time, so the check never sees a task between two
// steps of a move. Every script that moves an active task records where it
// went in the same run: the fire script and the buffer release ("s", the
// entry they added), the finish script's retry ("d", the due time and the
// stream's newest entry). The one move that does not know the marker, the
// forwarder's delayed → stream, keeps the record true: it adds an entry
// whose ID is greater than every earlier one of that stream, so greater
// than <after>. Fetching, lease renewal and recovery leave the entry where it
// is. So between any two scripts an active task that exists is where its
// record says, and the check finds it. A race with the finish script is
// therefore harmless either way round: a finish that ran first has removed
// the ID and the check does not see it; one that runs after sees the member
// the check kept. When the check drops an ID whose task a worker still runs
// (its entry was deleted under it), that worker's finish finds no pending
// entry and changes nothing, and chronos_release would find no member.
//
// The check is conservative: a member with no record (queued by a version
// before this one), a record for another stream (the job's queue changed),
// more than overlapScan delayed tasks due in the same millisecond, or a scan
// that did not reach the end of the stream all count as "exists". Those are
// what Inspector.ClearOverlap is still for. One case is not covered: during
// a rolling upgrade, a task retried by a worker of an older version keeps a
// stale "s" record and can be dropped, allowing one overlapping run.

// OverlapFunc is a Lua fragment defining the overlap functions shared by the
// fire and finish scripts. Every key is a parameter, taken from KEYS by the
// caller.
//
//	chronos_overlap_track(active, where, stream, id, due, now)
//	    makes task id, just enqueued by chronos_enqueue, the active one;
//	    call it only on an empty active set (it drops records left over)
//	chronos_overlap_buffer(buffer, id, msg) -> true | false
//	    holds the firing of task id back until the active run ends, if no
//	    firing is buffered yet (OverlapBufferOne)
//	chronos_overlap_retried(active, where, stream, id, due)
//	    records that active task id moved to the delayed set until due
//	chronos_release(active, buffer, where, stream, id)
//	    ends task id's membership of the active set and, if that leaves the
//	    set empty, adds the buffered firing (if any) to stream and makes it
//	    the active one; the finish script calls it for done and dead
//	chronos_overlap_heal(active, buffer, where, stream, delayed) -> {id...}
//	    releases the active tasks that no longer exist and returns their IDs;
//	    call it only on a non-empty active set
//
// overlapScan (50) bounds every read of the check; the active set itself
// holds one task in normal operation, and at most 8 are checked per firing.
const OverlapFunc = `
local overlapScan = 50

local function chronos_overlap_is(msg, id)
  return msg ~= nil and msg ~= false and string.find(msg, '"id":"' .. id .. '"', 1, true) ~= nil
end

local function chronos_overlap_newest(stream)
  local e = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)
  if e[1] then return e[1][1] end
  return '-'
end

local function chronos_overlap_track(active, where, stream, id, due, now)
  redis.call('DEL', where) -- the set was empty: any record left is an orphan
  redis.call('SADD', active, id)
  if tonumber(due) > now then
    redis.call('HSET', where, id, 'd ' .. due .. ' ' .. chronos_overlap_newest(stream) .. ' ' .. stream)
  else
    redis.call('HSET', where, id, 's ' .. chronos_overlap_newest(stream) .. ' ' .. stream)
  end
end

local function chronos_overlap_buffer(buffer, id, msg)
  if redis.call('EXISTS', buffer) == 1 then return false end
  redis.call('HSET', buffer, 'id', id, 'm', msg)
  return true
end

local function chronos_overlap_retried(active, where, stream, id, due)
  if redis.call('SISMEMBER', active, id) == 1 then
    redis.call('HSET', where, id, 'd ' .. due .. ' ' .. chronos_overlap_newest(stream) .. ' ' .. stream)
  end
end

local function chronos_release(active, buffer, where, stream, id)
  if redis.call('SREM', active, id) == 0 then return end
  redis.call('HDEL', where, id)
  if redis.call('SCARD', active) > 0 then return end
  local b = redis.call('HMGET', buffer, 'id', 'm')
  if b[1] and b[2] then
    redis.call('DEL', buffer)
    local e = redis.call('XADD', stream, '*', 'm', b[2])
    redis.call('SADD', active, b[1])
    redis.call('HSET', where, b[1], 's ' .. e .. ' ' .. stream)
  end
end

-- chronos_overlap_exists says whether active task id, recorded at w, is
-- still a task: true, false, or nil when it cannot tell (kept).
local function chronos_overlap_exists(where, stream, delayed, id, w)
  if not w then return nil end
  local entry, q = string.match(w, '^s (%S+) (.*)$')
  if entry then
    if q ~= stream then return nil end
    local e = redis.call('XRANGE', stream, entry, entry)
    return e[1] ~= nil and chronos_overlap_is(e[1][2] and e[1][2][2], id)
  end
  local due, after
  due, after, q = string.match(w, '^d (%S+) (%S+) (.*)$')
  if not due or q ~= stream then return nil end
  local ms = redis.call('ZRANGEBYSCORE', delayed, due, due, 'LIMIT', 0, overlapScan)
  for _, m in ipairs(ms) do
    if chronos_overlap_is(m, id) then return true end
  end
  local from = '-'
  if after ~= '-' then from = '(' .. after end
  local es = redis.call('XRANGE', stream, from, '+', 'COUNT', overlapScan)
  for _, e in ipairs(es) do
    if chronos_overlap_is(e[2] and e[2][2], id) then
      redis.call('HSET', where, id, 's ' .. e[1] .. ' ' .. stream)
      return true
    end
  end
  if #es == overlapScan then
    redis.call('HSET', where, id, 'd ' .. due .. ' ' .. es[#es][1] .. ' ' .. stream)
    return nil
  end
  if #ms == overlapScan then return nil end
  return false
end

local function chronos_overlap_heal(active, buffer, where, stream, delayed)
  local ids = redis.call('SRANDMEMBER', active, 8)
  if #ids == 0 then return {} end
  local ws = redis.call('HMGET', where, unpack(ids))
  local gone = {}
  for i, id in ipairs(ids) do
    if chronos_overlap_exists(where, stream, delayed, id, ws[i]) == false then
      gone[#gone + 1] = id
    end
  end
  for _, id in ipairs(gone) do
    chronos_release(active, buffer, where, stream, id)
  end
  return gone
end
`

// OverlapMovedFunc is a Lua fragment for chronos migrate (package migrate),
// which re-adds the tasks of a layout-1 namespace to their partitions:
//
//	chronos_overlap_moved(active, where, stream, id, entry, due)
//	    records that task id, if it is an active task of the marker, is now
//	    the stream entry entry of stream (entry ~= false) or delayed until
//	    due in the delayed set of stream's queue (entry == false)
//
// so that the fire script's check of stale markers finds the task where it
// went (the records of the layout-1 keys name the old stream). A member
// without a record (written by a version before records) gets one.
const OverlapMovedFunc = `
local function chronos_overlap_moved(active, where, stream, id, entry, due)
  if redis.call('SISMEMBER', active, id) == 0 then return end
  if entry then
    redis.call('HSET', where, id, 's ' .. entry .. ' ' .. stream)
  else
    redis.call('HSET', where, id, 'd ' .. due .. ' - ' .. stream)
  end
end
`

// ClearOverlap deletes the overlap marker's keys: its active set, buffered
// firing and records (Inspector.ClearOverlap).
func (r *RDB) ClearOverlap(ctx context.Context, marker string) error {
	if err := r.C.Del(ctx, r.K.OverlapActive(marker), r.K.OverlapBuffer(marker), r.K.OverlapWhere(marker)).Err(); err != nil {
		return fmt.Errorf("rdb: clear overlap marker %q: %w", marker, err)
	}
	return nil
}
