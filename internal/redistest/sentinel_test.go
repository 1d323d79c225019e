package redistest

import (
	"context"
	"testing"
)

func TestSentinelFailoverKeepsWritesAndMovesTheClient(t *testing.T) {
	parallel(t)
	d := StartSentinel(t)
	ctx := context.Background()
	c := d.Client()
	if err := c.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	old := d.MasterAddr()
	if got := d.Failover(); got == old {
		t.Fatalf("master still %s after Failover", got)
	}
	if d.Master().Addr() == old || d.Replica().Addr() != old {
		t.Fatalf("Master/Replica do not follow the failover")
	}
	if got, err := c.Get(ctx, "before").Result(); err != nil || got != "1" {
		t.Fatalf("after failover: %q, %v; want 1", got, err)
	}
	if err := c.Set(ctx, "after", "2", 0).Err(); err != nil {
		t.Fatalf("write after failover: %v", err)
	}
	// The old master now replicates from the new one.
	waitUntil(t, "the old master to replicate", func() error {
		return d.Replica().Client().Get(ctx, "after").Err()
	})
}

func TestSentinelKillMasterPromotesTheReplica(t *testing.T) {
	parallel(t)
	d := StartSentinel(t, SentinelOptions{Sentinels: 3})
	ctx := context.Background()
	c := d.Client()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	old := d.Master()
	d.KillMaster()
	if old.PID() != 0 {
		t.Fatal("old master still running")
	}
	if err := c.Set(ctx, "k2", "v2", 0).Err(); err != nil {
		t.Fatalf("write after promotion: %v", err)
	}
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("after promotion: %q, %v; want v (replicated before the kill)", got, err)
	}
}

func TestSentinelKillMasterOntoEmptyReplicaPromotesAReplicaWithNoData(t *testing.T) {
	parallel(t)
	d := StartSentinel(t)
	ctx := context.Background()
	c := d.Client()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the replica to have the key", func() error {
		return d.Replica().Client().Get(ctx, "k").Err()
	})
	old := d.Master()
	promoted := d.Replica().Addr()
	if got := d.KillMasterOntoEmptyReplica(); got != promoted {
		t.Fatalf("new master %s, want the replica %s", got, promoted)
	}
	if old.PID() != 0 {
		t.Fatal("old master still running")
	}
	if n, err := c.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("the client sees %d keys (%v) on the new master; want none", n, err)
	}
	if err := c.Set(ctx, "k2", "v2", 0).Err(); err != nil {
		t.Fatalf("write after promotion: %v", err)
	}
}
