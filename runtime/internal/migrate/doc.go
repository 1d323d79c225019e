// Package migrate moves a namespace of the single-tag layout 1 (written by
// versions before partitions) to a partitioned layout: chronos migrate
// (docs/scheduler.md, "Migrating a layout-1 namespace"). It names no key:
// every name comes from the keys.go of rdb, schedstore and leader, and
// every script touches the keys of one slot.
//
// # Steps
//
//  1. Read the meta key. None: layout 1. "migrating": an interrupted run,
//     which this one finishes with the count it recorded. "2": migrated;
//     what processes still using layout 1 added since is moved.
//  2. Unless Force, refuse while a scheduler instance's heartbeat has not
//     expired, an instance holds the leader lease, or a consumer of a
//     queue's group read or claimed a task less than LiveWithin ago (a
//     server); not checked once the meta key says "2", when processes of
//     the partitioned layout may run.
//  3. Mark the meta key "migrating": every process of this version then
//     refuses the namespace (keyspace.ErrMigrating), and none of an
//     earlier version reads a partition's keys.
//  4. Move, kind after kind: overlap markers (before the tasks, whose move
//     rewrites their records), schedules with their history, the indexes,
//     requests, the change counter, each queue's stream entries and delayed
//     tasks, dead letters, run records, dedup keys, paused queues, and the
//     leader epoch (every partition's starts at layout 1's, so its first
//     term's epoch is above every earlier one; layout 1's lease is deleted).
//  5. Mark the meta key "2": the namespace is partitioned.
//  6. Move what Clients still using layout 1 enqueued meanwhile, and replace
//     each queue's stream and delayed set by a string (rdb.MigratedMarker)
//     once both are empty, atomically in their slot, so that such a Client
//     meets WRONGTYPE at its next enqueue, reads the layout again and
//     enqueues into the partitions; then drop the records of moved entries,
//     and move the dedup keys claimed meanwhile.
//
// # Why an interruption neither doubles nor loses
//
// Each item moves from the layout-1 slot to its partition's slot, and no
// script can span two slots on Redis Cluster: so a move is two round trips,
// write the partition, then delete from layout 1. The delete follows a
// write that succeeded, so nothing is deleted that is not in its partition:
// an interruption loses nothing. An interruption between the two leaves the
// item in both places, and the next run writes it again before deleting it:
// so every write must be one that, done twice, is done once.
//
//   - Most are so by nature: adding to a set or sorted set (indexes,
//     delayed tasks, dead letters, overlap members, paused queues), setting a
//     hash field to the same value (dead letters, requests), raising a
//     counter to at least a value (epochs, change counters), claiming a
//     dedup key only where none is (SET NX: an existing claim is this one,
//     copied earlier, or a claim made since, which stands), keeping an
//     overlap record where one is (HSETNX: one the move of a task rewrote is
//     newer).
//   - A schedule's hash and history are written over (DEL, then the copy):
//     until step 5 nothing but the migration writes a partition's keys
//     (step 3), and after it no schedule is left in layout 1 to copy.
//   - A stream entry is not: adding it twice is two tasks, which would run
//     twice. So the script that adds an entry's task to its partition's
//     stream records the entry's layout-1 ID in a set of that partition
//     (rdb.Keys.Migrated), in the same atomic step, and adds nothing for an
//     ID it finds there. An entry goes to the same partition in every run
//     (a function of its task), and layout-1 entry IDs are never reused: the
//     stream is never deleted before its marker replaces it, and while it
//     exists XADD IDs only grow. The records are dropped only once the
//     marker is in place, when no entry can come from layout 1 any more.
//   - A run record is re-added with its own entry ID, which is its time. A
//     partition receives its records in ascending order, and from the
//     migration alone (step 4 ends before step 5), so a record whose ID is
//     not above the partition's last was added by an earlier run and is
//     skipped.
//
// Pending stream entries (delivered to a server that did not finish them)
// are re-added as new entries: their delivery counts start over, and a
// server that is in fact still running one (Force) may finish it after it
// was re-added, so it runs twice, as after any lost lease.
//
// A queue of versions before in-process isolated schedules
// (isolated:<instance>) is left where it is: the leader of partition 0
// deletes it once its instance is gone, as in layout 1.
package migrate
