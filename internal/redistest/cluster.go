package redistest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClusterOptions configure StartCluster. The zero value is three masters
// without replicas or persistence.
type ClusterOptions struct {
	// Masters is the number of masters; the slots are split evenly between
	// them, in order. Default 3. KillMaster needs at least 3, since the
	// masters that are left must be a majority to elect a replica.
	Masters int
	// ReplicasPerMaster is the number of replicas of each master. Default 0.
	ReplicasPerMaster int
	// NodeTimeout is cluster-node-timeout: how long a node may not answer
	// before the others take it for failed and promote its replica. Default
	// 2 s, short enough for failover tests to take seconds and long enough
	// that a loaded machine does not see failovers nobody asked for; 1 s
	// makes KillMaster about a second quicker.
	NodeTimeout time.Duration
	// AOF, TLS and TLSClientAuth are as in Options, for every node. With TLS
	// the nodes also replicate and talk on the cluster bus over TLS.
	AOF           bool
	TLS           bool
	TLSClientAuth TLSClientAuth
}

// Roles of a ClusterNode.
const (
	RoleMaster  = "master"
	RoleReplica = "replica"
)

// ClusterNode is one node of a Cluster as the cluster described it when
// Nodes was called. The embedded Server is the process: its Addr, PID,
// Client (a plain client to this node alone) and Kill.
type ClusterNode struct {
	*Server
	ID       string
	Role     string      // RoleMaster or RoleReplica
	MasterID string      // the ID of a replica's master
	Slots    []SlotRange // the slots a master serves
	Down     bool        // the process is not running (killed, not yet restarted)
}

// Cluster is a Redis Cluster owned by one test: redis-server processes in
// cluster mode on free loopback ports, each with its data in t.TempDir(),
// joined into one cluster. Its methods fail the test on errors, except those
// that take a context, which return them.
type Cluster struct {
	t     testing.TB
	opts  ClusterOptions
	tls   *tlsFiles
	nodes []*node // masters first (slot order), then the replicas of each master in turn

	mu        sync.Mutex
	clients   []*redis.ClusterClient
	taintedBy string // why a ClusterPool must not lend it again
	frozen    bool   // killMaster freezes instead (FreezeMaster)

	// Set for a cluster of a ClusterPool: what it lends, and how the
	// cluster started, to tell whether a test changed it.
	owner  *poolOwner
	pids   []int
	config []map[string]string
}

// node is one process of the cluster and a client for the helper's own
// commands to it.
type node struct {
	*Server
	id    string
	admin *redis.Client
}

// StartCluster starts a Redis Cluster for t and registers its teardown. It
// returns once every node says cluster_state:ok, every node agrees which
// master serves each of the 16384 slots, and every replica has finished its
// first sync, so the first command cannot meet CLUSTERDOWN or a half-known
// slot map. It skips the test when redis-server is missing or REDIS_URL
// points at an external server, since a cluster needs processes it owns.
//
// The nodes are joined with CLUSTER MEET, ADDSLOTS and REPLICATE rather than
// redis-cli --cluster create: that works the same over TLS and waits for
// exactly what the tests need instead of for fixed seconds.
func StartCluster(t testing.TB, opts ...ClusterOptions) *Cluster {
	t.Helper()
	if u := os.Getenv("REDIS_URL"); u != "" {
		t.Skipf("redistest: a cluster needs private redis-server processes; REDIS_URL=%s is an external server", u)
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redistest: a cluster needs redis-server on PATH; install the Debian package redis-server")
	}
	var o ClusterOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Masters == 0 {
		o.Masters = 3
	}
	if o.NodeTimeout == 0 {
		o.NodeTimeout = 2 * time.Second
	}
	if o.Masters < 1 || o.ReplicasPerMaster < 0 || o.NodeTimeout < 100*time.Millisecond {
		t.Fatalf("redistest: bad ClusterOptions %+v", o)
	}
	c := &Cluster{t: t, opts: o}
	if o.TLS {
		var err error
		if c.tls, err = newTLSFiles(t.TempDir(), o.TLSClientAuth); err != nil {
			t.Fatalf("redistest: %v", err)
		}
	}
	extra := []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf", // in the node's --dir, so Restart finds it
		"--cluster-node-timeout", strconv.FormatInt(o.NodeTimeout.Milliseconds(), 10),
		// Promote a replica however long it was cut off: a test that kills
		// a master wants a failover, not a cluster that stays down.
		"--cluster-replica-validity-factor", "0",
		// Start a replica's full sync at once instead of after 5 s.
		"--repl-diskless-sync-delay", "0",
	}
	if o.TLS {
		extra = append(extra, "--tls-cluster", "yes")
	}
	n := o.Masters * (1 + o.ReplicasPerMaster)
	for range n {
		s, err := startServer(t, Options{AOF: o.AOF, TLS: o.TLS, TLSClientAuth: o.TLSClientAuth}, c.tls, extra, clusterPort)
		if err != nil {
			t.Fatalf("redistest: start cluster node: %v", err)
		}
		c.nodes = append(c.nodes, &node{Server: s, admin: redis.NewClient(&redis.Options{
			Addr: s.Addr(), TLSConfig: s.TLSConfig(),
			MaxRetries: -1, DialTimeout: 500 * time.Millisecond, ReadTimeout: 5 * time.Second, PoolSize: 2,
		})})
	}
	t.Cleanup(c.close) // after the nodes', so it runs before theirs
	if err := c.join(context.Background()); err != nil {
		c.fatalf("join the cluster: %v", err)
	}
	c.waitUntil("the cluster to be ok", c.healthy)
	return c
}

