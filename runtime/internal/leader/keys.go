package leader

import "github.com/chronos-go/chronos/runtime/internal/keyspace"

// Keys are the Redis keys and channel of one election: a namespace's in
// layout 1, one partition's in a partitioned namespace. All keys share the
// hash tag of their prefix, so that scripts of other packages can touch the
// lease together with their own keys of the same partition in one Redis
// Cluster slot.
//
//	<prefix>leader          string  token "<epoch>:<instance>:<nonce>", PX = TTL
//	<prefix>leader:epoch    string  integer, INCR on every acquisition (never expires)
//	<prefix>leader:since    string  "<epoch>:<unix ms>": when the term of that epoch began (never expires)
//	<prefix>leader:resign   channel token of a leader that just resigned (pub/sub hint)
//
// The prefix is keyspace.Prefix(ns) ("{ns}:") in layout 1 and
// keyspace.Layout.Partition(p) in a partitioned namespace.
type Keys struct {
	Lock   string // the lease
	Epoch  string // the fencing epoch counter
	Since  string // when the current term began (for operators only)
	Resign string // pub/sub channel (not a key; listed for the key-layout page)
}

// KeysFor returns the election keys of namespace ns in layout 1, the single
// tag ("" means keyspace.DefaultNamespace): KeysAt(keyspace.Prefix(ns)).
func KeysFor(ns string) Keys { return KeysAt(keyspace.Prefix(ns)) }

// KeysAt returns the election keys under prefix, hash tag included: one
// partition of a namespace (keyspace.Layout.Partition).
func KeysAt(prefix string) Keys {
	p := prefix + "leader"
	return Keys{Lock: p, Epoch: p + ":epoch", Since: p + ":since", Resign: p + ":resign"}
}
