package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelOptions configure StartSentinel. The zero value is a master, one
// replica and one sentinel.
type SentinelOptions struct {
	// Sentinels is 1 (quorum 1) or 3 (quorum 2). Default 1.
	Sentinels int
	// AOF turns on the append-only file on both data servers.
	AOF bool
}

// DefaultMasterName is the name the sentinels monitor the master under.
const DefaultMasterName = "chronos"

// Sentinel is a Redis Sentinel deployment owned by one test: two data
// servers (a master and its replica) and one or three sentinels, each a
// private process on a free loopback port. The sentinels detect a dead
// master after 500 ms, so failovers take a second or two, not a minute.
type Sentinel struct {
	t         testing.TB
	servers   [2]*Server
	sentinels []*sentinelProc

	mu      sync.Mutex
	clients []*redis.Client
}

// StartSentinel starts a Sentinel deployment for t and registers its
// cleanup. It returns when the sentinels know the master, its replica (and
// each other), so that a failover can start at once. It skips the test when
// REDIS_URL is set: a deployment needs processes it can kill.
func StartSentinel(t testing.TB, opts ...SentinelOptions) *Sentinel {
	t.Helper()
	if os.Getenv("REDIS_URL") != "" {
		t.Skip("redistest: Sentinel needs private redis-server processes; REDIS_URL is set")
	}
	var o SentinelOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Sentinels == 0 {
		o.Sentinels = 1
	}
	if o.Sentinels != 1 && o.Sentinels != 3 {
		t.Fatalf("redistest: SentinelOptions.Sentinels = %d; want 1 or 3", o.Sentinels)
	}
	d := &Sentinel{t: t}
	d.servers[0] = Start(t, Options{AOF: o.AOF})
	d.servers[1] = Start(t, Options{AOF: o.AOF})
	t.Cleanup(d.closeClients) // runs before the servers' own cleanups

	ctx := context.Background()
	master, replica := d.servers[0], d.servers[1]
	host, port, _ := net.SplitHostPort(master.Addr())
	// A full sync waits repl-diskless-sync-delay (5 s) for more replicas to
	// join; there is never another one, here or after a failover.
	for _, s := range d.servers {
		if err := s.Client().ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
			t.Fatalf("redistest: CONFIG SET: %v", err)
		}
	}
	admin := replica.NewClient(nil)
	if err := admin.SlaveOf(ctx, host, port).Err(); err != nil {
		t.Fatalf("redistest: REPLICAOF: %v", err)
	}
	waitUntil(t, "the replica to sync", func() error {
		info, err := admin.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "master_link_status:up") {
			return errors.New("link down")
		}
		return nil
	})

	quorum := o.Sentinels/2 + 1
	for range o.Sentinels {
		d.sentinels = append(d.sentinels, startSentinelProc(t, master.Addr(), quorum))
	}
	waitUntil(t, "the sentinels to know the deployment", func() error {
		for _, s := range d.sentinels {
			m, err := s.client.Master(ctx, DefaultMasterName).Result()
			if err != nil {
				return err
			}
			if n, _ := strconv.Atoi(m["num-other-sentinels"]); n != o.Sentinels-1 {
				return fmt.Errorf("sentinel %s sees %d other sentinels", s.addr, n)
			}
			if err := s.replicaReady(ctx, replica.Addr()); err != nil {
				return err
			}
		}
		return nil
	})
	return d
}

// MasterName is the name to put in redis.FailoverOptions.
func (d *Sentinel) MasterName() string { return DefaultMasterName }

// SentinelAddrs are the host:port of every sentinel.
func (d *Sentinel) SentinelAddrs() []string {
	addrs := make([]string, len(d.sentinels))
	for i, s := range d.sentinels {
		addrs[i] = s.addr
	}
	return addrs
}

// Client returns a new failover client (it asks the sentinels for the
// master and follows it), closed when the test ends.
func (d *Sentinel) Client() redis.UniversalClient { return d.NewClient(nil) }

