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

import (
	"errors"
	"fmt"
)

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

// ErrBadNamespace is returned (wrapped) for a namespace name chronos
// cannot keep apart from others.
var ErrBadNamespace = errors.New("keyspace: bad namespace name")

// ValidateNamespace refuses the namespace names whose keys could not be
// told from another namespace's: a name holding ":p" and a digit (the
// hash tag of partition i of namespace ns is "<ns>:p<i>.<salt>", so the
// keys of a namespace "orders:p1" would look like a partition of
// "orders", and the ACL patterns of "orders" would grant them).
// "" is the default namespace and valid.
func ValidateNamespace(ns string) error {
	for i := 0; i+2 < len(ns); i++ {
		if ns[i] == ':' && ns[i+1] == 'p' && ns[i+2] >= '0' && ns[i+2] <= '9' {
			return fmt.Errorf("%w: %q holds %q, which is reserved for partitions", ErrBadNamespace, ns, ns[i:i+3])
		}
	}
	return nil
}