// join makes one cluster of the nodes: slots to the masters, distinct
// config epochs (as redis-cli does, so no epoch collision has to be
// resolved), every node MEETs the first, then each replica REPLICATEs its
// master.
func (c *Cluster) join(ctx context.Context) error {
	for _, n := range c.nodes {
		id, err := n.admin.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			return fmt.Errorf("CLUSTER MYID on %s: %w", n.Addr(), err)
		}
		n.id = id
	}
	for i := range c.opts.Masters {
		r := c.initialSlots(i)
		if err := c.nodes[i].admin.ClusterAddSlotsRange(ctx, r.Start, r.End).Err(); err != nil {
			return fmt.Errorf("CLUSTER ADDSLOTS %v on %s: %w", r, c.nodes[i].Addr(), err)
		}
	}
	for i, n := range c.nodes {
		if err := n.admin.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("CLUSTER SET-CONFIG-EPOCH on %s: %w", n.Addr(), err)
		}
	}
	first := c.nodes[0]
	for _, n := range c.nodes[1:] {
		if err := n.admin.ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(first.port)).Err(); err != nil {
			return fmt.Errorf("CLUSTER MEET from %s: %w", n.Addr(), err)
		}
	}
	c.waitUntil("every node to know every other", func() error {
		for _, n := range c.nodes {
			lines, err := c.view(ctx, n)
			if err != nil {
				return err
			}
			if len(lines) != len(c.nodes) {
				return fmt.Errorf("%s knows %d of %d nodes", n.Addr(), len(lines), len(c.nodes))
			}
			for _, l := range lines {
				if l.has("handshake") || l.has("noaddr") || c.byID(l.id) == nil {
					return fmt.Errorf("%s: %s has flags %v", n.Addr(), l.addr, l.flags)
				}
			}
		}
		return nil
	})
	for i, n := range c.nodes[c.opts.Masters:] {
		master := c.nodes[i/c.opts.ReplicasPerMaster]
		if err := n.admin.ClusterReplicate(ctx, master.id).Err(); err != nil {
			return fmt.Errorf("CLUSTER REPLICATE on %s: %w", n.Addr(), err)
		}
	}
	return nil
}

// initialSlots is the share of master i: the slots split evenly in order,
// as redis-cli splits them.
func (c *Cluster) initialSlots(i int) SlotRange {
	m := c.opts.Masters
	return SlotRange{i * Slots / m, (i+1)*Slots/m - 1}
}

