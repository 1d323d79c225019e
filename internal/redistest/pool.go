package redistest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClusterEnv is the environment variable that makes a package's tests
// run their Redis on a Redis Cluster instead of a single server, where the
// package supports it (OnCluster; `make test-cluster` sets it).
const ClusterEnv = "CHRONOS_TEST_CLUSTER"

// OnCluster reports whether ClusterEnv asks for tests on a cluster.
func OnCluster() bool { return os.Getenv(ClusterEnv) == "1" }

// ClusterPool lends clusters to tests that each want a cluster of their
// own but not a new one: starting three masters with a replica each takes
// about two seconds, making one clean again tens of milliseconds. Get hands
// a test an idle cluster, or starts one; when the test ends the pool takes
// it back, closes the clients the test made through it, disconnects every
// other client, runs FLUSHALL and SCRIPT FLUSH on every master and waits
// until each master's replicas acknowledge them (WAIT), so the next test
// finds an empty cluster with the same topology. A cluster that is no
// longer as it started is stopped instead of lent again: the test failed,
// a node was killed, restarted or failed over, an ACL user was added, or a
// node's CONFIG differs.
//
// Clusters are started with the options given to NewClusterPool and
// outlive the tests they are lent to; Close stops them, so call it from
// TestMain after m.Run. It is safe for concurrent use: parallel tests get
// a cluster each.
type ClusterPool struct {
	opts ClusterOptions

	mu     sync.Mutex
	idle   []*Cluster
	closed bool
}

// NewClusterPool returns a pool of clusters started with opts. It starts
// nothing yet.
func NewClusterPool(opts ClusterOptions) *ClusterPool {
	return &ClusterPool{opts: opts}
}

// Get lends t a clean cluster until t ends. It skips t as StartCluster
// does (REDIS_URL set, no redis-server).
func (p *ClusterPool) Get(t testing.TB) *Cluster {
	t.Helper()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		t.Fatal("redistest: ClusterPool.Get after Close")
	}
	var c *Cluster
	if n := len(p.idle); n > 0 {
		c, p.idle = p.idle[n-1], p.idle[:n-1]
	}
	p.mu.Unlock()
	if c != nil {
		c.owner.lend(t)
		t.Cleanup(func() { p.giveBack(t, c) })
		return c
	}
	o := &poolOwner{}
	o.lend(t)
	t.Cleanup(func() {
		if c == nil { // the start failed: stop what it started
			o.stop()
		}
	})
	c = StartCluster(o, p.opts)
	c.owner, c.config = o, c.configs()
	for _, n := range c.nodes {
		c.pids = append(c.pids, n.PID())
	}
	t.Cleanup(func() { p.giveBack(t, c) })
	return c
}

// giveBack takes c back from t: cleaned for the next test, or stopped.
func (p *ClusterPool) giveBack(t testing.TB, c *Cluster) {
	why := c.tainted()
	if why == "" && t.Failed() {
		why = "the test failed"
	}
	if why == "" {
		if err := c.reset(context.Background()); err != nil {
			why = err.Error()
		}
	}
	p.mu.Lock()
	keep := why == "" && !p.closed
	if keep {
		p.idle = append(p.idle, c)
	}
	p.mu.Unlock()
	if !keep {
		if why != "" && !t.Failed() {
			t.Logf("redistest: the pool stops this test's cluster: %s", why)
		}
		c.owner.stop()
	}
}

// Close stops the idle clusters, and makes clusters still lent stop when
// their tests end.
func (p *ClusterPool) Close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		c.owner.stop()
	}
}

// poolOwner is the testing.TB a pooled cluster and its servers report to:
// the test it is lent to for everything but TempDir and Cleanup, which
// belong to the cluster itself since it outlives the test.
type poolOwner struct {
	testing.TB // the test the cluster is lent to

	mu       sync.Mutex
	dir      string
	cleanups []func()
}

func (o *poolOwner) lend(t testing.TB) { o.TB = t }

// TempDir returns a new directory under the cluster's own, removed when
// the cluster stops.
func (o *poolOwner) TempDir() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dir == "" {
		d, err := os.MkdirTemp("", "redistest-pool-")
		if err != nil {
			o.TB.Fatalf("redistest: %v", err)
		}
		o.dir = d
	}
	d, err := os.MkdirTemp(o.dir, "node-")
	if err != nil {
		o.TB.Fatalf("redistest: %v", err)
	}
	return d
}

