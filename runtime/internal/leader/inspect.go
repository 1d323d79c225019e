package leader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Lease is the election state of a namespace as Redis holds it, for
// operators (the CLI's "leader" command, the console).
type Lease struct {
	// Held is false when no instance holds the lease.
	Held bool
	// Token, Epoch and Instance describe the holder's term.
	Token    string
	Epoch    int64
	Instance string
	// Remaining is how long the lease lasts without a renewal.
	Remaining time.Duration
	// LastEpoch is the latest epoch ever issued in the namespace.
	LastEpoch int64
}

// Inspect reads the lease of namespace ns in one round trip. It changes
// nothing.
func Inspect(ctx context.Context, rdb redis.UniversalClient, ns string) (Lease, error) {
	k := KeysFor(ns)
	var get *redis.StringCmd
	var pttl *redis.DurationCmd
	var epoch *redis.StringCmd
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, k.Lock)
		pttl = p.PTTL(ctx, k.Lock)
		epoch = p.Get(ctx, k.Epoch)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return Lease{}, fmt.Errorf("leader: inspect %s: %w", k.Lock, err)
	}
	var l Lease
	l.LastEpoch, _ = epoch.Int64()
	tok, err := get.Result()
	if errors.Is(err, redis.Nil) {
		return l, nil
	}
	l.Held, l.Token = true, tok
	l.Epoch, l.Instance, _, _ = parseToken(tok)
	if d := pttl.Val(); d > 0 {
		l.Remaining = d
	}
	return l, nil
}
