package rdb

import "github.com/redis/go-redis/v9"

// The scripts below each do one state change in one round trip. Every key
// they touch arrives in KEYS (see keys.go); none is built in Lua.

// enqueueScript adds a task. KEYS and ARGV as EnqueueKeys and EnqueueArgs.
var enqueueScript = redis.NewScript(EnqueueFunc + "return " + EnqueueCall(1, 1))

// fetchSrc, run as fetchScript, reads up to ARGV[3] new entries for
// consumer ARGV[2] of group ARGV[1] from the streams KEYS[m+1...], where m
// is ARGV[4] and KEYS[1...m] are paused sets. The streams come in blocks,
// one per queue: ARGV[5+2b] is the queue name of block b (from 0) and
// ARGV[6+2b] its number of streams, the queue's shares in as many
// partitions (Store.Fetch off a cluster). With m = 1 the one paused set
// is that of every stream; otherwise each block's streams have the paused
// sets KEYS[1...m] in order. A paused queue's stream is not read.
//
// Queues are read in order: earlier queues are drained first, which is how
// queue priority is applied within one fetch. Of one queue's unpaused
// streams, the first (the caller rotates the order of the partitions every
// round) is read first, for the whole count; if that leaves some, the
// others are read with one XREADGROUP that asks each for an even share of
// what is left, then one by one in order for what the full ones may still
// hold (one by one from the start when less is left than there are
// streams). Reading the first stream alone keeps the tasks of a round, and
// so the acknowledgements of a finish batch, in few streams when queues
// are long; one command for the others keeps an empty round cheap, since
// each command a script sends costs Redis more than reading an empty
// stream does. The paused sets are looked at one by one only when one of
// them exists.
//
// It returns a flat list of (stream index, entry ID, encoded message)
// triples; a triple with an empty entry ID reports a stream whose queue is
// paused (message "paused") or that has no consumer group (message "").
// When the count is 0 nothing is read and every stream's pause is reported
// (a fetcher on a cluster with fewer free slots than partitions asks so,
// to know which streams it may block on); otherwise the reading stops once
// the count is reached, and pauses are reported for the queues looked at.
//
// On Redis Cluster a call holds the streams and the paused set of one
// partition (one slot). On a single server one call may hold every
// partition's streams and paused sets: slots do not matter there.
//
// Redis does not roll a script back when it fails, so a missing group must
// not raise an error: entries already read from earlier streams in this
// call would stay pending for this consumer with their reply lost, and wait
// a whole visibility timeout for recovery. The reads use redis.pcall and
// skip such a stream instead.
const fetchSrc = `
local n = tonumber(ARGV[3])
local m = tonumber(ARGV[4])
local pausesOnly = n <= 0
local anyPaused = redis.call('EXISTS', unpack(KEYS, 1, m)) > 0
local out = {}
local function add(i, entries)
  for _, e in ipairs(entries) do
    out[#out+1] = i
    out[#out+1] = e[1]
    out[#out+1] = (e[2] and e[2][2]) or ''
  end
  n = n - #entries
end
-- readOne reads what it can of stream i; it returns an error reply other
-- than NOGROUP, which it reports.
local function readOne(i)
  local key = KEYS[m + i]
  local res = redis.pcall('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', n, 'STREAMS', key, '>')
  if type(res) == 'table' and res.err then
    if not string.find(res.err, 'NOGROUP') then return res end
    out[#out+1] = i
    out[#out+1] = ''
    out[#out+1] = ''
  elseif res then
    add(i, res[1][2])
  end
end
local first = 1
for b = 0, (#ARGV - 6) / 2 do
  if n <= 0 and not pausesOnly then break end
  local queue, k = ARGV[5 + 2 * b], tonumber(ARGV[6 + 2 * b])
  local open = {}
  for t = 1, k do
    local i = first + t - 1
    if anyPaused and redis.call('SISMEMBER', KEYS[math.min(t, m)], queue) == 1 then
      out[#out+1] = i
      out[#out+1] = ''
      out[#out+1] = 'paused'
    else
      open[#open+1] = i
    end
  end
  if n > 0 and #open > 0 then
    local err = readOne(open[1])
    if err then return redis.error_reply(err.err) end
    local rest = {}
    for x = 2, #open do rest[#rest+1] = open[x] end
    if n > 0 and #rest > 1 and n >= #rest then
      local share = math.floor(n / #rest)
      local cmd = {'XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', share, 'STREAMS'}
      for y = 1, #rest do cmd[7 + y] = KEYS[m + rest[y]] end
      for y = 1, #rest do cmd[7 + #rest + y] = '>' end
      local res = redis.pcall(unpack(cmd))
      if not (type(res) == 'table' and res.err) then -- else a group is missing: one by one
        local full = {}
        local y = 1
        for _, st in ipairs(res or {}) do
          while KEYS[m + rest[y]] ~= st[1] do y = y + 1 end
          add(rest[y], st[2])
          if #st[2] == share then full[#full+1] = rest[y] end
        end
        rest = full
      end
    end
    for _, i in ipairs(rest) do
      if n <= 0 then break end
      err = readOne(i)
      if err then return redis.error_reply(err.err) end
    end
  end
  first = first + k
end
return out
`

