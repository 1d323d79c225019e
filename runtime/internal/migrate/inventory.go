package migrate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// legacy names the keys of a namespace's single-tag layout 1, every
// storage package's.
type legacy struct {
	ns    string
	q     rdb.Keys
	reg   schedstore.RegistryKeys
	lease leader.Keys
}

func legacyKeys(ns string) legacy {
	return legacy{ns: ns, q: rdb.NewKeys(ns), reg: schedstore.RegistryKeysAt(keyspace.Prefix(ns)), lease: leader.KeysFor(ns)}
}

// overlapKeys says which keys of one overlap marker exist.
type overlapKeys struct{ active, buffer, where bool }

// inventory is what a namespace holds under its layout-1 tag, by kind,
// from one SCAN.
type inventory struct {
	scheds     []string // schedules with a hash or a history
	schedIndex bool
	changed    bool
	version    bool
	requests   bool // the index or the data
	streams    []string
	delayed    []string
	markers    []string // queues whose stream is the migration's marker already
	dedup      []string // user dedup keys
	dead       bool     // the hash or its index
	runs       []string // kinds
	overlap    map[string]overlapKeys
	paused     bool
	epoch      bool
	lease      bool // the lease or its term record
	// legacyIsolated are queues of versions before in-process isolated
	// schedules: left where they are (package doc).
	legacyIsolated []string
	// unknown are keys under the tag that chronos does not write: left
	// where they are.
	unknown []string
	keys    int // every key under the tag, control keys included
	// movable are the keys of all of the above that hold something to
	// move (not the markers), for reports of what a run left.
	movable []string
}

// empty reports whether nothing is left to move.
func (in *inventory) empty() bool {
	return len(in.scheds) == 0 && !in.schedIndex && !in.changed && !in.version && !in.requests &&
		len(in.streams) == 0 && len(in.delayed) == 0 && len(in.dedup) == 0 && !in.dead && len(in.runs) == 0 &&
		len(in.overlap) == 0 && !in.paused && !in.epoch && !in.lease
}

// scanNode is the node that holds the keys of tag key's slot: on a
// cluster, its master; otherwise the one server.
func scanNode(ctx context.Context, c redis.UniversalClient, key string) (redis.Cmdable, error) {
	if cc, ok := c.(*redis.ClusterClient); ok {
		m, err := cc.MasterForKey(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("migrate: the master of %s: %w", key, err)
		}
		return m, nil
	}
	return c, nil
}

