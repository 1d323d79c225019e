package schedstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

// Instance is one running process of the service, as its heartbeats
// describe it.
type Instance struct {
	ID       string
	Host     string
	PID      int
	Version  string
	Started  time.Time
	LastSeen time.Time // set by Heartbeat
	Leader   bool
	// Declares tells Heartbeat that the instance has schedules: when its
	// declarations are missing it must declare them again. An instance
	// that declares nothing publishes the digest of no declarations.
	Declares bool
	// Starting tells that the instance is still declaring its schedules
	// (Scheduler.Start: minutes for a million): live for the registry, so
	// that its claims count, but not yet able to lead a partition, so the
	// others leave it out of the partitions' assignment (LiveInstance).
	Starting bool
}

// Declarer returns the Declarer that Register should use for inst.
func (inst Instance) Declarer() Declarer {
	return Declarer{InstanceID: inst.ID, Version: inst.Version, Started: inst.Started}
}

// heartbeatScript marks an instance live until now + TTL, refreshes its
// description and the expiry of its declarations, and ages out instances
// whose heartbeats stopped (their hashes expire on their own). It reports
// what it found missing, so that the instance declares itself again: its
// instance hash (Redis lost its data, or the instance was not heard from
// for 2 × TTL) and its declarations (they expired meanwhile). Until it
// does, an instance without declarations publishes no digest, so a sweep
// does not take its silence for a change of code.
//
// In a partitioned namespace it first writes the namespace's meta key if
// it is missing (keyspace.MetaLua): Redis lost its data, and the instance
// index it writes next would make a later process take the namespace for
// layout 1.
//
// It also reports processes of the other layout in the namespace, which
// fire the schedules both layouts declare a second time: in layout 1, a
// meta key (the meta key and the instance index carry the control tag, so
// they are in one slot), which a process wrote that started while the
// namespace held no key of its layout (Redis lost its data) and was not
// stopped by the check of keyspace's resolve, or chronos migrate; in a
// partitioned namespace, connections subscribed to the layout-1 channels
// (keyspace.ControlChannels), which only processes of layout 1, of any
// version, subscribe to. PUBSUB NUMSUB counts the node that runs the
// script, which holds the control tag's slot and those channels'
// subscriptions; a user whose ACL refuses it loses only this report.
//
//	KEYS[1] instances index, KEYS[2] instance hash, KEYS[3] its declarations,
//	KEYS[4] the namespace's meta key
//	ARGV[1] id, ARGV[2] now (ms), ARGV[3] TTL (ms), ARGV[4] 1 if the instance
//	declares schedules, ARGV[5] the digest of no declarations,
//	ARGV[6] partitions (0: layout 1), ARGV[7] the number n of layout-1
//	channels that follow (0 in layout 1), ARGV[8…7+n] those channels,
//	ARGV[8+n…] field/value pairs
//
// Returns {stale instances removed, 1 if the hash existed, 1 if the
// declarations existed, 1 if it wrote the meta key, processes of the other
// layout: 1 if a meta key exists in layout 1, the layout-1 subscribers in a
// partitioned namespace}.
var heartbeatScript = redis.NewScript(keyspace.MetaLua + `
local now, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
local meta, other = 0, 0
if ARGV[6] == '0' then
  other = redis.call('EXISTS', KEYS[4])
else
  meta = chronos_ensure_meta(KEYS[4], ARGV[6], ARGV[2])
end
local nch = tonumber(ARGV[7])
if nch > 0 then
  local subs = redis.pcall('PUBSUB', 'NUMSUB', unpack(ARGV, 8, 7 + nch))
  if type(subs) == 'table' and not subs.err then
    for i = 2, #subs, 2 do other = other + tonumber(subs[i]) end
  end
end
local had = redis.call('EXISTS', KEYS[2])
local declared = redis.call('EXISTS', KEYS[3])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
local aged = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('HSET', KEYS[2], 'last_seen', ARGV[2], unpack(ARGV, 8 + nch))
if ARGV[4] == '0' then
  redis.call('HSET', KEYS[2], '` + fieldDeclDigest + `', ARGV[5])
  declared = 1
elseif declared == 0 then
  redis.call('HDEL', KEYS[2], '` + fieldDeclDigest + `')
end
redis.call('PEXPIRE', KEYS[2], 2 * ttl)
redis.call('PEXPIRE', KEYS[3], 2 * ttl)
return {aged, had, declared, meta, other}
`)

// HeartbeatResult says what a heartbeat found.
type HeartbeatResult struct {
	// Aged is the number of stale instances removed from the index.
	Aged int
	// Lost reports that the instance's record was gone: Redis lost its
	// data (restarted without persistence, flushed, failed over to an
	// empty replica), or the instance was not heard from for twice
	// InstanceTTL. Undeclared is then set too.
	Lost bool
	// Undeclared reports that the instance's declarations were gone: it
	// must Register them again, or every schedule only it declares is
	// retired.
	Undeclared bool
	// MetaRestored reports that the namespace's meta key was gone and the
	// heartbeat wrote it again (partitioned namespaces only).
	MetaRestored bool
	// OtherLayout reports processes of the other layout running in the
	// namespace: in layout 1, 1 when the namespace has a meta key (it was
	// partitioned, or is being migrated, under this instance); in a
	// partitioned namespace, the number of connections subscribed to its
	// layout-1 channels (keyspace.ControlChannels). 0 when none.
	OtherLayout int
}

