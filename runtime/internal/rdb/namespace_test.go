package rdb

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

func TestHasKeysFindsAnyKeyOfTheNamespaceAndOnlyIts(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	c := s.Client()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.XAdd(ctx, xadd(NewKeys("workers").Stream("default"))).Err())
	must(c.SAdd(ctx, NewKeys("paused").Paused(), "q").Err())
	must(c.XAdd(ctx, xadd(NewKeys("ab").Runs("kind"))).Err())
	for _, tc := range []struct {
		ns          string
		found, sure bool
	}{
		{"workers", true, true}, // a queue's stream: found by the SCAN
		{"paused", true, true},  // a paused queue: found by EXISTS
		{"ab", true, true},
		{"a*", false, true}, // a glob character matches only itself
		{"a?", false, true},
		{"nope", false, true},
	} {
		found, sure, err := ns(c, tc.ns).HasKeys(ctx, 100_000)
		if err != nil || found != tc.found || sure != tc.sure {
			t.Errorf("HasKeys of %q = %v, %v, %v; want %v, %v", tc.ns, found, sure, err, tc.found, tc.sure)
		}
	}
	// Past its bound the SCAN cannot tell.
	for k := range 5000 {
		must(c.Set(ctx, fmt.Sprintf("other:%d", k), "x", 0).Err())
	}
	if found, sure, err := ns(c, "nope").HasKeys(ctx, 1000); err != nil || found || sure {
		t.Errorf("HasKeys over 5,000 other keys with a bound of 1,000 = %v, %v, %v; want false, false", found, sure, err)
	}
}

// On a cluster every master is scanned: layout-1 namespaces sit on the
// master of their tag, and each partition of a partitioned one on the
// master of its own.
func TestHasKeysScansEveryMaster(t *testing.T) {
	redistest.Parallel(t)
	cl := redistest.StartCluster(t)
	c := cl.Client()
	ctx := context.Background()
	for _, name := range []string{"a", "b", "c", "d"} { // on more than one master
		if err := c.XAdd(ctx, xadd(NewKeys(name).Stream("default"))).Err(); err != nil {
			t.Fatal(err)
		}
		if found, sure, err := ns(c, name).HasKeys(ctx, 100_000); err != nil || !found || !sure {
			t.Errorf("HasKeys of %q = %v, %v, %v; want true", name, found, sure, err)
		}
	}
	l, err := keyspace.Partitioned("parts", 12)
	if err != nil {
		t.Fatal(err)
	}
	for p := range l.Partitions() { // one partition's key at a time, without a meta key
		key := KeysAt(l.Partition(p)).Runs("kind")
		if err := c.XAdd(ctx, xadd(key)).Err(); err != nil {
			t.Fatal(err)
		}
		if found, sure, err := ns(c, "parts").HasKeys(ctx, 100_000); err != nil || !found || !sure {
			t.Errorf("HasKeys with only %s = %v, %v, %v; want true", key, found, sure, err)
		}
		c.Del(ctx, key)
	}
	if found, sure, err := ns(c, "nope").HasKeys(ctx, 100_000); err != nil || found || !sure {
		t.Errorf("HasKeys of nope = %v, %v, %v; want false, sure", found, sure, err)
	}
}

func ns(c redis.UniversalClient, name string) *Namespace {
	return NewNamespace(c, name, keyspace.ResolveOptions{ReadOnly: true})
}

func xadd(stream string) *redis.XAddArgs {
	return &redis.XAddArgs{Stream: stream, Values: []any{"m", "{}"}}
}
