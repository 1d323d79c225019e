package redistest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// KillMaster kills the master at addr with SIGKILL, as a crash would, and
// waits until one of its replicas has been elected in its place and the
// cluster is healthy again (see WaitHealthy). It returns the promoted
// replica and how long that took from the kill: about NodeTimeout to
// detect the failure plus a second or so for the election.
//
// Writes the master acknowledged but had not yet sent to the replica are
// lost, as in production. The killed node stays down; Restart brings it
// back as a replica of the new master. It fails the test when addr is not
// a master serving slots, when it has no running replica, or when fewer
// than three masters serve slots (the others could not be a majority).
func (c *Cluster) KillMaster(addr string) (promoted *Server, took time.Duration) {
	c.t.Helper()
	c.WaitHealthy()
	return c.killMaster(addr, 0)
}

// CutAndKillMaster kills the master at addr as KillMaster does, after its
// replicas have been cut off from it for lag: it closes their replication
// links and makes them fail to reconnect (each is given a masterauth the
// master refuses), waits until the master counts no replica, and lets it
// take writes for lag before the kill. Whatever it acknowledged in that
// time is lost when a replica is promoted, as with a replica that fell
// behind or a link that broke just before a crash; a writer that waits for
// its replicas (WAIT) sees them missing instead. The promoted replica gets
// its masterauth back, so Restart brings the old master back as its
// replica.
func (c *Cluster) CutAndKillMaster(addr string, lag time.Duration) (promoted *Server, took time.Duration) {
	c.t.Helper()
	c.WaitHealthy()
	return c.killMaster(addr, lag)
}

// FreezeMaster stops the master at addr with SIGSTOP, as a host that hangs
// or a network partition would, and waits, as KillMaster does, until one of
// its replicas has taken over. Unlike a killed one, the frozen master's
// connections stay open and hang: a client notices only when its reads
// time out. The node stays frozen until the cluster stops (Restart kills
// and restarts it; as Kill it is a master no more).
func (c *Cluster) FreezeMaster(addr string) (promoted *Server, took time.Duration) {
	c.t.Helper()
	c.WaitHealthy()
	c.frozen = true
	defer func() { c.frozen = false }()
	return c.killMaster(addr, 0)
}

// killMaster kills the master at addr, after cutting its replicas off for
// lag if lag is positive, and waits for a replica to take over. With
// c.frozen it stops it instead.
func (c *Cluster) killMaster(addr string, lag time.Duration) (promoted *Server, took time.Duration) {
	c.t.Helper()
	n := c.byAddr(addr)
	nodes := c.Nodes()
	me := nodes[slices.Index(c.nodes, n)]
	if me.Role != RoleMaster || len(me.Slots) == 0 {
		c.t.Fatalf("redistest: KillMaster: %s is a %s serving %v slots, not a master", addr, me.Role, me.Slots)
	}
	var replicas []string
	masters := 0
	for _, o := range nodes {
		if o.Down {
			continue
		}
		if o.Role == RoleMaster && len(o.Slots) > 0 {
			masters++
		}
		if o.MasterID == me.ID {
			replicas = append(replicas, o.ID)
		}
	}
	if masters < 3 {
		c.t.Fatalf("redistest: KillMaster: %d masters serve slots; a failover needs the votes of a majority, so at least 3", masters)
	}
	if len(replicas) == 0 {
		c.t.Fatalf("redistest: KillMaster: master %s has no running replica to promote", addr)
	}

	c.taint("KillMaster")
	ctx := context.Background()
	if lag > 0 {
		for _, id := range replicas {
			if err := c.byID(id).admin.ConfigSet(ctx, "masterauth", "redistest-cut-off").Err(); err != nil {
				c.fatalf("cut %s off: %v", c.byID(id).Addr(), err)
			}
		}
		if err := n.admin.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
			c.fatalf("CLIENT KILL TYPE replica on %s: %v", addr, err)
		}
		c.waitUntil(addr+" to count no replica", func() error {
			info, err := n.admin.Info(ctx, "replication").Result()
			if err != nil {
				return err
			}
			if !strings.Contains(info, "connected_slaves:0\r\n") {
				return errors.New("a replica is still connected")
			}
			return nil
		})
		time.Sleep(lag)
	}
	start := time.Now()
	if c.frozen {
		n.Freeze()
	} else {
		n.Kill()
	}
	if lag > 0 { // the master is gone: nothing to reconnect to
		for _, id := range replicas {
			if err := c.byID(id).admin.ConfigSet(ctx, "masterauth", "").Err(); err != nil {
				c.fatalf("restore the masterauth of %s: %v", c.byID(id).Addr(), err)
			}
		}
	}
	c.waitUntil(fmt.Sprintf("a replica of %s to take over", addr), func() error {
		if err := c.healthy(); err != nil {
			return err
		}
		lines, err := c.view(ctx, c.running()[0])
		if err != nil {
			return err
		}
		owner := slotOwners(lines)[me.Slots[0].Start]
		if !slices.Contains(replicas, owner) {
			return fmt.Errorf("slot %d is served by %s, none of the replicas", me.Slots[0].Start, owner)
		}
		promoted = c.byID(owner).Server
		return nil
	})
	return promoted, time.Since(start)
}

