package schedstore

import (
	"strings"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// keys builds the store's keys of one namespace, in its layout
// (keyspace.Layout). What spans partitions carries the control tag {<ns>};
// a schedule's keys, and its partition's indexes, lease and queues, carry
// the partition's tag <p> ("{<ns>:p<i>.<salt>}:", or "{<ns>}:" in layout 1,
// where every name is what versions before partitions wrote):
//
//	{<ns>}:instances           ZSET  instance IDs; score = heartbeat expiry (ms)
//	{<ns>}:instance:<id>       HASH  host, pid, started, last_seen, version, leader, decl_digest
//	                                 (digest of its declarations, decldigest.go); PX = 2 × instance TTL
//	{<ns>}:decl:<id>           HASH  schedule ID → JSON Definition declared by instance <id>; PX = 2 × instance TTL
//	{<ns>}:decl-next:<id>      HASH  the same, while Register writes it in batches before swapping it in; PX = 2 × instance TTL
//	{<ns>}:sweep               HASH  full, confirmed: what the last full sweep vouches for (sweepmemo.go)
//	{<ns>}:isolated-instances  SET   (versions before in-process isolated schedules) instances with a
//	                                 queue isolated:<instance> of their own (legacy.go)
//	<p>sched:<id>              HASH  definition and state of schedule <id> (fields.go)
//	<p>history:<id>            LIST  firing records of schedule <id>, newest first, capped (history.go)
//	<p>schedules               ZSET  the partition's schedule IDs; score = last time (ms) a live instance declared it
//	<p>schedules:version       STRING counter bumped by every change the partition's leader must pick up
//	                                 at once (registrations, pauses, resumes; NoteChange)
//	<p>changed                 ZSET  schedule IDs; score = last time (ms) its state changed: fired, saved,
//	                                 paused, resumed, retired (every instance reads what changed: mirror.go)
//	<p>requests                ZSET  pending request IDs of the partition's schedules; score = creation time (ms)
//	<p>request-data            HASH  request ID → JSON Request
//
// The fire script (fire.go) also writes the queue keys of the schedule's
// partition (stream, delayed set, dedup claim, overlap markers), which rdb
// names (rdb.KeysAt), and checks the partition's lease, which leader names
// (leader.KeysAt): all in the partition's slot.
type keys struct {
	layout  keyspace.Layout
	control string
	parts   []partKeys
}

// partKeys are the names of one partition that do not depend on a
// schedule, built once.
type partKeys struct {
	prefix                                         string
	schedules, version, changed, requests, reqData string
	lease                                          leader.Keys
	queue                                          rdb.Keys
}

func keysFor(l keyspace.Layout) keys {
	k := keys{layout: l, control: l.Control(), parts: make([]partKeys, l.Partitions())}
	for i := range k.parts {
		p := l.Partition(i)
		r := RegistryKeysAt(p)
		k.parts[i] = partKeys{prefix: p, schedules: r.Schedules, version: r.Version, changed: r.Changed,
			requests: r.Requests, reqData: r.RequestData, lease: leader.KeysAt(p), queue: rdb.KeysAt(p)}
	}
	return k
}

// RegistryKeys are the registry's keys of one partition (of all of a
// layout-1 namespace), for chronos migrate (package migrate), which moves
// them from layout 1 to the partitions.
type RegistryKeys struct {
	Schedules, Version, Changed, Requests, RequestData string

	prefix string
}

// RegistryKeysAt returns the registry keys under prefix, hash tag
// included (keyspace.Layout.Partition).
func RegistryKeysAt(prefix string) RegistryKeys {
	return RegistryKeys{prefix: prefix, Schedules: prefix + "schedules", Version: prefix + "schedules:version",
		Changed: prefix + "changed", Requests: prefix + "requests", RequestData: prefix + "request-data"}
}

// Sched is the hash of schedule id (as keys.sched names it).
func (r RegistryKeys) Sched(id string) string { return r.prefix + "sched:" + id }

// History is the firing history of schedule id (as keys.history names it).
func (r RegistryKeys) History(id string) string { return r.prefix + "history:" + id }

// SchedOf returns the schedule whose hash is key.
func (r RegistryKeys) SchedOf(key string) (string, bool) { return cutID(key, r.Sched("")) }

// HistoryOf returns the schedule whose history is key.
func (r RegistryKeys) HistoryOf(key string) (string, bool) { return cutID(key, r.History("")) }

func cutID(key, prefix string) (string, bool) {
	id, ok := strings.CutPrefix(key, prefix)
	return id, ok && id != ""
}

// IsControl reports whether key is one of the registry's control keys of
// namespace ns (instances, an instance's record or declarations, written
// or being written, the sweep
// record, the legacy isolated set): keys that stay under the control tag
// in every layout.
func IsControl(ns, key string) bool {
	k := keysFor(keyspace.Single(ns))
	switch {
	case key == k.instances(), key == k.sweep(), key == k.legacyIsolated():
		return true
	}
	_, inst := cutID(key, k.instance(""))
	_, decl := cutID(key, k.decl(""))
	_, next := cutID(key, k.declNext(""))
	return inst || decl || next
}

// LegacyIsolatedSet is the control key listing, in a namespace of versions
// before in-process isolated schedules, the instances with an isolated
// queue of their own; LegacyIsolatedQueue names such a queue.
func LegacyIsolatedSet(ns string) string { return keysFor(keyspace.Single(ns)).legacyIsolated() }

// LegacyIsolatedQueue is the queue name (not a key) of instance's isolated
// schedules in versions before they ran in process.
func LegacyIsolatedQueue(instance string) string { return legacyIsolatedQueue(instance) }

// of returns the keys of schedule id's partition.
func (k keys) of(id string) *partKeys { return &k.parts[k.layout.ForSchedule(id)] }

func (k keys) sched(id string) string      { return k.of(id).prefix + "sched:" + id }
func (k keys) history(id string) string    { return k.of(id).prefix + "history:" + id }
func (k keys) instances() string           { return k.control + "instances" }
func (k keys) instance(id string) string   { return k.control + "instance:" + id }
func (k keys) decl(instance string) string { return k.control + "decl:" + instance }
func (k keys) declNext(instance string) string {
	return k.control + "decl-next:" + instance
}
func (k keys) sweep() string          { return k.control + "sweep" }
func (k keys) legacyIsolated() string { return k.control + "isolated-instances" }

// legacyQueue names the queue keys of versions before partitions, where
// the legacy isolated queues live.
func (k keys) legacyQueue() rdb.Keys { return rdb.KeysAt(k.control) }

// legacyIsolatedQueue is the queue name (not a key) of instance's isolated
// schedules in versions before they ran in process.
func legacyIsolatedQueue(instance string) string { return "isolated:" + instance }
