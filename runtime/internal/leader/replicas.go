package leader

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// A leader that asks for Replicas wants its writes on a replica before a
// failover can lose them. WAIT after a write says whether they got there,
// but only once the write is made: after a failover that did not pause the
// old master (a bare SENTINEL FAILOVER, a partition), the old master keeps
// acknowledging writes for a second or so, and a trigger fired there is
// discarded and fired again by the next leader. So the scripts check
// first, in Redis, that the master still has its replicas online
// (ReplicaLua reads INFO replication), and refuse to write otherwise.
//
// How many to ask for is what the ReplicaGuard decides: Replicas, but no
// more than the master it talks to has been seen to have connected (online
// or still syncing: one that is syncing holds writes up until it is
// online, as a failover could not promote it without losing them). A master that
// never had a replica (standalone, or a replica just promoted, whose old
// master is not attached yet) cannot lose a write to a failover, so a
// leader there is not held up waiting for replicas that do not exist; a
// master that had them and lost them (the old master of a failover) is
// refused. Masters are told apart by their replication ID, which a
// promotion changes.

// replicaMaxLag is the most seconds since a replica's last acknowledgement
// for it to count as online: replicas acknowledge every second.
const replicaMaxLag = 2

// ReplicaLua defines
//
//	chronos_require_replicas(n)
//
// which returns an error reply starting CHRONOSNOREPLICAS unless at least
// n replicas of the master running the script are online (state=online,
// acknowledged within replicaMaxLag seconds). Call it before any write.
var ReplicaLua = `
local function chronos_require_replicas(n)
  if n <= 0 then return end
  local online = 0
  for lag in string.gmatch(redis.call('INFO', 'replication'), 'slave%d+:[^\r\n]*state=online[^\r\n]*lag=(%d+)') do
    if tonumber(lag) <= ` + strconv.Itoa(replicaMaxLag) + ` then online = online + 1 end
  end
  if online < n then
    error({err = '` + noReplicasPrefix + ` ' .. online .. ' of ' .. n .. ' replicas online'})
  end
end
`

// noReplicasPrefix starts the error reply of chronos_require_replicas.
const noReplicasPrefix = "CHRONOSNOREPLICAS"

// IsNoReplicas reports whether err is the refusal of
// chronos_require_replicas.
func IsNoReplicas(err error) bool {
	return err != nil && strings.Contains(err.Error(), noReplicasPrefix)
}

// ReplicaGuard says how many replicas a leader's writes must reach. It is
// safe for concurrent use; the zero value and nil ask for none.
type ReplicaGuard struct {
	want int

	mu      sync.Mutex
	current string         // replication ID of the master last observed
	seen    map[string]int // replication ID → most replicas observed connected
}

// NewReplicaGuard returns a guard asking for want replicas.
func NewReplicaGuard(want int) *ReplicaGuard {
	return &ReplicaGuard{want: want, seen: map[string]int{}}
}

// Want is the number of replicas asked for.
func (g *ReplicaGuard) Want() int {
	if g == nil {
		return 0
	}
	return g.want
}

// Required returns how many replicas the next write must reach: Want, but
// no more than the master last observed has been seen to have connected.
func (g *ReplicaGuard) Required() int {
	if g == nil || g.want <= 0 {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return min(g.want, g.seen[g.current])
}

// Observed reports whether the guard has observed a master yet: until it
// has, Required is 0.
func (g *ReplicaGuard) Observed() bool {
	if g == nil || g.want <= 0 {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.current != ""
}

// Observe takes the reply of INFO replication of the master the writes go
// to.
func (g *ReplicaGuard) Observe(info string) {
	if g == nil || g.want <= 0 {
		return
	}
	role, replid, connected := parseReplication(info)
	if role != "master" || replid == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.current = replid
	g.seen[replid] = max(g.seen[replid], connected)
}

// parseReplication reads the role, replication ID and number of connected
// replicas from INFO replication.
func parseReplication(info string) (role, replid string, connected int) {
	for line := range strings.SplitSeq(info, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "role:"):
			role = strings.TrimPrefix(line, "role:")
		case strings.HasPrefix(line, "master_replid:"):
			replid = strings.TrimPrefix(line, "master_replid:")
		case strings.HasPrefix(line, "slave") && strings.Contains(line, "ip="):
			connected++
		}
	}
	return role, replid, connected
}

// WAIT counts the replicas that acknowledged the writes of its own
// connection, on the server it runs on. On a cluster client a command
// without keys goes to any node, so a writer that waits sends its scripts
// and WAIT in one pipeline on the client of the master that serves their
// keys (Primary), and tells the cluster client to reload its slot map when
// that client answers with an error that says the map moved on (Reload),
// since a node's own client does not follow MOVED.

// Primary returns the client whose connection carries key's writes and the
// WAIT after them: c itself, or for a cluster client the client of the
// master that serves key's slot, as the cluster client last knew it.
func Primary(ctx context.Context, c redis.UniversalClient, key string) (redis.UniversalClient, error) {
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return c, nil
	}
	m, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("leader: the master of %s: %w", key, err)
	}
	return m, nil
}

// Reload makes a cluster client c reload its slot map after err, an error
// of a call made on a node's own client (Primary): a redirection or a
// cluster that is down or read-only there, or a failed connection. Errors
// of the scripts themselves (a fence, a refusal, NOSCRIPT) leave it be.
func Reload(c redis.UniversalClient, err error) {
	cc, ok := c.(*redis.ClusterClient)
	if !ok || err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		if !(strings.HasPrefix(msg, "MOVED") || strings.HasPrefix(msg, "ASK") || strings.HasPrefix(msg, "CLUSTERDOWN") ||
			strings.HasPrefix(msg, "READONLY") || strings.HasPrefix(msg, "TRYAGAIN")) {
			return
		}
	}
	cc.ReloadState(context.Background())
}