var fetchScript = redis.NewScript(fetchSrc)

// finishFunc defines the Lua function
//
//	chronos_finish(ko, nk, ao, na) -> 1, 0 or -1
//
// which ends one delivery of a task, reading its nk keys from KEYS[ko+1...]
// and its na arguments from ARGV[ao+1...]:
//
//	keys: stream, runs, delayed, dead, dead index, and for a task under an
//	      overlap marker: overlap active set, buffer, where (overlap.go)
//	args: group, entry ID, outcome ("done", "retry" or "dead"), runs cap,
//	      task ID, encoded message, score (due time for retry, death time
//	      for dead), wake channel, dead cap, consumer, then run-record
//	      field/value pairs
//
// Only the consumer that holds the entry may finish it: if the entry is no
// longer pending (finished already) the function returns 0, and if another
// consumer has recovered it the function returns -1 and changes nothing, so
// bookkeeping happens once per delivery however many workers ran it.
//
// When chronos_acks is a table (finishManySrc sets it), the XACK and XDEL
// of a plain success are not sent at once but collected per stream and
// sent once for the whole batch: chronos_acks[stream] = {ids = {...},
// seen = {id = true}}. An entry already collected counts as finished.
const finishFunc = `
local chronos_acks = nil
local function chronos_finish(ko, nk, ao, na)
  local outcome = ARGV[ao + 3]
  local collected = chronos_acks and chronos_acks[KEYS[ko + 1]]
  if collected and collected.seen[ARGV[ao + 2]] then return 0 end
  local acks = outcome == 'done' and nk == 5 and collected
  local p = redis.call('XPENDING', KEYS[ko + 1], ARGV[ao + 1], ARGV[ao + 2], ARGV[ao + 2], 1)
  if not p[1] then return 0 end
  if p[1][2] ~= ARGV[ao + 10] then return -1 end
  if acks then
    acks.seen[ARGV[ao + 2]] = true
    acks.ids[#acks.ids + 1] = ARGV[ao + 2]
  else
    redis.call('XACK', KEYS[ko + 1], ARGV[ao + 1], ARGV[ao + 2])
    redis.call('XDEL', KEYS[ko + 1], ARGV[ao + 2])
  end
  if outcome == 'retry' then
    local due = tonumber(ARGV[ao + 7])
    local first = redis.call('ZRANGE', KEYS[ko + 3], 0, 0, 'WITHSCORES')
    redis.call('ZADD', KEYS[ko + 3], due, ARGV[ao + 6])
    if first[2] == nil or due < tonumber(first[2]) then
      redis.call('PUBLISH', ARGV[ao + 8], KEYS[ko + 3])
    end
  elseif outcome == 'dead' then
    redis.call('HSET', KEYS[ko + 4], ARGV[ao + 5], ARGV[ao + 6])
    redis.call('ZADD', KEYS[ko + 5], ARGV[ao + 7], ARGV[ao + 5])
    -- Trim at most 100 at a time: after the cap is lowered, later deaths
    -- finish the job, and unpack never meets Lua's stack limit.
    local over = math.min(redis.call('ZCARD', KEYS[ko + 5]) - tonumber(ARGV[ao + 9]), 100)
    if over > 0 then
      local old = redis.call('ZRANGE', KEYS[ko + 5], 0, over - 1)
      redis.call('ZREMRANGEBYRANK', KEYS[ko + 5], 0, over - 1)
      redis.call('HDEL', KEYS[ko + 4], unpack(old))
    end
  end
  if tonumber(ARGV[ao + 4]) > 0 and na > 10 then
    redis.call('XADD', KEYS[ko + 2], 'MAXLEN', '~', ARGV[ao + 4], '*', unpack(ARGV, ao + 11, ao + na))
  end
  if nk > 5 then
    if outcome == 'retry' then
      chronos_overlap_retried(KEYS[ko + 6], KEYS[ko + 8], KEYS[ko + 1], ARGV[ao + 5], ARGV[ao + 7])
    else
      chronos_release(KEYS[ko + 6], KEYS[ko + 7], KEYS[ko + 8], KEYS[ko + 1], ARGV[ao + 5])
    end
  end
  return 1
end
`

