package main

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

func clusterCommands() []command {
	return []command{
		{name: "leader", synopsis: "", run: runLeader,
			summary: "Name the scheduler instance that leads the namespace, and its fencing epoch."},
		{name: "instances", synopsis: "", run: runInstances,
			summary: "List the live scheduler instances, from their heartbeats."},
	}
}

func runLeader(ctx context.Context, c *cli, args []string) error {
	if _, err := c.parse(c.flagSet("leader"), args); err != nil {
		return err
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	l, err := insp.SchedulerLeader(ctx)
	if err != nil {
		return err
	}
	if l == nil {
		if err := c.requireNamespace(ctx); err != nil {
			return err
		}
	}
	if c.json {
		if l == nil {
			return c.printJSON(nil)
		}
		return c.printJSON(struct {
			InstanceID string `json:"instance_id"`
			Epoch      int64  `json:"epoch"`
		}{l.InstanceID, l.Epoch})
	}
	if l == nil {
		// Not a failure of the command: the answer is "nobody".
		fmt.Fprintf(c.stdout, "no leader in namespace %q\n", c.namespace())
		return nil
	}
	fmt.Fprintf(c.stdout, "%s (epoch %d)\n", l.InstanceID, l.Epoch)
	return nil
}

func runInstances(ctx context.Context, c *cli, args []string) error {
	if _, err := c.parse(c.flagSet("instances"), args); err != nil {
		return err
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	list, err := insp.SchedulerInstances(ctx)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		if err := c.requireNamespace(ctx); err != nil {
			return err
		}
	}
	if c.json {
		type instanceView struct {
			ID       string    `json:"id"`
			Host     string    `json:"host"`
			PID      int       `json:"pid"`
			Version  string    `json:"version,omitempty"`
			Started  time.Time `json:"started,omitzero"`
			LastSeen time.Time `json:"last_seen,omitzero"`
			Leader   bool      `json:"leader"`
		}
		out := []instanceView{}
		for _, in := range list {
			out = append(out, instanceView{in.ID, in.Host, in.PID, in.Version, utc(in.Started), utc(in.LastSeen), in.Leader})
		}
		return c.printJSON(out)
	}
	t := newTable(c.stdout, "ID", "HOST", "PID", "VERSION", "STARTED", "LAST SEEN", "LEADER")
	for _, in := range list {
		leader := ""
		if in.Leader {
			leader = "*"
		}
		t.row(in.ID, in.Host, strconv.Itoa(in.PID), in.Version, fmtTime(in.Started), fmtTime(in.LastSeen), leader)
	}
	return t.flush()
}