// Restart starts the node at addr again on its port, with its data
// directory and its nodes.conf (killing it first if it still runs), and
// waits until the cluster is healthy with it: a master that was replaced
// while it was down comes back as a replica of the node that replaced it,
// and has finished syncing from it.
func (c *Cluster) Restart(addr string) {
	c.t.Helper()
	c.taint("Restart")
	c.byAddr(addr).Restart()
	c.waitUntil(addr+" to rejoin the cluster", c.healthy)
}

// Failover moves a master's role to one of its replicas without losing
// acknowledged writes, with CLUSTER FAILOVER on the replica: the master
// stops taking writes, the replica catches up with it, and the replica is
// elected; the old master then replicates from it. addr is either the
// replica to promote or a master (its first running replica is promoted).
// Failover returns the new master once the old one replicates from it and
// the cluster is healthy.
//
// It usually takes well under a second. A replica that itself won an
// election within the last 4×NodeTimeout (at least 4 s) cannot stand again
// until then (Redis's failover auth retry time), so failing straight back
// to the node that was just demoted is quick, but a third move between the
// same two nodes waits for that.
func (c *Cluster) Failover(addr string) *Server {
	c.t.Helper()
	n := c.byAddr(addr)
	c.WaitHealthy()
	nodes := c.Nodes()
	me := nodes[slices.Index(c.nodes, n)]
	var replica, master *node
	switch {
	case me.Role == RoleReplica:
		replica, master = n, c.byID(me.MasterID)
	case len(me.Slots) > 0:
		master = n
		for i, o := range nodes {
			if !o.Down && o.MasterID == me.ID {
				replica = c.nodes[i]
				break
			}
		}
	}
	if replica == nil || master == nil {
		c.t.Fatalf("redistest: Failover: %s is neither a replica nor a master with a running replica", addr)
	}

	c.taint("Failover")
	ctx := context.Background()
	var sent time.Time
	c.waitUntil(fmt.Sprintf("%s to take over from %s", replica.Addr(), master.Addr()), func() error {
		lines, err := c.view(ctx, replica)
		if err != nil {
			return err
		}
		if me, _ := myself(lines); me.has("slave") {
			// The replica asks its master to pause over the cluster bus,
			// and that request can be lost, for instance just after a
			// previous failover; Redis then gives up only after 5 s
			// (CLUSTER_MF_TIMEOUT). Asking again restarts the manual
			// failover, and one that goes through takes milliseconds, so
			// ask every second.
			if time.Since(sent) > time.Second {
				sent = time.Now()
				if err := replica.admin.Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
					return fmt.Errorf("CLUSTER FAILOVER on %s: %w", replica.Addr(), err)
				}
			}
			return errors.New("still a replica")
		}
		if lines, err = c.view(ctx, master); err != nil {
			return err
		}
		if me, _ := myself(lines); me.master != replica.id {
			return fmt.Errorf("the old master replicates from %q", me.master)
		}
		return c.healthy()
	})
	return replica.Server
}

