// Package keyspace names a chronos namespace in Redis: the default
// namespace, its layout (Layout) and the prefixes, hash tags included, that
// its keys start with. The storage packages (rdb, schedstore, leader) build
// their key names from these prefixes, each in its own keys.go; nothing
// else spells a key.
//
// A namespace is split into partitions, each under its own hash tag, plus
// the control tag "{<namespace>}" for what spans partitions
// (docs/scheduler.md, "Partitions"). Everything one script needs is in one
// partition, so in one Redis Cluster slot: the scheduler's fire script
// checks the partition leader's lease, claims a trigger's dedup key,
// enqueues the task and records the schedule's state atomically, and Redis
// runs a script atomically only over keys of one slot. Layout 1, the
// namespaces of versions before partitions, is one partition under the
// control tag.
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
