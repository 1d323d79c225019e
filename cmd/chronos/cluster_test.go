package main

import (
	"strings"
	"testing"
	"time"
)

func TestLeaderAndInstancesNameTheScheduler(t *testing.T) {
	c := startCluster(t)
	c.waitLeader()
	if out := c.ok("leader"); !strings.HasPrefix(out, "sched-a (epoch ") {
		t.Fatalf("leader printed %q", out)
	}
	var l struct {
		InstanceID string    `json:"instance_id"`
		Epoch      int64     `json:"epoch"`
		Since      time.Time `json:"since"`
		Partitions []struct {
			Partition  int       `json:"partition"`
			InstanceID string    `json:"instance_id"`
			Epoch      int64     `json:"epoch"`
			Since      time.Time `json:"since"`
		} `json:"partitions"`
	}
	c.eventuallyJSON(&l, func() bool { return len(l.Partitions) > 0 && l.Partitions[len(l.Partitions)-1].InstanceID != "" }, "leader")
	if l.InstanceID != "sched-a" || l.Epoch < 1 || time.Since(l.Since) > time.Minute {
		t.Fatalf("leader = %+v", l)
	}
	// One instance leads every partition (one in a namespace of an
	// earlier version, 12 in a new one), each since its term began.
	for p, pl := range l.Partitions {
		if pl.Partition != p || pl.InstanceID != "sched-a" || pl.Epoch < 1 || time.Since(pl.Since) > time.Minute {
			t.Fatalf("partition %d: %+v", p, pl)
		}
	}
	if out := c.ok("leader"); len(l.Partitions) > 1 {
		if !strings.Contains(out, "leads partition 0") || strings.Count(out, " sched-a ") != len(l.Partitions) {
			t.Fatalf("leader printed %q, want every partition's leader", out)
		}
	}

	row := lineOf(t, c.ok("instances"), "sched-a")
	if f := strings.Fields(row); f[len(f)-1] != "*" || !strings.Contains(row, "v1.2.3") || !strings.Contains(row, " 0") {
		t.Fatalf("instances row %q, want version v1.2.3, the partitions led and the leader mark", row)
	}
	var insts []struct {
		ID         string `json:"id"`
		PID        int    `json:"pid"`
		Version    string `json:"version"`
		Leader     bool   `json:"leader"`
		Partitions []int  `json:"partitions"`
	}
	c.okJSON(&insts, "instances")
	if len(insts) != 1 || insts[0].ID != "sched-a" || !insts[0].Leader || insts[0].PID == 0 || len(insts[0].Partitions) != len(l.Partitions) {
		t.Fatalf("instances = %+v", insts)
	}
}