// finishSrc, run as finishScript, ends one delivery: KEYS and ARGV are
// those of chronos_finish.
const finishSrc = finishFunc + `return chronos_finish(0, #KEYS, 0, #ARGV)
`

// finishScript also keeps a scheduled run's overlap marker when given the
// overlap keys as KEYS[6], KEYS[7] and KEYS[8] (see overlap.go): a retry
// records that the task now waits in the delayed set, done and dead end the
// run.
var finishScript = redis.NewScript(OverlapFunc + finishSrc)

// finishManySrc, run as finishManyScript, ends ARGV[1] deliveries in one
// call: for each, ARGV holds its key count and argument count and then its
// arguments, and KEYS its keys, in order. It returns one result per
// delivery, as chronos_finish does; a delivery whose finish raised an error
// gets that error as its result and the others are unaffected, as if each
// had been a script call of its own. One call for a batch instead of one
// per delivery saves Redis the script call's own cost, which was about as
// much as the commands inside it.
const finishManySrc = finishFunc + `
local out = {}
local ko, ao = 0, 1
chronos_acks = {}
local streams = {}
for n = 1, tonumber(ARGV[1]) do
  local nk, na = tonumber(ARGV[ao + 1]), tonumber(ARGV[ao + 2])
  ao = ao + 2
  if not chronos_acks[KEYS[ko + 1]] then
    chronos_acks[KEYS[ko + 1]] = {ids = {}, seen = {}, group = ARGV[ao + 1]}
    streams[#streams + 1] = KEYS[ko + 1]
  end
  local ok, res = pcall(chronos_finish, ko, nk, ao, na)
  if ok then
    out[n] = res
  elseif type(res) == 'table' and res.err then
    out[n] = res
  else
    out[n] = redis.error_reply(tostring(res))
  end
  ko, ao = ko + nk, ao + na
end
for _, key in ipairs(streams) do
  local a = chronos_acks[key]
  if #a.ids > 0 then
    redis.call('XACK', key, a.group, unpack(a.ids))
    redis.call('XDEL', key, unpack(a.ids))
  end
end
return out
`

var finishManyScript = redis.NewScript(OverlapFunc + finishManySrc)

// forwardSrc, run as forwardScript, moves up to ARGV[2] delayed tasks due at or before ARGV[1]
// (unix ms) from the delayed set KEYS[1] to the stream KEYS[2]. It returns
// the number moved and the score of the earliest task left ("-1" if none),
// so the forwarder can sleep exactly until then.
const forwardSrc = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, m in ipairs(due) do
  redis.call('XADD', KEYS[2], '*', 'm', m)
end
if #due > 0 then
  redis.call('ZREM', KEYS[1], unpack(due))