// Cleanup registers f to run when the cluster stops.
func (o *poolOwner) Cleanup(f func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cleanups = append(o.cleanups, f)
}

// stop runs the cleanups, last first, and removes the directory.
func (o *poolOwner) stop() {
	o.mu.Lock()
	fs, dir := o.cleanups, o.dir
	o.cleanups, o.dir = nil, ""
	o.mu.Unlock()
	for _, f := range slices.Backward(fs) {
		f()
	}
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}

// taint records that the cluster is no longer as it started, so a pool
// must not lend it again.
func (c *Cluster) taint(why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.taintedBy == "" {
		c.taintedBy = why
	}
}

// tainted says why the cluster may not be lent again, or "".
func (c *Cluster) tainted() string {
	c.mu.Lock()
	why := c.taintedBy
	c.mu.Unlock()
	if why != "" {
		return why
	}
	for i, n := range c.nodes {
		if n.PID() != c.pids[i] {
			return fmt.Sprintf("node %s was killed or restarted", n.Addr())
		}
	}
	return ""
}

// configs reads CONFIG GET * of every node.
func (c *Cluster) configs() []map[string]string {
	out := make([]map[string]string, len(c.nodes))
	for i, n := range c.nodes {
		m, err := n.admin.ConfigGet(context.Background(), "*").Result()
		if err != nil {
			c.t.Fatalf("redistest: CONFIG GET on %s: %v", n.Addr(), err)
		}
		out[i] = m
	}
	return out
}

// reset makes a lent cluster clean again (see ClusterPool), or says why it
// cannot be.
func (c *Cluster) reset(ctx context.Context) error {
	c.mu.Lock()
	clients := c.clients
	c.clients = nil
	c.mu.Unlock()
	for _, cc := range clients {
		_ = cc.Close()
	}
	for _, n := range c.nodes {
		n.closeClients()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.healthy(); err != nil {
		return fmt.Errorf("not healthy: %w", err)
	}
	nodes, err := c.describe(ctx)
	if err != nil {
		return err
	}
	for i, n := range c.nodes {
		wantRole := RoleMaster
		if i >= c.opts.Masters {
			wantRole = RoleReplica
		}
		if nodes[i].Role != wantRole {
			return fmt.Errorf("node %s is a %s, started as a %s", n.Addr(), nodes[i].Role, wantRole)
		}
		cfg, err := n.admin.ConfigGet(ctx, "*").Result()
		if err != nil {
			return fmt.Errorf("CONFIG GET on %s: %w", n.Addr(), err)
		}
		if !maps.Equal(cfg, c.config[i]) {
			for k, v := range cfg {
				if c.config[i][k] != v {
					return fmt.Errorf("node %s: the test changed its config %s to %q", n.Addr(), k, v)
				}
			}
			return fmt.Errorf("node %s: the test changed its config", n.Addr())
		}
		// Disconnect whatever the test left connected, its own clients
		// included, so nothing of it writes into the next test's data.
		for _, typ := range []string{"normal", "pubsub"} {
			if err := n.admin.Do(ctx, "CLIENT", "KILL", "TYPE", typ, "SKIPME", "yes").Err(); err != nil {
				return fmt.Errorf("CLIENT KILL on %s: %w", n.Addr(), err)
			}
		}
	}
	for _, n := range c.nodes[:c.opts.Masters] {
		var wait *redis.Cmd
		_, err := n.admin.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.FlushAll(ctx)
			p.ScriptFlush(ctx)
			// WAIT counts its own connection's writes: hence the pipeline.
			wait = p.Do(ctx, "WAIT", c.opts.ReplicasPerMaster, 5000)
			return nil
		})
		if err != nil {
			return fmt.Errorf("flush %s: %w", n.Addr(), err)
		}
		if got, _ := wait.Int64(); got < int64(c.opts.ReplicasPerMaster) {
			return fmt.Errorf("flush %s: %d of %d replicas acknowledged it", n.Addr(), got, c.opts.ReplicasPerMaster)
		}
	}
	return nil
}

// closeClients closes the clients made with NewClient and Client.
func (s *Server) closeClients() {
	s.mu.Lock()
	clients := s.clients
	s.clients = nil
	s.mu.Unlock()
	for _, c := range clients {
		_ = c.Close()
	}
}
