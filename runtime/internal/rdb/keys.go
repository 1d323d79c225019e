// Package rdb is the Redis storage layer of the chronos task queue: the key
// layout, the task encoding and the Lua scripts that move tasks between
// states in one round trip each.
//
// # Key layout
//
// A namespace is split into partitions (keyspace.Layout; 12 by default),
// each under its own hash tag, so that Redis Cluster spreads them over its
// masters. A partition holds a share of every queue: each key below exists
// once per partition, under the partition's prefix "{p}:" (Layout.Partition:
// "{ns:p<i>.<salt>}:"). That is what one atomic script needs: the
// scheduler's fire script must, atomically, check the leader fence, claim
// the dedup key of a trigger, add the task and record lastFired, and Redis
// only runs a script atomically over keys of one slot, so the queue keys a
// schedule's tasks go to are in the schedule's partition. Every script
// receives every key it touches in KEYS; no script builds a key name. On a
// cluster every call touches one partition's keys; off a cluster the
// fetch, the blocking read and the batched finish span partitions in one
// call (Store). A namespace of the single-tag layout 1, written by versions
// before partitions, is one partition whose prefix is the control prefix
// "{ns}:" (NewKeys), so its key names are exactly the earlier ones.
//
// RDB is the storage of one partition (KeysAt its prefix), Store that of a
// namespace in one layout (an RDB per partition), Namespace the Store of a
// layout read from Redis when first needed.
//
// The keys of a partition with prefix {p} (namespace ns, default "chronos"):
//
//	{p}:q:<queue>        STREAM  ready and running tasks of a queue; consumer group "chronos"
//	{p}:delayed:<queue>  ZSET    delayed tasks and retries; member = encoded task, score = due (unix ms)
//	{p}:dedup:<key>      STRING  dedup claim, in the partition of Layout.ForDedup(key); value = task ID, expires after the caller's TTL
//	{p}:dead             HASH    dead letters; field = task ID, value = encoded task with its history
//	{p}:dead:index       ZSET    dead letter IDs by time of death (unix ms), for listing and capping
//	{p}:runs:<kind>      STREAM  completed-run records of a kind, capped with MAXLEN ~
//	{p}:paused           SET     names of paused queues (a pause is written to every partition's)
//	{p}:wake             channel PUBLISHed when a delayed task becomes the earliest of its queue in the partition
//
//	{p}:overlap:<marker>         SET   IDs of the queued or running tasks of a schedule's job
//	{p}:overlap-buffer:<marker>  HASH  id, m: the one firing waiting for them (overlap=bufferOne)
//	{p}:overlap-where:<marker>   HASH  task ID → where that active task is
//
//	{p}:migrated:<queue>         SET   while chronos migrate moves a layout-1 namespace: the entry IDs of
//	                                   the layout-1 stream of queue whose tasks it added to this partition's
//	                                   stream, so that an interrupted run copies none twice (package migrate)
//
// and under the namespace's control prefix {ns}, for a partitioned
// namespace only:
//
//	{ns}:dead:lock       STRING  held while a batch of outcomes with deaths trims and writes dead letters
//
// The overlap markers of scheduled runs are described in overlap.go; the
// meta key that records the layout ({ns}:meta) belongs to keyspace. This
// file is the one place in the package that spells key names.
package rdb

import "github.com/chronos-go/chronos/runtime/internal/keyspace"

// Group is the consumer group every queue stream is read through.
const Group = "chronos"

// Keys names the Redis keys of one partition of a namespace (all of a
// layout-1 namespace), or its control keys. The zero value is not useful;
// use KeysAt or NewKeys.
type Keys struct {
	prefix string // "{ns}:"
	// Names that do not depend on a queue or kind, built once: the hot
	// paths pass them on every call.
	dead, deadIndex, wake, noDedup, paused string
}

// NewKeys returns the key names of namespace ns ("" means
// keyspace.DefaultNamespace) in the single-tag layout 1, which are also
// its control keys: KeysAt of keyspace.Prefix(ns).
func NewKeys(ns string) Keys { return KeysAt(keyspace.Prefix(ns)) }

// KeysAt returns the key names under prefix p, hash tag included: one
// partition of a namespace (keyspace.Layout.Partition).
func KeysAt(p string) Keys {
	return Keys{prefix: p, dead: p + "dead", deadIndex: p + "dead:index", wake: p + "wake", noDedup: p + "dedup", paused: p + "paused"}
}

// Prefix is the common prefix of every key of the partition, hash tag
// included ("{p}:"). Other packages that add keys to the partition (the
// scheduler) build their names from it so that they share its slot.
func (k Keys) Prefix() string { return k.prefix }

// Stream is the stream of ready tasks of queue.
func (k Keys) Stream(queue string) string { return k.prefix + "q:" + queue }

// Delayed is the sorted set of delayed tasks and retries of queue.
func (k Keys) Delayed(queue string) string { return k.prefix + "delayed:" + queue }

// Dedup is the dedup claim key for a user-supplied dedup key. An empty key
// names a placeholder that is never written, so scripts can take a fixed
// number of KEYS.
func (k Keys) Dedup(key string) string {
	if key == "" {
		return k.noDedup
	}
	return k.dedupPrefix() + key
}

func (k Keys) dedupPrefix() string { return k.prefix + "dedup:" }

// DedupKeyOf returns the user-supplied dedup key whose claim key is key.
func (k Keys) DedupKeyOf(key string) (string, bool) { return cutNonEmpty(key, k.dedupPrefix()) }

// Dead is the hash of dead-lettered tasks.
func (k Keys) Dead() string { return k.dead }

// DeadIndex is the sorted set ordering dead letters by time of death.
func (k Keys) DeadIndex() string { return k.deadIndex }

// Runs is the capped stream of completed-run records of kind.
func (k Keys) Runs(kind string) string { return k.prefix + "runs:" + kind }

// Paused is the set of paused queue names.
func (k Keys) Paused() string { return k.paused }

// Wake is the pub/sub channel that tells forwarders a delayed task of the
// partition became due earlier than they planned. A forwarder subscribes
// to every partition's (Store.WakeChannels).
func (k Keys) Wake() string { return k.wake }

// DeadLock is, under the control prefix of a partitioned namespace
// (NewKeys of the namespace), the lock that makes the writes of dead
// letters one at a time, so that the namespace-wide cap holds exactly
// (Store.TrimDead).
func (k Keys) DeadLock() string { return k.prefix + "dead:lock" }

// OverlapActive is the set of queued or running tasks under marker.
func (k Keys) OverlapActive(marker string) string { return k.prefix + "overlap:" + marker }

// OverlapBuffer holds the firing buffered under marker.
func (k Keys) OverlapBuffer(marker string) string { return k.prefix + "overlap-buffer:" + marker }

// OverlapWhere records where each active task under marker is, so the fire
// script can tell a stale member from a live task in a few commands.
func (k Keys) OverlapWhere(marker string) string { return k.prefix + "overlap-where:" + marker }

// Migrated is the set of the layout-1 stream entries of queue that chronos
// migrate has added to this partition's stream (package migrate).
func (k Keys) Migrated(queue string) string { return k.prefix + "migrated:" + queue }

// MigratedMarker is the value of the string that chronos migrate leaves in
// place of a layout-1 queue's stream and delayed set: a process that still
// writes there meets WRONGTYPE and reads the layout again, instead of
// adding a task nobody would read.
const MigratedMarker = "chronos: this namespace was migrated to partitions (chronos migrate); " +
	"this key stands in for a queue of its single-tag layout so that writes to it fail"