// Heartbeat records that inst is alive for another InstanceTTL, renews
// the expiry of its declarations and removes instances whose heartbeat
// expired. An instance that was never registered (or has no schedules)
// is Undeclared.
func (s *Store) Heartbeat(ctx context.Context, inst Instance) (HeartbeatResult, error) {
	if inst.ID == "" {
		return HeartbeatResult{}, fmt.Errorf("schedstore: heartbeat: empty instance ID")
	}
	leader := "0"
	if inst.Leader {
		leader = "1"
	}
	keys := []string{s.keys.instances(), s.keys.instance(inst.ID), s.keys.decl(inst.ID), keyspace.Meta(s.cfg.Namespace)}
	args := []any{inst.ID, s.cfg.Now().UnixMilli(), s.cfg.InstanceTTL.Milliseconds(), boolArg(inst.Declares), emptyDeclDigest}
	if s.cfg.Layout.IsSingle() {
		args = append(args, 0, 0)
	} else {
		chans := keyspace.ControlChannels(s.cfg.Namespace)
		args = append(args, s.Partitions(), len(chans))
		for _, c := range chans {
			args = append(args, c)
		}
	}
	args = append(args, "id", inst.ID, "host", inst.Host, "pid", inst.PID, "version", inst.Version,
		"started", ms(inst.Started), "leader", leader, "starting", boolArg(inst.Starting))
	res, err := heartbeatScript.Run(ctx, s.client, keys, args...).Int64Slice()
	if err != nil {
		return HeartbeatResult{}, fmt.Errorf("schedstore: heartbeat %s: %w", inst.ID, err)
	}
	if len(res) != 5 {
		return HeartbeatResult{}, fmt.Errorf("schedstore: heartbeat %s: unexpected reply %v", inst.ID, res)
	}
	return HeartbeatResult{Aged: int(res[0]), Lost: res[1] == 0, Undeclared: res[2] == 0, MetaRestored: res[3] == 1,
		OtherLayout: int(res[4])}, nil
}

// Deregister removes instance id and its declarations at once, for a clean
// shutdown, and notes a change in partition 0, whose leader sweeps the
// registry, so that it sweeps at once: schedules only the instance
// declared are retired. The removal is one MULTI on the control keys; the
// note follows it (partition 0 is in another slot).
func (s *Store) Deregister(ctx context.Context, id string) error {
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, s.keys.instances(), id)
		// UNLINK: a million declarations are freed off Redis's main thread.
		p.Unlink(ctx, s.keys.instance(id), s.keys.decl(id), s.keys.declNext(id))
		return nil
	})
	if err == nil {
		err = s.NoteChangeIn(ctx, 0)
	}
	if err != nil {
		return fmt.Errorf("schedstore: deregister %s: %w", id, err)
	}
	return nil
}

// LiveInstance is a live instance's ID and heartbeat expiry, as the
// instance index holds it: what every instance reads at each heartbeat to
// share the partitions (leader.Assign).
type LiveInstance struct {
	ID string
	// Expires is the score of the instance's last heartbeat: its time
	// plus InstanceTTL, by its own clock. It moves on with every heartbeat.
	Expires int64
	// Starting is the instance's Starting at its last heartbeat.
	Starting bool
}

// Live returns the live instances, by ID, with their heartbeat scores and
// whether they are starting: a ZRANGEBYSCORE, then an HGET per instance in
// one pipeline.
func (s *Store) Live(ctx context.Context) ([]LiveInstance, error) {
	zs, err := s.client.ZRangeByScoreWithScores(ctx, s.keys.instances(), &redis.ZRangeBy{
		Min: "(" + strconv.FormatInt(s.cfg.Now().UnixMilli(), 10), Max: "+inf",
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("schedstore: live instances: %w", err)
	}
	out := make([]LiveInstance, len(zs))
	starting := make([]*redis.StringCmd, len(zs))
	if len(zs) > 0 {
		_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, z := range zs {
				id, _ := z.Member.(string)
				starting[i] = p.HGet(ctx, s.keys.instance(id), "starting")
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("schedstore: live instances: %w", err)
		}
	}
	for i, z := range zs {
		id, _ := z.Member.(string)
		out[i] = LiveInstance{ID: id, Expires: int64(z.Score), Starting: starting[i].Val() == "1"}
	}
	slices.SortFunc(out, func(a, b LiveInstance) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Instances returns the live instances, ordered by ID.
func (s *Store) Instances(ctx context.Context) ([]Instance, error) {
	ids, err := s.liveIDs(ctx, s.cfg.Now())
	if err != nil {
		return nil, err
	}
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, s.keys.instance(id))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schedstore: instances: %w", err)
	}
	out := make([]Instance, 0, len(ids))
	for i, c := range cmds {
		m := c.Val()
		if len(m) == 0 {
			continue
		}
		pid, _ := strconv.Atoi(m["pid"])
		out = append(out, Instance{
			ID: ids[i], Host: m["host"], PID: pid, Version: m["version"],
			Started: msTime(m["started"]), LastSeen: msTime(m["last_seen"]), Leader: m["leader"] == "1",
			Starting: m["starting"] == "1",
		})
	}
	return out, nil
}

// liveIDs returns the IDs of instances whose heartbeat expires after now,
// in lexical order.
func (s *Store) liveIDs(ctx context.Context, now time.Time) ([]string, error) {
	ids, err := s.client.ZRangeByScore(ctx, s.keys.instances(), &redis.ZRangeBy{
		Min: "(" + strconv.FormatInt(now.UnixMilli(), 10), Max: "+inf",
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("schedstore: live instances: %w", err)
	}
	return sortedStrings(ids), nil
}

func (s *Store) liveSet(ctx context.Context, now time.Time) (map[string]bool, error) {
	ids, err := s.liveIDs(ctx, now)
	if err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m, nil
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
