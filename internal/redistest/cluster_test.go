package redistest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestClusterStartsWithReplicasAndSpreadsKeys(t *testing.T) {
	parallel(t)
	start := time.Now()
	c := StartCluster(t, ClusterOptions{Masters: 3, ReplicasPerMaster: 1})
	t.Logf("3 masters + 3 replicas ready in %v", time.Since(start))
	ctx := context.Background()

	masters, replicas := c.Masters(), c.Replicas()
	if len(masters) != 3 || len(replicas) != 3 {
		t.Fatalf("%d masters, %d replicas; want 3 and 3", len(masters), len(replicas))
	}
	next := 0
	for _, m := range masters {
		for _, r := range m.Slots {
			if r.Start != next {
				t.Fatalf("master %s serves %v; want the slots after %d", m.Addr(), m.Slots, next-1)
			}
			next = r.End + 1
		}
		if m.PID() == 0 || m.ID == "" {
			t.Fatalf("master %+v has no process or ID", m)
		}
	}
	if next != Slots {
		t.Fatalf("masters serve slots up to %d; want all %d", next-1, Slots)
	}
	for _, r := range replicas {
		if !slices.ContainsFunc(masters, func(m ClusterNode) bool { return m.ID == r.MasterID }) {
			t.Fatalf("replica %s follows %q, not a master", r.Addr(), r.MasterID)
		}
		if slices.ContainsFunc(replicas, func(o ClusterNode) bool { return o.ID != r.ID && o.MasterID == r.MasterID }) {
			t.Fatalf("two replicas follow %s", r.MasterID)
		}
	}

	before, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rc := c.Client()
	const n = 300
	for i := range n {
		if err := rc.Set(ctx, fmt.Sprintf("key:%d", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	after, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	if len(d) != 3 {
		t.Fatalf("Stats of %d masters; want 3", len(d))
	}
	for i, m := range d {
		if m.Addr != masters[i].Addr() {
			t.Fatalf("Stats[%d] is %s; want %s (slot order)", i, m.Addr, masters[i].Addr())
		}
		if m.Keys == 0 || m.Calls["set"] != m.Keys || m.Commands < m.Calls["set"] {
			t.Fatalf("master %s: %+v; want some keys, one SET each", m.Addr, m)
		}
		t.Logf("master %s: %d keys, %d commands, %v CPU", m.Addr, m.Keys, m.Commands, m.CPU)
	}
	if tot := d.Total(); tot.Keys != n || tot.Calls["set"] != n {
		t.Fatalf("total %d keys, %d SETs; want %d", tot.Keys, tot.Calls["set"], n)
	}

	// MasterForKey agrees with the servers about where a key lives.
	for _, key := range []string{"key:0", "key:1", "{user1000}.following", "foo{}{bar}", "{chronos}:queue"} {
		slot, err := rc.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if KeySlot(key) != int(slot) {
			t.Fatalf("KeySlot(%q) = %d; CLUSTER KEYSLOT says %d", key, KeySlot(key), slot)
		}
		if key != "key:0" && key != "key:1" {
			continue
		}
		n, err := c.MasterForKey(key).Client().Exists(ctx, key).Result()
		if err != nil || n != 1 {
			t.Fatalf("MasterForKey(%q) = %s: EXISTS = %d, %v", key, c.MasterForKey(key).Addr(), n, err)
		}
	}
}

func TestClusterKillMasterPromotesAReplicaAndTheClientRecovers(t *testing.T) {
	parallel(t)
	c := StartCluster(t, ClusterOptions{ReplicasPerMaster: 1, NodeTimeout: time.Second})
	ctx := context.Background()
	rc := c.NewClient(func(o *redis.ClusterOptions) { o.ClusterStateReloadInterval = 200 * time.Millisecond })
	if err := rc.Set(ctx, "k", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	old := c.MasterForKey("k")
	oldID := c.Nodes()[slices.Index(c.Addrs(), old.Addr())].ID
	waitUntil(t, "the write to reach the replica", func() error {
		for _, r := range c.Replicas() {
			if r.MasterID != oldID {
				continue
			}
			st, err := r.Stats(ctx)
			if err != nil {
				return err
			}
			if st.Keys != 1 {
				return fmt.Errorf("replica has %d keys", st.Keys)
			}
		}
		return nil
	})

	promoted, took := c.KillMaster(old.Addr())
	t.Logf("replica %s promoted %v after the kill", promoted.Addr(), took)
	if promoted == old || old.PID() != 0 {
		t.Fatalf("KillMaster(%s) returned %s; old pid %d", old.Addr(), promoted.Addr(), old.PID())
	}
	if got := c.MasterForKey("k"); got != promoted {
		t.Fatalf("MasterForKey = %s; want the promoted %s", got.Addr(), promoted.Addr())
	}
	// The client's first commands may still go to the dead master; it
	// recovers by itself once it reloads the slot map.
	waitUntil(t, "the client to write to the new master", func() error {
		return rc.Set(ctx, "k2", "after", 0).Err()
	})
	if got, err := rc.Get(ctx, "k").Result(); err != nil || got != "before" {
		t.Fatalf("GET k = %q, %v; want the replicated write", got, err)
	}

	c.Restart(old.Addr())
	n := c.Nodes()[slices.Index(c.Addrs(), old.Addr())]
	if n.Down || n.Role != RoleReplica || c.byID(n.MasterID).Server != promoted {
		t.Fatalf("restarted old master: %+v; want a replica of %s", n, promoted.Addr())
	}
}

func TestClusterFailoverIsGraceful(t *testing.T) {
	parallel(t)
	c := StartCluster(t, ClusterOptions{ReplicasPerMaster: 1})
	ctx := context.Background()
	rc := c.Client()
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	old := c.MasterForKey("k")
	start := time.Now()
	promoted := c.Failover(old.Addr())
	t.Logf("Failover took %v", time.Since(start))
	if promoted == old || c.MasterForKey("k") != promoted {
		t.Fatalf("Failover(%s) = %s; MasterForKey = %s", old.Addr(), promoted.Addr(), c.MasterForKey("k").Addr())
	}
	// No write is lost and the client follows the MOVED redirection.
	if got, err := rc.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("GET k = %q, %v", got, err)
	}
	if err := rc.Set(ctx, "k", "w", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// Back again, naming the replica this time.
	if back := c.Failover(old.Addr()); back != old {
		t.Fatalf("Failover back = %s; want %s", back.Addr(), old.Addr())
	}
}

func TestClusterSkipsWithRedisURL(t *testing.T) {
	t.Setenv("REDIS_URL", "redis://127.0.0.1:1/0")
	ok := t.Run("start", func(t *testing.T) {
		StartCluster(t)
		t.Error("StartCluster did not skip")
	})
	if !ok {
		t.Fatal("subtest failed")
	}
}

func TestParseStats(t *testing.T) {
	info := "# Stats\r\ntotal_commands_processed:42\r\n# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:0.250000\r\n" +
		"# Commandstats\r\ncmdstat_set:calls=7,usec=20,usec_per_call=2.86,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_cluster|slots:calls=3,usec=9\r\n# Keyspace\r\ndb0:keys=5,expires=0,avg_ttl=0\r\n"
	st, err := parseStats(info)
	if err != nil {
		t.Fatal(err)
	}
	want := NodeStats{Keys: 5, Commands: 42, Calls: map[string]int64{"set": 7, "cluster|slots": 3}, CPU: 1750 * time.Millisecond}
	if st.Keys != want.Keys || st.Commands != want.Commands || st.CPU != want.CPU || len(st.Calls) != 2 ||
		st.Calls["set"] != 7 || st.Calls["cluster|slots"] != 3 {
		t.Fatalf("parseStats = %+v; want %+v", st, want)
	}
	d := st.Sub(NodeStats{Keys: 2, Commands: 40, Calls: map[string]int64{"set": 7}, CPU: time.Second})
	if d.Keys != 3 || d.Commands != 2 || d.CPU != 750*time.Millisecond || len(d.Calls) != 1 || d.Calls["cluster|slots"] != 3 {
		t.Fatalf("Sub = %+v", d)
	}
}

// A pool lends a cluster again once its test ended, empty and with the
// same topology, and stops a cluster a test changed instead.
func TestClusterPoolLendsACleanClusterAgain(t *testing.T) {
	parallel(t)
	p := NewClusterPool(ClusterOptions{ReplicasPerMaster: 1})
	t.Cleanup(p.Close)
	ctx := context.Background()
	var first []string
	var script = redis.NewScript(`return 1`)
	t.Run("writes", func(t *testing.T) {
		c := p.Get(t)
		first = c.Addrs()
		rc := c.Client()
		for i := range 30 {
			if err := rc.Set(ctx, fmt.Sprintf("k%d", i), i, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := script.Run(ctx, rc, []string{"k1"}).Err(); err != nil {
			t.Fatal(err)
		}
	})
	var again *Cluster
	t.Run("finds it clean", func(t *testing.T) {
		start := time.Now()
		again = p.Get(t)
		t.Logf("lent again in %v", time.Since(start))
		if !slices.Equal(again.Addrs(), first) {
			t.Fatalf("got cluster %v; want the idle %v", again.Addrs(), first)
		}
		for _, n := range again.Nodes() {
			st, err := n.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Keys != 0 {
				t.Errorf("%s %s has %d keys", n.Role, n.Addr(), st.Keys)
			}
		}
		m := again.MasterForKey("k1").Client()
		if ok, err := m.ScriptExists(ctx, script.Hash()).Result(); err != nil || ok[0] {
			t.Errorf("SCRIPT EXISTS = %v, %v; want a flushed script cache", ok, err)
		}
		start = time.Now()
		if err := again.reset(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("made clean again in %v", time.Since(start))
		again.Failover(again.Masters()[0].Addr())
	})
	t.Run("a changed cluster is not lent", func(t *testing.T) {
		c := p.Get(t)
		if slices.Equal(c.Addrs(), first) {
			t.Fatal("the pool lent a cluster that a test failed over")
		}
		if again.Nodes()[0].PID() != 0 {
			t.Fatal("the failed-over cluster still runs")
		}
		if err := c.Client().ConfigSet(ctx, "maxmemory", "100mb").Err(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("nor one whose config changed", func(t *testing.T) {
		p.mu.Lock()
		idle := len(p.idle)
		p.mu.Unlock()
		if idle != 0 {
			t.Fatalf("%d idle clusters; want none", idle)
		}
	})
}

// CutAndKillMaster loses what the master acknowledged while its replica
// was cut off, and nothing from before; WAIT sees the replica missing.
func TestClusterCutAndKillMasterLosesTheWritesOfTheLag(t *testing.T) {
	parallel(t)
	c := StartCluster(t, ClusterOptions{ReplicasPerMaster: 1, NodeTimeout: time.Second})
	ctx := context.Background()
	rc := c.NewClient(func(o *redis.ClusterOptions) { o.ClusterStateReloadInterval = 200 * time.Millisecond })
	if err := rc.Set(ctx, "{k}before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	old := c.MasterForKey("{k}")
	m := old.Client()
	if n, err := m.Do(ctx, "WAIT", 1, 1000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT before the cut = %d, %v", n, err)
	}
	done := make(chan int64)
	go func() { // writes while the replica is cut off
		var n int64
		for i := 0; ; i++ {
			if err := m.Set(ctx, fmt.Sprintf("{k}during%d", i), "1", 0).Err(); err != nil {
				done <- n
				return
			}
			n++
			time.Sleep(5 * time.Millisecond)
		}
	}()
	promoted, took := c.CutAndKillMaster(old.Addr(), 300*time.Millisecond)
	acked := <-done
	t.Logf("%d writes acknowledged before the kill; promoted %s %v after it", acked, promoted.Addr(), took)
	waitUntil(t, "the client to read from the new master", func() error { return rc.Get(ctx, "{k}before").Err() })
	lost := 0
	for i := range acked {
		if rc.Exists(ctx, fmt.Sprintf("{k}during%d", i)).Val() == 0 {
			lost++
		}
	}
	if lost == 0 {
		t.Fatalf("none of %d writes of the lag was lost", acked)
	}
	t.Logf("%d of %d acknowledged writes lost", lost, acked)
	c.Restart(old.Addr())
}