// WaitHealthy waits until the cluster is as StartCluster leaves it, among
// the nodes that run: each says cluster_state:ok and serves all 16384
// slots; each knows every node, sees every running node as reachable and
// connected, and agrees with the others which running master serves each
// slot; and every running replica is connected to a running master and
// done syncing. KillMaster, Restart and Failover end with it; a test that
// kills or pauses nodes itself can call it.
func (c *Cluster) WaitHealthy() {
	c.t.Helper()
	c.waitUntil("the cluster to be healthy", c.healthy)
}

// healthy reports why the cluster is not healthy (see WaitHealthy), or nil.
func (c *Cluster) healthy() error {
	ctx := context.Background()
	var ref []string
	var refAddr string
	for _, n := range c.running() {
		pipe := n.admin.Pipeline()
		infoCmd := pipe.ClusterInfo(ctx)
		nodesCmd := pipe.ClusterNodes(ctx)
		replCmd := pipe.Info(ctx, "replication")
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("%s: %w", n.Addr(), err)
		}
		for _, want := range []string{"cluster_state:ok", fmt.Sprintf("cluster_slots_ok:%d", Slots)} {
			if !strings.Contains(infoCmd.Val(), want+"\r\n") {
				return fmt.Errorf("%s: CLUSTER INFO has no %s", n.Addr(), want)
			}
		}
		lines, err := parseClusterNodes(nodesCmd.Val())
		if err != nil {
			return fmt.Errorf("%s: %w", n.Addr(), err)
		}
		if len(lines) != len(c.nodes) {
			return fmt.Errorf("%s knows %d of %d nodes", n.Addr(), len(lines), len(c.nodes))
		}
		for _, l := range lines {
			o := c.byID(l.id)
			switch {
			case o == nil:
				return fmt.Errorf("%s knows a stranger %s %s", n.Addr(), l.id, l.addr)
			case o.PID() == 0:
				// down: whatever n thinks of it
			case l.failed():
				return fmt.Errorf("%s takes %s for failing (%v)", n.Addr(), o.Addr(), l.flags)
			case !l.has("myself") && l.link != "connected":
				return fmt.Errorf("%s is not connected to %s", n.Addr(), o.Addr())
			}
		}
		owners := slotOwners(lines)
		for slot, id := range owners {
			if o := c.byID(id); o == nil || o.PID() == 0 {
				return fmt.Errorf("%s: slot %d is served by %q, which is not running", n.Addr(), slot, id)
			}
		}
		if ref == nil {
			ref, refAddr = owners, n.Addr()
		} else if !slices.Equal(ref, owners) {
			i := 0
			for owners[i] == ref[i] {
				i++
			}
			return fmt.Errorf("slot %d: %s says %s serves it, %s says %s", i, refAddr, ref[i], n.Addr(), owners[i])
		}
		if me, ok := myself(lines); !ok {
			return fmt.Errorf("CLUSTER NODES on %s has no myself line", n.Addr())
		} else if me.has("slave") {
			if m := c.byID(me.master); m == nil || m.PID() == 0 {
				return fmt.Errorf("replica %s follows %q, which is not running", n.Addr(), me.master)
			}
			for _, want := range []string{"master_link_status:up", "master_sync_in_progress:0"} {
				if !strings.Contains(replCmd.Val(), want+"\r\n") {
					return fmt.Errorf("replica %s: INFO replication has no %s", n.Addr(), want)
				}
			}
		}
	}
	if ref == nil {
		return errors.New("no node is running")
	}
	return nil
}
