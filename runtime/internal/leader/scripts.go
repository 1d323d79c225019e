package leader

import "github.com/redis/go-redis/v9"

// acquireScript takes the lease if it is free, or if it is still held by
// this very elector (same instance and nonce: a renewal whose reply was lost,
// or a lease left over from a Redis blip after which this elector already
// stepped down). Either way it starts a new term with a new epoch.
//
//	KEYS[1] lease, KEYS[2] epoch counter, KEYS[3] term start record
//	ARGV[1] owner "<instance>:<nonce>", ARGV[2] TTL in milliseconds,
//	ARGV[3] the highest epoch the caller has seen, ARGV[4] now (unix ms),
//	ARGV[5] the replicas that must be online (ReplicaLua)
//
// The new epoch is above both the counter and ARGV[3]: when Redis lost its
// data (the counter with it), the epochs of the terms before the loss are
// not issued again, so a write of such a term can never pass the fence of
// a later one. The start record, "<epoch>:<now>", tells operators when the
// term began; versions before it did not write it, so a reader trusts it
// only for the epoch it names.
//
// Returns {1, token, epoch} when acquired, {0, holder token, PTTL} otherwise.
var acquireScript = redis.NewScript(ReplicaLua + `
chronos_require_replicas(tonumber(ARGV[5]))
local cur = redis.call('GET', KEYS[1])
if cur then
  if string.match(cur, '^%d+:(.*)$') ~= ARGV[1] then
    return {0, cur, redis.call('PTTL', KEYS[1])}
  end
end
local epoch = redis.call('INCR', KEYS[2])
if epoch <= tonumber(ARGV[3]) then
  epoch = tonumber(ARGV[3]) + 1
  redis.call('SET', KEYS[2], epoch)
end
local token = epoch .. ':' .. ARGV[1]
redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
redis.call('SET', KEYS[3], epoch .. ':' .. ARGV[4])
return {1, token, epoch}
`)

// renewScript extends the lease only if it still holds our token. A bare
// PEXPIRE could extend a lease another instance acquired meanwhile.
//
//	KEYS[1] lease; ARGV[1] token, ARGV[2] TTL in milliseconds, ARGV[3] the
//	replicas that must be online (ReplicaLua)
//
// Returns 1 when renewed, 0 when the token no longer matches.
var renewScript = redis.NewScript(ReplicaLua + `
chronos_require_replicas(tonumber(ARGV[3]))
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`)

// resignScript deletes the lease if it holds our token and publishes the
// token on the resign channel so followers try at once.
//
//	KEYS[1] lease; ARGV[1] token, ARGV[2] resign channel
//
// Returns 1 when resigned, 0 when the lease was no longer ours.
var resignScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], ARGV[1])
  return 1
end
return 0
`)
