package rdb

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// This file tells whether a namespace holds anything, for the operator's
// tools: an empty listing of a namespace that does not exist is a mistyped
// name, not an answer.

// NamespacePattern matches every key of the namespace.
func (k Keys) NamespacePattern() string { return globEscape(k.prefix) + "*" }

// HasKeys reports whether any key of the namespace exists. It asks for the
// dead letters and paused queues first (one EXISTS), then SCANs for any
// key with the namespace's prefix: its streams and run records have names
// of their own. All keys of a namespace share one hash tag, so in a Redis
// Cluster only the master of that slot is scanned. The SCAN stops after
// examining about maxScan keys; sure is false when it stopped before it
// could tell (found is then false too).
func (r *RDB) HasKeys(ctx context.Context, maxScan int) (found, sure bool, err error) {
	n, err := r.C.Exists(ctx, r.K.Dead(), r.K.Paused()).Result()
	if err != nil {
		return false, false, fmt.Errorf("rdb: namespace exists: %w", err)
	}
	if n > 0 {
		return true, true, nil
	}
	var c redis.Cmdable = r.C
	if cc, ok := r.C.(*redis.ClusterClient); ok {
		if c, err = cc.MasterForKey(ctx, r.K.Dead()); err != nil {
			return false, false, fmt.Errorf("rdb: namespace exists: %w", err)
		}
	}
	pattern := r.K.NamespacePattern()
	var cursor uint64
	for scanned := 0; scanned < maxScan; scanned += 1000 {
		keys, next, err := c.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return false, false, fmt.Errorf("rdb: namespace exists: %w", err)
		}
		if len(keys) > 0 {
			return true, true, nil
		}
		if next == 0 {
			return false, true, nil
		}
		cursor = next
	}
	return false, false, nil
}