// NewClient returns a failover client configured by tweak (which may be
// nil), closed when the test ends.
func (d *Sentinel) NewClient(tweak func(*redis.FailoverOptions)) *redis.Client {
	opt := &redis.FailoverOptions{MasterName: DefaultMasterName, SentinelAddrs: d.SentinelAddrs()}
	if tweak != nil {
		tweak(opt)
	}
	c := redis.NewFailoverClient(opt)
	d.mu.Lock()
	d.clients = append(d.clients, c)
	d.mu.Unlock()
	return c
}

// MasterAddr is the master's host:port as the first sentinel reports it.
func (d *Sentinel) MasterAddr() string {
	d.t.Helper()
	addr, err := d.sentinels[0].masterAddr(context.Background())
	if err != nil {
		d.t.Fatalf("redistest: sentinel master address: %v", err)
	}
	return addr
}

// Master is the data server the sentinels currently report as master.
func (d *Sentinel) Master() *Server {
	d.t.Helper()
	return d.server(d.MasterAddr(), true)
}

// Replica is the data server that is not the current master.
func (d *Sentinel) Replica() *Server {
	d.t.Helper()
	return d.server(d.MasterAddr(), false)
}

func (d *Sentinel) server(masterAddr string, master bool) *Server {
	for _, s := range d.servers {
		if (s.Addr() == masterAddr) == master {
			return s
		}
	}
	d.t.Fatalf("redistest: sentinels report master %s, which is none of the data servers", masterAddr)
	return nil
}

// Servers returns the two data servers, in the order they were started
// (the first was the master at start).
func (d *Sentinel) Servers() []*Server { return d.servers[:] }

// SentinelPIDs returns the process IDs of the sentinels.
func (d *Sentinel) SentinelPIDs() []int {
	pids := make([]int, len(d.sentinels))
	for i, s := range d.sentinels {
		pids[i] = s.cmd.Process.Pid
	}
	return pids
}

// Failover moves the master role to the replica the way an operator does it
// without losing acknowledged writes, and returns the new master's address:
//
//  1. CLIENT PAUSE WRITE on the old master, so nothing more is written there;
//  2. wait until the replica has every byte of the master's replication
//     stream (equal offsets);
//  3. SENTINEL FAILOVER, and wait until every sentinel reports the new
//     master and it answers ROLE as a master;
//  4. REPLICAOF the old master to the new one (Sentinel itself would do this
//     only about 8 s later) and lift the pause: writes that were held by
//     the pause now fail with READONLY on the old master, and clients
//     retry them on the new one.
//
// A bare SENTINEL FAILOVER does not pause anything: writes that reach the
// old master between the replica's promotion and the clients' switch are
// acknowledged and then discarded when the old master resynchronises. Use
// FailoverUnpaused to see that.
func (d *Sentinel) Failover() string {
	d.t.Helper()
	return d.failover(true)
}

// FailoverUnpaused is a bare SENTINEL FAILOVER: it returns when every
// sentinel reports the new master and the new master accepts writes, while
// the old master still runs as a master until Sentinel demotes it.
func (d *Sentinel) FailoverUnpaused() string {
	d.t.Helper()
	return d.failover(false)
}

func (d *Sentinel) failover(pause bool) string {
	d.t.Helper()
	ctx := context.Background()
	oldAddr := d.MasterAddr()
	old, replica := d.server(oldAddr, true), d.server(oldAddr, false)
	oldc := redis.NewClient(&redis.Options{Addr: old.Addr()})
	defer oldc.Close()
	repc := redis.NewClient(&redis.Options{Addr: replica.Addr()})
	defer repc.Close()

	if pause {
		if err := oldc.Do(ctx, "CLIENT", "PAUSE", 30000, "WRITE").Err(); err != nil {
			d.t.Fatalf("redistest: CLIENT PAUSE: %v", err)
		}
		waitUntil(d.t, "the replica to catch up", func() error {
			m, err := offset(ctx, oldc, "master_repl_offset")
			if err != nil {
				return err
			}
			r, err := offset(ctx, repc, "slave_repl_offset")
			if err != nil {
				return err
			}
			if r < m {
				return fmt.Errorf("replica at %d of %d", r, m)
			}
			return nil
		})
	}
	// A sentinel refuses with NOGOODSLAVE until it has heard from the
	// replica recently; retry until it accepts. INPROG means a failover
	// already started (the paused master can miss PINGs and look down), and
	// asking again after it ended would fail back to the old master.
	waitUntil(d.t, "SENTINEL FAILOVER to start", func() error {
		err := d.sentinels[0].client.Failover(ctx, DefaultMasterName).Err()
		if err != nil && redis.HasErrorPrefix(err, "INPROG") {
			return nil
		}
		return err
	})
	newAddr := d.waitNewMaster(ctx, oldAddr)
	if pause {
		host, port, _ := net.SplitHostPort(newAddr)
		if err := oldc.SlaveOf(ctx, host, port).Err(); err != nil {
			d.t.Fatalf("redistest: REPLICAOF on the old master: %v", err)
		}
		if err := oldc.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
			d.t.Fatalf("redistest: CLIENT UNPAUSE: %v", err)
		}
	}
	return newAddr
}

