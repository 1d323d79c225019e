package leader

import "github.com/chronos-go/chronos/runtime/internal/keyspace"

// Keys are the Redis keys and channel of one namespace's election. All keys
// share the hash tag {<ns>} so that scripts of other packages can touch the
// lease together with their own keys in one Redis Cluster slot.
//
//	{<ns>}:leader          string  token "<epoch>:<instance>:<nonce>", PX = TTL
//	{<ns>}:leader:epoch    string  integer, INCR on every acquisition (never expires)
//	{<ns>}:leader:resign   channel token of a leader that just resigned (pub/sub hint)
type Keys struct {
	Lock   string // the lease
	Epoch  string // the fencing epoch counter
	Resign string // pub/sub channel (not a key; listed for the key-layout page)
}

// KeysFor returns the election keys of namespace ns ("" means
// keyspace.DefaultNamespace).
func KeysFor(ns string) Keys {
	p := keyspace.Prefix(ns) + "leader"
	return Keys{Lock: p, Epoch: p + ":epoch", Resign: p + ":resign"}
}
