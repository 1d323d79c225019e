// Package keyspace names a chronos namespace in Redis: the default namespace
// and the prefix, hash tag included, that every key of a namespace starts
// with. The storage packages (rdb, schedstore, leader) build their key names
// from Prefix, each in its own keys.go; nothing else spells a key.
//
// Every key of a namespace carries the hash tag "{<namespace>}", so all of
// them hash to one Redis Cluster slot and any script may combine them: the
// scheduler's fire script checks the leader's lease, claims a trigger's
// dedup key, enqueues the task and records the schedule's state atomically,
// and Redis runs a script atomically only over keys of one slot.
package keyspace

// DefaultNamespace is the namespace used when none is configured.
const DefaultNamespace = "chronos"

// Namespace returns ns, or DefaultNamespace when ns is empty.
func Namespace(ns string) string {
	if ns == "" {
		return DefaultNamespace
	}
	return ns
}

// Prefix returns the common prefix of every key of namespace ns ("" is
// DefaultNamespace): "{<ns>}:".
func Prefix(ns string) string { return "{" + Namespace(ns) + "}:" }