end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {#due, nxt[2] or '-1'}
`

var forwardScript = redis.NewScript(forwardSrc)

// reclaimSrc, run as reclaimScript, takes over entries of stream KEYS[1] that have been pending
// longer than ARGV[3] ms, for consumer ARGV[2] of group ARGV[1], scanning the
// pending list from cursor ARGV[4] and claiming at most ARGV[5]. It returns
// the next cursor followed by (entry ID, encoded message, delivery count)
// triples; the count includes this delivery.
const reclaimSrc = `
local res = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], 'COUNT', ARGV[5])
local out = {res[1]}
for _, e in ipairs(res[2]) do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], e[1], e[1], 1)
  local n = 0
  if p[1] then n = p[1][4] end
  out[#out+1] = e[1]
  out[#out+1] = (e[2] and e[2][2]) or ''
  out[#out+1] = n
end
return out
`

var reclaimScript = redis.NewScript(reclaimSrc)

// leaseSrc, run as leaseScript, renews or releases the leases of consumer ARGV[2] (group
// ARGV[1]) on the entries ARGV[4...] of stream KEYS[1]. With ARGV[3] = "0" it
// resets their idle time (the heartbeat); otherwise it sets their idle time
// to ARGV[3] ms, so the recoverer hands them to another worker at once, and
// gives back the delivery it did not use. Entries that another consumer has
// taken are left alone and returned: their lease is lost.
const leaseSrc = `
local lost = {}
for i = 4, #ARGV do
  local id = ARGV[i]
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
  if p[1] and p[1][2] == ARGV[2] then
    if ARGV[3] == '0' then
      redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, id, 'JUSTID')
    else
      local rc = p[1][4] - 1
      if rc < 0 then rc = 0 end
      redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, id, 'IDLE', ARGV[3], 'RETRYCOUNT', rc, 'JUSTID')
    end
  else
    lost[#lost+1] = id
  end
end
return lost
`

var leaseScript = redis.NewScript(leaseSrc)

// requeueDeadSrc, run as requeueDeadScript, moves dead letter ARGV[1] from the hash KEYS[1] and the
// index KEYS[2] to the stream KEYS[3] as message ARGV[2]. It returns 0 if the
// dead letter no longer exists.
const requeueDeadSrc = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('XADD', KEYS[3], '*', 'm', ARGV[2])
return 1
`

var requeueDeadScript = redis.NewScript(requeueDeadSrc)

// deleteDeadSrc, run as deleteDeadScript, removes dead letter ARGV[1] from the hash KEYS[1] and the
// index KEYS[2]. It returns 0 if it did not exist.
const deleteDeadSrc = `
redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('HDEL', KEYS[1], ARGV[1])
`

var deleteDeadScript = redis.NewScript(deleteDeadSrc)

// trimDeadSrc, run as trimDeadScript, drops from the dead letters KEYS[1]
// and their index KEYS[2] the oldest ones, at most ARGV[2], that died at
// or before ARGV[1] (an index score): a partition's share of the
// namespace-wide trim (Store.TrimDead). Bounded by a time, not only a
// count, two trims of one state drop the same letters. It returns how
// many it dropped.
const trimDeadSrc = `
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if #old == 0 then return 0 end
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, #old - 1)
redis.call('HDEL', KEYS[1], unpack(old))
return #old
`

var trimDeadScript = redis.NewScript(trimDeadSrc)

// oldestDeadSrc, run as oldestDeadScript, returns the number of dead
// letters in the index KEYS[1] and its ARGV[1] oldest (ID, score pairs),
// read at one moment (Store.TrimDead).
const oldestDeadSrc = `
return {redis.call('ZCARD', KEYS[1]), redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')}
`

var oldestDeadScript = redis.NewScript(oldestDeadSrc)

// releaseLockSrc, run as releaseLockScript, deletes the lock KEYS[1] if it
// still holds the token ARGV[1]: a holder whose lock expired does not
// release the next holder's.
const releaseLockSrc = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`

var releaseLockScript = redis.NewScript(releaseLockSrc)

// pruneConsumersSrc, run as pruneConsumersScript, deletes from group ARGV[1]
// of stream KEYS[1] every consumer other than ARGV[3] that holds no pending
// entries and has not been seen for ARGV[2] ms: the names left behind by
// crashed servers once their tasks were recovered. Checking and deleting in
// one script means no entry can be claimed by a consumer between the check
// and its deletion, so nothing is ever dropped; a live consumer that is
// deleted is recreated by its next read. It returns how many it deleted.
const pruneConsumersSrc = `
local removed = 0
local cs = redis.pcall('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if type(cs) == 'table' and cs.err then return 0 end -- no stream or group yet: nothing to prune
for _, c in ipairs(cs) do
  local f = {}
  for i = 1, #c, 2 do f[c[i]] = c[i+1] end
  if f['pending'] == 0 and f['idle'] > tonumber(ARGV[2]) and f['name'] ~= ARGV[3] then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f['name'])
    removed = removed + 1
  end
end
return removed
`

var pruneConsumersScript = redis.NewScript(pruneConsumersSrc)
