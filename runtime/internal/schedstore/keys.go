package schedstore

import (
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
		k.parts[i] = partKeys{prefix: p, schedules: p + "schedules", version: p + "schedules:version", changed: p + "changed",
			requests: p + "requests", reqData: p + "request-data", lease: leader.KeysAt(p), queue: rdb.KeysAt(p)}
	}
	return k
}

// of returns the keys of schedule id's partition.
func (k keys) of(id string) *partKeys { return &k.parts[k.layout.ForSchedule(id)] }

func (k keys) sched(id string) string      { return k.of(id).prefix + "sched:" + id }
func (k keys) history(id string) string    { return k.of(id).prefix + "history:" + id }
func (k keys) instances() string           { return k.control + "instances" }
func (k keys) instance(id string) string   { return k.control + "instance:" + id }
func (k keys) decl(instance string) string { return k.control + "decl:" + instance }
func (k keys) sweep() string               { return k.control + "sweep" }
func (k keys) legacyIsolated() string      { return k.control + "isolated-instances" }

// legacyQueue names the queue keys of versions before partitions, where
// the legacy isolated queues live.
func (k keys) legacyQueue() rdb.Keys { return rdb.KeysAt(k.control) }

// legacyIsolatedQueue is the queue name (not a key) of instance's isolated
// schedules in versions before they ran in process.
func legacyIsolatedQueue(instance string) string { return "isolated:" + instance }