// scan lists the namespace's layout-1 keys and sorts them by kind. The
// layout-1 tag is also the control tag: the meta key, the instances and
// their declarations, the sweep record and the dead-letter lock stay.
func (m *migration) scan(ctx context.Context) (*inventory, error) {
	node, err := scanNode(ctx, m.c, m.old.q.Dead())
	if err != nil {
		return nil, err
	}
	var keys []string
	var cursor uint64
	for {
		ks, next, err := node.Scan(ctx, cursor, m.old.q.AllPattern(), 1000).Result()
		if err != nil {
			return nil, fmt.Errorf("migrate: list the keys of namespace %q: %w", m.ns, err)
		}
		keys = append(keys, ks...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys) // SCAN may return a key twice
	isolated, err := m.c.SMembers(ctx, schedstore.LegacyIsolatedSet(m.ns)).Result()
	if err != nil {
		return nil, fmt.Errorf("migrate: read the legacy isolated instances of %q: %w", m.ns, err)
	}
	legacyQueue := map[string]bool{}
	for _, id := range isolated {
		legacyQueue[schedstore.LegacyIsolatedQueue(id)] = true
	}

	in := &inventory{overlap: map[string]overlapKeys{}, keys: len(keys)}
	o, q, r := m.old, m.old.q, m.old.reg
	scheds := map[string]bool{}
	var queueKeys []string // streams and delayed sets, whose type tells a marker
	for _, k := range keys {
		switch {
		case k == keyspace.Meta(m.ns), k == q.DeadLock(), schedstore.IsControl(m.ns, k):
		case k == r.Schedules:
			in.schedIndex = true
		case k == r.Changed:
			in.changed = true
		case k == r.Version:
			in.version = true
		case k == r.Requests, k == r.RequestData:
			in.requests = true
		case k == o.lease.Epoch:
			in.epoch = true
		case k == o.lease.Lock, k == o.lease.Since:
			in.lease = true
		case k == q.Dead(), k == q.DeadIndex():
			in.dead = true
		case k == q.Paused():
			in.paused = true
		default:
			if id, ok := r.SchedOf(k); ok {
				scheds[id] = true
			} else if id, ok := r.HistoryOf(k); ok {
				scheds[id] = true
			} else if qn, ok := q.StreamQueue(k); ok {
				if !legacyQueue[qn] {
					queueKeys = append(queueKeys, k)
				} else {
					in.legacyIsolated = append(in.legacyIsolated, qn)
				}
			} else if qn, ok := q.DelayedQueue(k); ok {
				if !legacyQueue[qn] {
					queueKeys = append(queueKeys, k)
				}
			} else if dk, ok := q.DedupKeyOf(k); ok {
				in.dedup = append(in.dedup, dk)
			} else if kind, ok := q.RunsKind(k); ok {
				in.runs = append(in.runs, kind)
			} else if mk, ok := q.OverlapActiveMarker(k); ok {
				ok := in.overlap[mk]
				ok.active = true
				in.overlap[mk] = ok
			} else if mk, ok := q.OverlapBufferMarker(k); ok {
				ok := in.overlap[mk]
				ok.buffer = true
				in.overlap[mk] = ok
			} else if mk, ok := q.OverlapWhereMarker(k); ok {
				ok := in.overlap[mk]
				ok.where = true
				in.overlap[mk] = ok
			} else {
				in.unknown = append(in.unknown, k)
			}
		}
	}
	for id := range scheds {
		in.scheds = append(in.scheds, id)
	}
	skip := map[string]bool{}
	for _, k := range append(slices.Clone(in.unknown), queueKeys...) { // queue keys: by type, below
		skip[k] = true
	}
	for _, k := range keys {
		switch {
		case k == keyspace.Meta(m.ns), k == q.DeadLock(), schedstore.IsControl(m.ns, k), skip[k]:
		default:
			if qn, ok := q.StreamQueue(k); ok && legacyQueue[qn] {
				continue
			}
			if qn, ok := q.DelayedQueue(k); ok && legacyQueue[qn] {
				continue
			}
			in.movable = append(in.movable, k)
		}
	}
	slices.Sort(in.scheds)
	types := make([]*redis.StatusCmd, len(queueKeys))
	if _, err := m.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range queueKeys {
			types[i] = p.Type(ctx, k)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("migrate: read the types of %d queue keys of %q: %w", len(queueKeys), m.ns, err)
	}
	for i, k := range queueKeys {
		qn, isStream := q.StreamQueue(k)
		if !isStream {
			qn, _ = q.DelayedQueue(k)
		}
		switch t := types[i].Val(); {
		case t == "string" && isStream:
			in.markers = append(in.markers, qn)
		case t == "string":
		case t == "stream" && isStream:
			in.streams = append(in.streams, qn)
			in.movable = append(in.movable, k)
		case t == "zset" && !isStream:
			in.delayed = append(in.delayed, qn)
			in.movable = append(in.movable, k)
		case t != "none":
			in.unknown = append(in.unknown, k)
		}
	}
	return in, nil
}

// queues returns the queues with a layout-1 stream or delayed set, sorted.
func (in *inventory) queues() []string {
	qs := append(slices.Clone(in.streams), in.delayed...)
	slices.Sort(qs)
	return slices.Compact(qs)
}

// scheduleOfMarker returns the schedule of overlap marker mk
// ("<schedule>:<job>"): the longest known schedule ID it starts with
// followed by a colon, else the text before its last colon (job names of
// the schedules that left a marker without a hash).
func scheduleOfMarker(mk string, known map[string]bool) string {
	best := ""
	for i := 0; i < len(mk); i++ {
		if mk[i] == ':' && known[mk[:i]] {
			best = mk[:i]
		}
	}
	if best != "" {
		return best
	}
	if i := strings.LastIndexByte(mk, ':'); i >= 0 {
		return mk[:i]
	}
	return mk
}