// clusterPort is a free port whose cluster bus port (port+10000, which
// Redis before 7.0 cannot be told otherwise) is free too.
func clusterPort() (int, error) {
	for range 20 {
		p, err := freePort()
		if err != nil {
			return 0, err
		}
		if p+10000 > 65535 {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+10000)))
		if err != nil {
			continue
		}
		_ = l.Close()
		return p, nil
	}
	return 0, errors.New("no free port with a free cluster bus port 10000 above it")
}

// Addrs are the host:port of every node, in start order (the masters as
// started, then their replicas).
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.Addr()
	}
	return addrs
}

// Options returns fresh cluster client options that know every node (and
// TLS), for callers that build and own their client.
func (c *Cluster) Options() *redis.ClusterOptions {
	return &redis.ClusterOptions{Addrs: c.Addrs(), TLSConfig: c.TLSConfig()}
}

// Client returns a new cluster client, closed when the test ends. It is a
// *redis.ClusterClient, typed like Server.Client and Sentinel.Client so
// that a test can take any of the three.
func (c *Cluster) Client() redis.UniversalClient { return c.NewClient(nil) }

// NewClient returns a cluster client configured by tweak (which may be
// nil), closed when the test ends. The client follows MOVED redirections
// on its own; a test that wants it to notice a new slot map without
// traffic sets a short ClusterStateReloadInterval (the default is 60 s).
func (c *Cluster) NewClient(tweak func(*redis.ClusterOptions)) *redis.ClusterClient {
	opt := c.Options()
	if tweak != nil {
		tweak(opt)
	}
	cc := redis.NewClusterClient(opt)
	c.mu.Lock()
	c.clients = append(c.clients, cc)
	c.mu.Unlock()
	return cc
}

// TLSConfig returns a new client TLS configuration for the nodes (see
// Server.TLSConfig), or nil without TLS.
func (c *Cluster) TLSConfig() *tls.Config {
	if c.tls == nil {
		return nil
	}
	return c.tls.config()
}

// TLSFiles returns the paths of the PEM files all nodes share; they are
// empty without TLS.
func (c *Cluster) TLSFiles() TLSFiles {
	if c.tls == nil {
		return TLSFiles{}
	}
	return c.tls.TLSFiles
}

// Nodes describes every node, in start order. A running node describes
// itself; a node that is down is described by the first running node.
func (c *Cluster) Nodes() []ClusterNode {
	c.t.Helper()
	nodes, err := c.describe(context.Background())
	if err != nil {
		c.t.Fatalf("redistest: %v", err)
	}
	return nodes
}

// Masters are the running masters that serve slots, in slot order: after a
// failover the promoted replica takes its old master's place.
func (c *Cluster) Masters() []ClusterNode {
	c.t.Helper()
	var ms []ClusterNode
	for _, n := range c.Nodes() {
		if !n.Down && n.Role == RoleMaster && len(n.Slots) > 0 {
			ms = append(ms, n)
		}
	}
	slices.SortFunc(ms, func(a, b ClusterNode) int { return a.Slots[0].Start - b.Slots[0].Start })
	return ms
}

// Replicas are the running replicas, in start order.
func (c *Cluster) Replicas() []ClusterNode {
	c.t.Helper()
	var rs []ClusterNode
	for _, n := range c.Nodes() {
		if !n.Down && n.Role == RoleReplica {
			rs = append(rs, n)
		}
	}
	return rs
}

// MasterForSlot is the running master that says it serves slot. It fails
// the test when none does, as during a failover.
func (c *Cluster) MasterForSlot(slot int) *Server {
	c.t.Helper()
	for _, m := range c.Masters() {
		for _, r := range m.Slots {
			if r.Contains(slot) {
				return m.Server
			}
		}
	}
	c.t.Fatalf("redistest: no running master serves slot %d", slot)
	return nil
}

// MasterForKey is the running master that serves key's slot (see KeySlot).
func (c *Cluster) MasterForKey(key string) *Server {
	c.t.Helper()
	return c.MasterForSlot(KeySlot(key))
}

