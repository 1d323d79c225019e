package redistest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// NodeStats are one server's counters at one moment, read with a single
// INFO all. Take them before and after the work being measured and Sub the
// two: the difference is what the work cost that server.
//
// The counters include the server's background traffic: the INFO that read
// the earlier NodeStats, REPLCONF from its replicas, CLUSTER SLOTS from
// cluster clients, and so on. Look at Calls for the commands under test
// rather than at Commands alone. CPU counts the cluster bus and replication
// too.
type NodeStats struct {
	Addr     string
	Keys     int64            // keys in db 0, as DBSIZE counts them
	Commands int64            // total_commands_processed
	Calls    map[string]int64 // calls per command from INFO commandstats: "set", "evalsha", "cluster|slots"
	CPU      time.Duration    // used_cpu_sys + used_cpu_user of the main process
}

// Sub returns s minus before, counter by counter. Keys is a difference too,
// so it is negative when keys were deleted.
func (s NodeStats) Sub(before NodeStats) NodeStats {
	d := NodeStats{
		Addr:     s.Addr,
		Keys:     s.Keys - before.Keys,
		Commands: s.Commands - before.Commands,
		Calls:    make(map[string]int64, len(s.Calls)),
		CPU:      s.CPU - before.CPU,
	}
	for cmd, n := range s.Calls {
		if n -= before.Calls[cmd]; n != 0 {
			d.Calls[cmd] = n
		}
	}
	return d
}

// Stats reads the server's NodeStats.
func (s *Server) Stats(ctx context.Context) (NodeStats, error) {
	c := redis.NewClient(s.Options())
	defer c.Close()
	return nodeStats(ctx, c, s.Addr())
}

func nodeStats(ctx context.Context, c *redis.Client, addr string) (NodeStats, error) {
	info, err := c.Info(ctx, "all").Result()
	if err != nil {
		return NodeStats{}, fmt.Errorf("redistest: INFO on %s: %w", addr, err)
	}
	st, err := parseStats(info)
	if err != nil {
		return NodeStats{}, fmt.Errorf("redistest: INFO on %s: %w", addr, err)
	}
	st.Addr = addr
	return st, nil
}

// parseStats reads NodeStats (but Addr) from the text of INFO all.
func parseStats(info string) (NodeStats, error) {
	st := NodeStats{Calls: map[string]int64{}}
	var cpu float64
	var seen int
	for line := range strings.SplitSeq(info, "\r\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var err error
		switch {
		case key == "total_commands_processed":
			st.Commands, err = strconv.ParseInt(val, 10, 64)
			seen++
		case key == "used_cpu_sys" || key == "used_cpu_user":
			var f float64
			f, err = strconv.ParseFloat(val, 64)
			cpu += f
			seen++
		case key == "db0":
			st.Keys, err = infoField(val, "keys")
		case strings.HasPrefix(key, "cmdstat_"):
			st.Calls[strings.TrimPrefix(key, "cmdstat_")], err = infoField(val, "calls")
		}
		if err != nil {
			return NodeStats{}, fmt.Errorf("%s: %w", key, err)
		}
	}
	if seen != 3 {
		return NodeStats{}, fmt.Errorf("no total_commands_processed, used_cpu_sys or used_cpu_user in INFO all")
	}
	st.CPU = time.Duration(cpu * float64(time.Second))
	return st, nil
}

// infoField reads the integer name from an INFO value such as
// "calls=3,usec=20,usec_per_call=6.67".
func infoField(val, name string) (int64, error) {
	for field := range strings.SplitSeq(val, ",") {
		if v, ok := strings.CutPrefix(field, name+"="); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in %q", name, val)
}

// ClusterStats are the NodeStats of a cluster's masters, in the order of the
// slots they serve (see Cluster.Stats).
type ClusterStats []NodeStats

// Sub returns each master's counters minus the ones before had for the
// same address. A master that before does not list (a replica promoted in
// between) is taken whole, as if it had started from zero.
func (s ClusterStats) Sub(before ClusterStats) ClusterStats {
	old := make(map[string]NodeStats, len(before))
	for _, b := range before {
		old[b.Addr] = b
	}
	d := make(ClusterStats, len(s))
	for i, a := range s {
		b, ok := old[a.Addr]
		if !ok {
			b = NodeStats{Calls: map[string]int64{}}
		}
		d[i] = a.Sub(b)
	}
	return d
}

// Total adds up the masters' counters (Addr is empty).
func (s ClusterStats) Total() NodeStats {
	t := NodeStats{Calls: map[string]int64{}}
	for _, n := range s {
		t.Keys += n.Keys
		t.Commands += n.Commands
		t.CPU += n.CPU
		for cmd, c := range n.Calls {
			t.Calls[cmd] += c
		}
	}
	return t
}

// Stats reads the NodeStats of every running master that serves slots, in
// slot order (as Masters). Take them before and after a workload and Sub
// the two to see how the work spread over the masters.
func (c *Cluster) Stats(ctx context.Context) (ClusterStats, error) {
	nodes, err := c.describe(ctx)
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	type master struct {
		n     *node
		first int
	}
	var ms []master
	for i, n := range nodes {
		if !n.Down && n.Role == RoleMaster && len(n.Slots) > 0 {
			ms = append(ms, master{c.nodes[i], n.Slots[0].Start})
		}
	}
	slices.SortFunc(ms, func(a, b master) int { return a.first - b.first })
	st := make(ClusterStats, len(ms))
	for i, m := range ms {
		if st[i], err = nodeStats(ctx, m.n.admin, m.n.Addr()); err != nil {
			return nil, err
		}
	}
	return st, nil
}