// KillMaster kills the master with SIGKILL, as a crash would, waits until
// the sentinels have promoted the replica and it accepts writes, and
// returns the new master's address. The killed server stays down; call
// Restart on it (see Servers) to bring it back as a replica.
func (d *Sentinel) KillMaster() string {
	d.t.Helper()
	oldAddr := d.MasterAddr()
	d.server(oldAddr, true).Kill()
	return d.waitNewMaster(context.Background(), oldAddr)
}

// KillMasterOntoEmptyReplica is a failover to a replica that has none of
// the data: it kills the master with SIGKILL and, before the sentinels
// notice (they wait 500 ms), empties the replica, then waits until they
// have promoted it and it accepts writes, and returns its address. The
// replica is left as a replica would be that restarted without persistence
// just as its master died, so that it never synced again: a replica of a
// master that is gone, with an empty dataset, which Sentinel promotes as
// it is (Sentinel does not look at the data). It is emptied by FLUSHALL,
// with replica-read-only off for that one command, in a MULTI that also
// asks ROLE, so the test fails if the replica was promoted before it was
// emptied. The master is dead by then, so no replication stream writes
// anything back. Nothing the clients wrote survives: they end on a master
// with an empty dataset, as after FLUSHALL. The killed server stays down.
//
// Emptying the replica while its master runs would not do: a writable
// replica's FLUSHALL empties it, but the master's stream goes on writing
// the keys it touches afterwards, and a replica restarted empty syncs the
// whole dataset again.
func (d *Sentinel) KillMasterOntoEmptyReplica() string {
	d.t.Helper()
	ctx := context.Background()
	oldAddr := d.MasterAddr()
	replica := d.server(oldAddr, false)
	d.server(oldAddr, true).Kill()

	c := replica.NewClient(nil)
	defer c.Close()
	if err := c.ConfigSet(ctx, "replica-read-only", "no").Err(); err != nil {
		d.t.Fatalf("redistest: CONFIG SET replica-read-only no: %v", err)
	}
	var role *redis.Cmd
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		role = p.Do(ctx, "ROLE")
		p.FlushAll(ctx)
		return nil
	})
	if err != nil {
		d.t.Fatalf("redistest: FLUSHALL on the replica: %v", err)
	}
	if r, _ := role.Slice(); len(r) == 0 || r[0] != "slave" {
		d.t.Fatalf("redistest: the replica answered ROLE %v when it was emptied: promoted already", r)
	}
	if err := c.ConfigSet(ctx, "replica-read-only", "yes").Err(); err != nil {
		d.t.Fatalf("redistest: CONFIG SET replica-read-only yes: %v", err)
	}
	return d.waitNewMaster(ctx, oldAddr)
}

// waitNewMaster waits until every sentinel reports a master other than
// oldAddr and that server answers ROLE as a master.
func (d *Sentinel) waitNewMaster(ctx context.Context, oldAddr string) string {
	d.t.Helper()
	var addr string
	waitUntil(d.t, "the sentinels to report a new master", func() error {
		for i, s := range d.sentinels {
			a, err := s.masterAddr(ctx)
			if err != nil {
				return err
			}
			if a == oldAddr {
				return fmt.Errorf("sentinel %s still reports %s", s.addr, a)
			}
			if i == 0 {
				addr = a
			} else if a != addr {
				return fmt.Errorf("sentinels disagree: %s and %s", addr, a)
			}
		}
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		role, err := c.Do(ctx, "ROLE").Slice()
		if err != nil {
			return err
		}
		if len(role) == 0 || role[0] != "master" {
			return fmt.Errorf("%s answers ROLE %v", addr, role)
		}
		return nil
	})
	return addr
}