func (c *Cluster) describe(ctx context.Context) ([]ClusterNode, error) {
	out := make([]ClusterNode, len(c.nodes))
	var witness []nodeLine // a running node's view, for the nodes that are down
	for i, n := range c.nodes {
		out[i] = ClusterNode{Server: n.Server, ID: n.id, Down: n.PID() == 0}
		if out[i].Down {
			continue
		}
		lines, err := c.view(ctx, n)
		if err != nil {
			return nil, err
		}
		if witness == nil {
			witness = lines
		}
		me, ok := myself(lines)
		if !ok {
			return nil, fmt.Errorf("CLUSTER NODES on %s has no myself line", n.Addr())
		}
		out[i].fill(me)
	}
	for i := range out {
		if !out[i].Down {
			continue
		}
		for _, l := range witness {
			if l.id == out[i].ID {
				out[i].fill(l)
			}
		}
	}
	return out, nil
}

func (n *ClusterNode) fill(l nodeLine) {
	n.Role, n.MasterID, n.Slots = RoleMaster, "", l.slots
	if l.has("slave") {
		n.Role, n.MasterID, n.Slots = RoleReplica, l.master, nil
	}
}

// view is CLUSTER NODES on n.
func (c *Cluster) view(ctx context.Context, n *node) ([]nodeLine, error) {
	text, err := n.admin.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("CLUSTER NODES on %s: %w", n.Addr(), err)
	}
	lines, err := parseClusterNodes(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.Addr(), err)
	}
	return lines, nil
}

func (c *Cluster) byID(id string) *node {
	for _, n := range c.nodes {
		if n.id == id {
			return n
		}
	}
	return nil
}

func (c *Cluster) byAddr(addr string) *node {
	c.t.Helper()
	for _, n := range c.nodes {
		if n.Addr() == addr {
			return n
		}
	}
	c.t.Fatalf("redistest: %s is not a node of the cluster (%v)", addr, c.Addrs())
	return nil
}

// running are the nodes whose process runs.
func (c *Cluster) running() []*node {
	var ns []*node
	for _, n := range c.nodes {
		if n.PID() != 0 {
			ns = append(ns, n)
		}
	}
	return ns
}

// close closes the clients while the nodes still run (the nodes' own
// cleanups, registered earlier, run after it and kill them).
func (c *Cluster) close() {
	c.mu.Lock()
	clients := c.clients
	c.clients = nil
	c.mu.Unlock()
	for _, cc := range clients {
		_ = cc.Close()
	}
	for _, n := range c.nodes {
		_ = n.admin.Close()
	}
}

// waitUntil polls f like the package's waitUntil, and on a timeout logs the
// end of every node's log before failing, since a cluster that does not
// converge says why only there.
func (c *Cluster) waitUntil(what string, f func() error) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fatalf logs the end of every node's log and fails the test.
func (c *Cluster) fatalf(format string, args ...any) {
	c.t.Helper()
	for _, n := range c.nodes {
		log, _ := os.ReadFile(filepath.Join(n.dir, "redis.log"))
		c.t.Logf("redistest: %s (pid %d) log:\n%s", n.Addr(), n.PID(), tail(log, 1500))
	}
	c.t.Fatalf("redistest: "+format, args...)
}

// URL is a go-redis cluster URL naming every node (redis://first?addr=…),
// for child processes: OpenURL, or redis.ParseClusterURL, reads it. With
// TLS it is a rediss:// URL, and the child must trust TLSFiles().CACert.
func (c *Cluster) URL() string {
	scheme := "redis://"
	if c.tls != nil {
		scheme = "rediss://"
	}
	addrs := c.Addrs()
	u := scheme + addrs[0]
	for i, a := range addrs[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + a
	}
	return u
}

// OpenURL returns a client for a URL of Server.URL or Cluster.URL: a
// cluster client when the URL names more addresses (addr=), else a client
// of one server. tweak, if not nil, adjusts a cluster client's options.
func OpenURL(rawURL string, tweak func(*redis.ClusterOptions)) (redis.UniversalClient, error) {
	if strings.Contains(rawURL, "addr=") {
		opt, err := redis.ParseClusterURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("redistest: %w", err)
		}
		if tweak != nil {
			tweak(opt)
		}
		return redis.NewClusterClient(opt), nil
	}
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	return redis.NewClient(opt), nil
}
