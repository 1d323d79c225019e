// Package schedstore is the scheduler's registry in Redis: the definition and
// durable state of every schedule, the live instances, pauses, and the
// "trigger now" and backfill requests an operator makes.
//
// The leader fires from this registry, not from its own memory, so a
// schedule declared by any live instance is visible to, and fireable by,
// every leader, whatever code version it runs (see Register and Sweep for
// the rolling-deploy rule). A Store works in its namespace's layout
// (keyspace.Layout): what spans partitions carries the control tag {<ns>},
// a schedule's keys and its partition's indexes carry the partition's tag
// (see keys.go); every script touches the keys of one slot, and every
// multi-key update is a single script or pipeline.
package schedstore
