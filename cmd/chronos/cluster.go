package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

func clusterCommands() []command {
	return []command{
		{name: "leader", synopsis: "", run: runLeader,
			summary: "Name the scheduler instances that lead the namespace's partitions, with their fencing epochs and when their terms began."},
		{name: "instances", synopsis: "", run: runInstances,
			summary: "List the live scheduler instances, from their heartbeats, with the partitions each leads."},
	}
}

// runLeader prints who leads: in a namespace of a single partition (every
// namespace of versions before partitions) the one leader, as earlier
// versions printed it; in a partitioned one the leader of partition 0,
// which also sweeps the registry, then a table of every partition.
func runLeader(ctx context.Context, c *cli, args []string) error {
	if _, err := c.parse(c.flagSet("leader"), args); err != nil {
		return err
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	ls, err := insp.SchedulerLeaders(ctx)
	if err != nil {
		return err
	}
	anyone := false
	for _, l := range ls {
		anyone = anyone || l.InstanceID != ""
	}
	if !anyone {
		if err := c.requireNamespace(ctx); err != nil {
			return err
		}
	}
	if c.json {
		if !anyone {
			return c.printJSON(nil)
		}
		type partitionView struct {
			Partition      int       `json:"partition"`
			InstanceID     string    `json:"instance_id"`
			Epoch          int64     `json:"epoch"`
			Since          time.Time `json:"since,omitzero"`
			LeaseRemaining float64   `json:"lease_remaining_s"`
		}
		v := struct {
			InstanceID string          `json:"instance_id"`
			Epoch      int64           `json:"epoch"`
			Since      time.Time       `json:"since,omitzero"`
			Partitions []partitionView `json:"partitions"`
		}{InstanceID: ls[0].InstanceID, Epoch: ls[0].Epoch, Since: utc(ls[0].Since), Partitions: []partitionView{}}
		for _, l := range ls {
			v.Partitions = append(v.Partitions, partitionView{l.Partition, l.InstanceID, l.Epoch, utc(l.Since), l.LeaseRemaining.Seconds()})
		}
		return c.printJSON(v)
	}
	if !anyone {
		// Not a failure of the command: the answer is "nobody".
		fmt.Fprintf(c.stdout, "no leader in namespace %q\n", c.namespace())
		return nil
	}
	first := "nobody leads partition 0"
	if l := ls[0]; l.InstanceID != "" {
		first = fmt.Sprintf("%s (epoch %d%s)", l.InstanceID, l.Epoch, sinceText(l.Since))
	}
	if len(ls) == 1 {
		fmt.Fprintln(c.stdout, first)
		return nil
	}
	fmt.Fprintf(c.stdout, "%s leads partition 0, and sweeps the registry; %d partitions:\n", first, len(ls))
	t := newTable(c.stdout, "PARTITION", "LEADER", "EPOCH", "SINCE")
	for _, l := range ls {
		who, epoch := l.InstanceID, strconv.FormatInt(l.Epoch, 10)
		if who == "" {
			who, epoch = "-", "" // nobody: its schedules wait for a leader
		}
		t.row(strconv.Itoa(l.Partition), who, epoch, fmtTime(l.Since))
	}
	return t.flush()
}

// sinceText is ", since <time>" for a term whose start is recorded.
func sinceText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return ", since " + fmtTime(t)
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
			ID         string    `json:"id"`
			Host       string    `json:"host"`
			PID        int       `json:"pid"`
			Version    string    `json:"version,omitempty"`
			Started    time.Time `json:"started,omitzero"`
			LastSeen   time.Time `json:"last_seen,omitzero"`
			Leader     bool      `json:"leader"`
			Partitions []int     `json:"partitions"`
		}
		out := []instanceView{}
		for _, in := range list {
			ps := in.Partitions
			if ps == nil {
				ps = []int{}
			}
			out = append(out, instanceView{in.ID, in.Host, in.PID, in.Version, utc(in.Started), utc(in.LastSeen), in.Leader, ps})
		}
		return c.printJSON(out)
	}
	// LEADER marks the leader of partition 0 (the only leader of a
	// namespace of a single partition); LEADS lists the partitions each
	// instance leads.
	t := newTable(c.stdout, "ID", "HOST", "PID", "VERSION", "STARTED", "LAST SEEN", "LEADS", "LEADER")
	for _, in := range list {
		leader := ""
		if in.Leader {
			leader = "*"
		}
		t.row(in.ID, in.Host, strconv.Itoa(in.PID), in.Version, fmtTime(in.Started), fmtTime(in.LastSeen), partitionList(in.Partitions), leader)
	}
	return t.flush()
}

// partitionList is "0,3,7", or "-" for none.
func partitionList(ps []int) string {
	if len(ps) == 0 {
		return "-"
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strconv.Itoa(p)
	}
	return strings.Join(out, ",")
}
