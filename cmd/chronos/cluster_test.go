package main

import (
	"strings"
	"testing"
)

func TestLeaderAndInstancesNameTheScheduler(t *testing.T) {
	c := startCluster(t)
	c.waitLeader()
	if out := c.ok("leader"); !strings.HasPrefix(out, "sched-a (epoch ") {
		t.Fatalf("leader printed %q", out)
	}
	var l struct {
		InstanceID string `json:"instance_id"`
		Epoch      int64  `json:"epoch"`
	}
	c.okJSON(&l, "leader")
	if l.InstanceID != "sched-a" || l.Epoch < 1 {
		t.Fatalf("leader = %+v", l)
	}

	row := lineOf(t, c.ok("instances"), "sched-a")
	if f := strings.Fields(row); f[len(f)-1] != "*" || !strings.Contains(row, "v1.2.3") {
		t.Fatalf("instances row %q, want version v1.2.3 and the leader mark", row)
	}
	var insts []struct {
		ID      string `json:"id"`
		PID     int    `json:"pid"`
		Version string `json:"version"`
		Leader  bool   `json:"leader"`
	}
	c.okJSON(&insts, "instances")
	if len(insts) != 1 || insts[0].ID != "sched-a" || !insts[0].Leader || insts[0].PID == 0 {
		t.Fatalf("instances = %+v", insts)
	}
}
