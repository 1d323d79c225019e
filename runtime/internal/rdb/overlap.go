package rdb

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

// OverlapActive is the set of queued or running tasks under marker.
func (k Keys) OverlapActive(marker string) string { return k.prefix + "overlap:" + marker }

// OverlapBuffer holds the firing buffered under marker.
func (k Keys) OverlapBuffer(marker string) string { return k.prefix + "overlap-buffer:" + marker }

// ReleaseFunc is a Lua fragment defining
//
//	chronos_release(active, buffer, stream, id)
//
// which ends task id's membership of the active set and, if that leaves
// the set empty, adds the buffered firing (if any) to stream and makes it
// the active one. The finish script calls it for done and dead outcomes
// when it is given the two overlap keys.
const ReleaseFunc = `
local function chronos_release(active, buffer, stream, id)
  if redis.call('SREM', active, id) == 0 then return end
  if redis.call('SCARD', active) > 0 then return end
  local b = redis.call('HMGET', buffer, 'id', 'm')
  if b[1] and b[2] then
    redis.call('DEL', buffer)
    redis.call('XADD', stream, '*', 'm', b[2])
    redis.call('SADD', active, b[1])
  end
end
`