func (d *Sentinel) closeClients() {
	d.mu.Lock()
	clients := d.clients
	d.clients = nil
	d.mu.Unlock()
	for _, c := range clients {
		_ = c.Close()
	}
}

// offset reads one integer field of INFO replication.
func offset(ctx context.Context, c *redis.Client, field string) (int64, error) {
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO replication has no %s", field)
}

// waitUntil polls f until it returns nil. The 20 s deadline only bounds a
// hung deployment; it is not a timing assertion.
func waitUntil(t testing.TB, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: timed out waiting for %s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sentinelProc is one redis-server running in sentinel mode.
type sentinelProc struct {
	addr   string
	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
	client *redis.SentinelClient
}

// startSentinelProc starts a sentinel monitoring masterAddr and registers
// its cleanup.
func startSentinelProc(t testing.TB, masterAddr string, quorum int) *sentinelProc {
	t.Helper()
	host, mport, _ := net.SplitHostPort(masterAddr)
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var port int
		if port, err = freePort(); err != nil {
			continue
		}
		s := &sentinelProc{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: t.TempDir()}
		// Sentinel rewrites its config file, so each gets its own. The
		// timeouts are short so that tests see failovers in about a second:
		// down-after 500 ms, and failover-timeout 2 s bounds a failover that
		// stalls (and spaces automatic retries by twice that).
		conf := fmt.Sprintf(`port %d
bind 127.0.0.1
protected-mode no
daemonize no
dir %s
logfile %s
sentinel monitor %s %s %s %d
sentinel down-after-milliseconds %[4]s 500
sentinel failover-timeout %[4]s 2000
sentinel parallel-syncs %[4]s 1
`, port, s.dir, filepath.Join(s.dir, "sentinel.log"), DefaultMasterName, host, mport, quorum)
		path := filepath.Join(s.dir, "sentinel.conf")
		if err = os.WriteFile(path, []byte(conf), 0o600); err != nil {
			break
		}
		if err = s.launch(path); err == nil {
			t.Cleanup(s.stop)
			return s
		}
	}
	t.Fatalf("redistest: start sentinel: %v", err)
	return nil
}

func (s *sentinelProc) launch(conf string) error {
	s.client = redis.NewSentinelClient(&redis.Options{Addr: s.addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	cmd, exited, err := spawn([]string{conf, "--sentinel"}, filepath.Join(s.dir, "sentinel.log"),
		func(ctx context.Context) error { return s.client.Ping(ctx).Err() })
	if err != nil {
		_ = s.client.Close()
		return err
	}
	s.cmd, s.exited = cmd, exited
	return nil
}

func (s *sentinelProc) masterAddr(ctx context.Context) (string, error) {
	hp, err := s.client.GetMasterAddrByName(ctx, DefaultMasterName).Result()
	if err != nil {
		return "", fmt.Errorf("sentinel %s: %w", s.addr, err)
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
}

// replicaReady reports nil when the sentinel lists addr as a replica it can
// promote: connected and not down.
func (s *sentinelProc) replicaReady(ctx context.Context, addr string) error {
	rs, err := s.client.Replicas(ctx, DefaultMasterName).Result()
	if err != nil {
		return err
	}
	for _, r := range rs {
		if net.JoinHostPort(r["ip"], r["port"]) != addr {
			continue
		}
		if f := r["flags"]; f != "slave" {
			return fmt.Errorf("sentinel %s: replica %s has flags %q", s.addr, addr, f)
		}
		return nil
	}
	return fmt.Errorf("sentinel %s does not list replica %s yet", s.addr, addr)
}

// stop kills the sentinel by its PID and reaps it.
func (s *sentinelProc) stop() {
	_ = s.client.Close()
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}
