package rdb

import (
	"fmt"
	"strconv"
	"time"
)

// EnqueueFunc is a Lua fragment defining the local function
//
//	chronos_enqueue(stream, delayed, dedup, wake, msg, id, due_ms, now_ms, dedup_ttl_ms) -> {id, duplicate}
//
// which adds one encoded task to a queue: to its stream when due_ms <= now_ms,
// otherwise to its delayed set (publishing on the wake channel when it became
// the earliest). When dedup_ttl_ms > 0 it first claims the dedup key with
// SET NX PX; if the key already exists nothing is added and the function
// returns the ID stored under the key and 1. A claim is never left behind
// by an enqueue that fails: when the queue's stream is a string (what
// chronos migrate leaves in place of a layout-1 queue), the function
// raises WRONGTYPE before claiming, as the XADD would after, so that a
// process still using layout 1 reads the layout again and claims the key
// in its partition, not in a layout nobody reads
// (TestADedupEnqueueThatMeetsWrongTypeClaimsNothing).
//
// The enqueue script is this fragment plus one call. To reuse it from
// another script (the scheduler's fire script does, so that the leader
// fence, the trigger's dedup key, the task and lastFired change in one
// atomic step):
//
//  1. start the script source with EnqueueFunc;
//  2. append EnqueueKeys(...) to the script's KEYS and EnqueueArgs(...) to
//     its ARGV, remembering the 1-based position of the first of each;
//  3. call it with EnqueueCall(firstKey, firstArg), for example
//     "local r = " + EnqueueCall(3, 5), or, for one enqueue per loop
//     iteration, with EnqueueCallAt and strides of EnqueueKeyCount and
//     EnqueueArgCount.
//
// All keys must belong to the same namespace (one hash tag, one slot).
const EnqueueFunc = `
local function chronos_enqueue(stream, delayed, dedup, wake, msg, id, due, now, ttl)
  if ttl > 0 then
    if redis.call('TYPE', stream).ok == 'string' then
      error({err = 'WRONGTYPE chronos: the queue is a marker, not a stream: the namespace was migrated (read its layout again)'})
    end
    if not redis.call('SET', dedup, id, 'NX', 'PX', ttl) then
      return {redis.call('GET', dedup) or '', 1}
    end
  end
  if due > now then
    local first = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
    redis.call('ZADD', delayed, due, msg)
    if first[2] == nil or due < tonumber(first[2]) then
      redis.call('PUBLISH', wake, delayed)
    end
  else
    redis.call('XADD', stream, '*', 'm', msg)
  end
  return {id, 0}
end
`

// EnqueueKeyCount and EnqueueArgCount are the lengths of EnqueueKeys and
// EnqueueArgs.
const (
	EnqueueKeyCount = 3
	EnqueueArgCount = 6
)

// Positions, from 1, within EnqueueKeys and EnqueueArgs, for scripts that
// read one of them besides passing them on (EnqueueKeyAt, EnqueueArgAt).
const (
	EnqueueKeyStream  = 1
	EnqueueKeyDelayed = 2
	EnqueueKeyDedup   = 3

	EnqueueArgWake = 1
	EnqueueArgMsg  = 2
	EnqueueArgID   = 3
	EnqueueArgDue  = 4
	EnqueueArgNow  = 5
	EnqueueArgTTL  = 6
)

// EnqueueKeys returns the KEYS chronos_enqueue needs, in order: the queue
// stream, the queue's delayed set and the dedup key (a placeholder when
// dedupKey is empty).
func (k Keys) EnqueueKeys(queue, dedupKey string) []string {
	return []string{k.Stream(queue), k.Delayed(queue), k.Dedup(dedupKey)}
}

// EnqueueArgs returns the ARGV chronos_enqueue needs, in order: the wake
// channel, the encoded message, its ID, the due time, the current time and
// the dedup TTL (0 for none). A zero due means now.
func (k Keys) EnqueueArgs(msg []byte, id string, due, now time.Time, dedupTTL time.Duration) []any {
	d := now.UnixMilli()
	if !due.IsZero() {
		d = due.UnixMilli()
	}
	ttl := dedupTTL.Milliseconds()
	if dedupTTL > 0 && ttl == 0 {
		ttl = 1
	}
	return []any{k.Wake(), msg, id, d, now.UnixMilli(), ttl}
}

// EnqueueCall returns the Lua expression calling chronos_enqueue with its
// keys at KEYS[firstKey...] and its arguments at ARGV[firstArg...].
func EnqueueCall(firstKey, firstArg int) string {
	return EnqueueCallAt(strconv.Itoa(firstKey-1), strconv.Itoa(firstArg-1))
}

// EnqueueCallAt is EnqueueCall for a script that enqueues in a loop: keyBase
// and argBase are Lua expressions (a local variable, say) for the index just
// before the first key and the first argument, so the call reads
// KEYS[keyBase + 1 ... keyBase + EnqueueKeyCount] and
// ARGV[argBase + 1 ... argBase + EnqueueArgCount].
func EnqueueCallAt(keyBase, argBase string) string {
	k := func(pos int) string { return EnqueueKeyAt(keyBase, pos) }
	a := func(pos int) string { return EnqueueArgAt(argBase, pos) }
	return fmt.Sprintf("chronos_enqueue(%s, %s, %s, %s, %s, %s, tonumber(%s), tonumber(%s), tonumber(%s))",
		k(EnqueueKeyStream), k(EnqueueKeyDelayed), k(EnqueueKeyDedup),
		a(EnqueueArgWake), a(EnqueueArgMsg), a(EnqueueArgID), a(EnqueueArgDue), a(EnqueueArgNow), a(EnqueueArgTTL))
}

// EnqueueKeyAt is the Lua expression of key pos (EnqueueKeyStream, ...) of
// an EnqueueKeys block that starts after index keyBase.
func EnqueueKeyAt(keyBase string, pos int) string {
	return "KEYS[" + keyBase + " + " + strconv.Itoa(pos) + "]"
}

// EnqueueArgAt is the Lua expression of argument pos (EnqueueArgMsg, ...)
// of an EnqueueArgs block that starts after index argBase.
func EnqueueArgAt(argBase string, pos int) string {
	return "ARGV[" + argBase + " + " + strconv.Itoa(pos) + "]"
}
