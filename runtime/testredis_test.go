package chronos

import (
	"context"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
)

// The queue and scheduler tests run on a private redis-server each, or,
// with CHRONOS_TEST_CLUSTER=1 (make test-cluster), on a Redis Cluster of
// three masters with a replica each, lent by testClusters: the namespace's
// 12 partitions then spread over the three masters, every script and
// pipeline goes through a cluster client, and the tests that need what a
// cluster does not have (one server to kill and restart, Sentinel, a
// server of their own configuration) skip with the reason.
var testClusters = redistest.NewClusterPool(redistest.ClusterOptions{Masters: 3, ReplicasPerMaster: 1})

// CloseTestClusters stops the clusters of the tests (TestMain, after the
// tests ran).
func CloseTestClusters() { testClusters.Close() }

// OnTestCluster reports whether the tests run on a cluster
// (CHRONOS_TEST_CLUSTER=1).
func OnTestCluster() bool { return redistest.OnCluster() }

// SkipOnTestCluster skips t when the tests run on a cluster, saying why.
func SkipOnTestCluster(t testing.TB, why string) {
	t.Helper()
	if OnTestCluster() {
		t.Skip("single server only (CHRONOS_TEST_CLUSTER=1): " + why)
	}
}

// TestRedis is the Redis of one test: a private redis-server (Server), or
// with CHRONOS_TEST_CLUSTER=1 a cluster of the package's pool (Cluster).
// Exported for the package's external tests.
type TestRedis struct {
	t       testing.TB
	Server  *redistest.Server  // nil on a cluster
	Cluster *redistest.Cluster // nil on a single server
	client  redis.UniversalClient
}

// StartTestRedis gives t its Redis, and runs t in parallel with the
// package's other tests on theirs. opts configure a private server; on a
// cluster, a test that asks for any skips, since the pool's clusters are
// all alike.
func StartTestRedis(t *testing.T, opts ...redistest.Options) *TestRedis {
	t.Helper()
	redistest.Parallel(t)
	if OnTestCluster() {
		for _, o := range opts {
			if o != (redistest.Options{}) {
				SkipOnTestCluster(t, "needs a server started with its own options")
			}
		}
		return &TestRedis{t: t, Cluster: testClusters.Get(t)}
	}
	return &TestRedis{t: t, Server: redistest.Start(t, opts...)}
}

// NewClient returns a new client, on its own connection pool, closed when
// the test ends: a cluster client on a cluster.
func (r *TestRedis) NewClient() redis.UniversalClient {
	if r.Cluster != nil {
		return r.Cluster.NewClient(nil)
	}
	return r.Server.NewClient(nil)
}

// Client returns the test's shared client (made at the first call).
func (r *TestRedis) Client() redis.UniversalClient {
	if r.client == nil {
		r.client = r.NewClient()
	}
	return r.client
}

// URL is the URL of the Redis for a child process (redistest.OpenURL).
func (r *TestRedis) URL() string {
	if r.Cluster != nil {
		return r.Cluster.URL()
	}
	return r.Server.URL()
}

// Kill kills the redis-server with SIGKILL. A test that kills Redis runs
// on a single server only: on a cluster it is skipped here, if it did not
// skip itself before.
func (r *TestRedis) Kill() {
	r.t.Helper()
	SkipOnTestCluster(r.t, "kills the one redis-server")
	r.Server.Kill()
}

// Restart restarts the redis-server (see Kill).
func (r *TestRedis) Restart() {
	r.t.Helper()
	SkipOnTestCluster(r.t, "restarts the one redis-server")
	r.Server.Restart()
}

// FlushAllForTest empties c's Redis: FLUSHALL on a server, on every master
// of a cluster client (a cluster client sends FLUSHALL to one node).
func FlushAllForTest(t testing.TB, c redis.UniversalClient) {
	t.Helper()
	ctx := context.Background()
	var err error
	if cc, ok := c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.FlushAll(ctx).Err() })
	} else {
		err = c.FlushAll(ctx).Err()
	}
	if err != nil {
		t.Fatalf("FLUSHALL: %v", err)
	}
}

// KeysForTest returns the keys matching pattern on c's Redis: KEYS on a
// server, on every master of a cluster client.
func KeysForTest(t testing.TB, c redis.UniversalClient, pattern string) []string {
	t.Helper()
	ctx := context.Background()
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		keys, err := c.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatalf("KEYS: %v", err)
		}
		return keys
	}
	var mu sync.Mutex
	var keys []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		ks, err := m.Keys(ctx, pattern).Result()
		mu.Lock()
		keys = append(keys, ks...)
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatalf("KEYS: %v", err)
	}
	return keys
}
