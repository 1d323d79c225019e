package schedstore

import "github.com/chronos-go/chronos/runtime/internal/keyspace"

// keys builds the store's keys of one namespace. Every key carries the hash
// tag {<ns>}, so any script may combine them (and the leader's lease) in
// one Redis Cluster slot.
//
//	{<ns>}:sched:<id>        HASH  definition and state of schedule <id> (fields.go)
//	{<ns>}:schedules         ZSET  schedule IDs; score = last time (ms) a live instance declared it
//	{<ns>}:instances         ZSET  instance IDs; score = heartbeat expiry (ms)
//	{<ns>}:instance:<id>     HASH  host, pid, started, last_seen, version, leader, decl_digest
//	                               (digest of its declarations, decldigest.go); PX = 2 × instance TTL
//	{<ns>}:decl:<id>         HASH  schedule ID → JSON Definition declared by instance <id>; PX = 2 × instance TTL
//	{<ns>}:sweep             HASH  full, confirmed: what the last full sweep vouches for (sweepmemo.go)
//	{<ns>}:requests          ZSET  pending request IDs; score = creation time (ms)
//	{<ns>}:request-data      HASH  request ID → JSON Request
//	{<ns>}:history:<id>      LIST  firing records of schedule <id>, newest first, capped (history.go)
//	{<ns>}:isolated-instances SET  (versions before in-process isolated schedules) instances with a
//	                               queue isolated:<instance> of their own (legacy.go)
//	{<ns>}:schedules:version STRING counter bumped by every change the leader must pick up at once
//	                               (registrations, pauses, resumes; NoteChange)
//
// The fire script (fire.go) also writes queue keys (stream, delayed set,
// dedup claim, overlap markers), which rdb names, and checks the leader's
// lease, which leader names: all in the same {<ns>} slot.
type keys struct{ prefix string }

func keysFor(ns string) keys { return keys{prefix: keyspace.Prefix(ns)} }

func (k keys) sched(id string) string      { return k.prefix + "sched:" + id }
func (k keys) schedules() string           { return k.prefix + "schedules" }
func (k keys) instances() string           { return k.prefix + "instances" }
func (k keys) instance(id string) string   { return k.prefix + "instance:" + id }
func (k keys) decl(instance string) string { return k.prefix + "decl:" + instance }
func (k keys) sweep() string               { return k.prefix + "sweep" }
func (k keys) requests() string            { return k.prefix + "requests" }
func (k keys) requestData() string         { return k.prefix + "request-data" }
func (k keys) history(id string) string    { return k.prefix + "history:" + id }
func (k keys) version() string             { return k.prefix + "schedules:version" }
func (k keys) legacyIsolated() string      { return k.prefix + "isolated-instances" }

// legacyIsolatedQueue is the queue name (not a key) of instance's isolated
// schedules in versions before they ran in process.
func legacyIsolatedQueue(instance string) string { return "isolated:" + instance }
