package rdb

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

// Namespace is the queue storage of a namespace whose layout is read from
// Redis when it is first needed, with a keyspace.Resolver, and kept: the
// Store of that layout. The Client resolves it at its first enqueue, the
// Server at Start, the Inspector (read-only) at its first call. It is safe
// for concurrent use.
type Namespace struct {
	C  redis.UniversalClient
	ns string
	o  keyspace.ResolveOptions

	mu     sync.Mutex
	res    *keyspace.Resolver // created at the first Store, with its markers
	create *keyspace.Resolver // a read-only namespace's, for Create
	st     atomic.Pointer[Store]
}

// NewNamespace returns the storage of namespace ns over c, whose layout is
// resolved with o when first needed.
func NewNamespace(c redis.UniversalClient, ns string, o keyspace.ResolveOptions) *Namespace {
	return &Namespace{C: c, ns: keyspace.Namespace(ns), o: o}
}

// Name is the namespace's name.
func (n *Namespace) Name() string { return n.ns }

// Store returns the Store of the namespace's layout. The first call reads
// the layout (one round trip), or decides it for a new namespace unless
// the Namespace is read-only; markers are added then to the layout-1
// marker keys (ResolveOptions.Markers), for example the layout-1 stream of
// the queue a client enqueues to first. Later calls return the same Store
// without a round trip, until Forget.
//
// A read-only Namespace that finds no layout stored (no meta key, no
// layout-1 key among the markers) returns, without keeping it, the Store
// of layout 1: a partitioned namespace always has its meta key, so
// whatever such a namespace holds is under the single tag.
func (n *Namespace) Store(ctx context.Context, markers ...string) (*Store, error) {
	if st := n.st.Load(); st != nil {
		return st, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if st := n.st.Load(); st != nil {
		return st, nil
	}
	if n.res == nil {
		o := n.o
		o.Markers = append(append([]string(nil), o.Markers...), markers...)
		n.res = keyspace.NewResolver(n.C, n.ns, o)
	}
	l, err := n.res.Layout(ctx)
	if err != nil {
		return nil, fmt.Errorf("rdb: layout of namespace %q: %w", n.ns, err)
	}
	if _, stored := n.res.Cached(); !stored {
		return NewStore(n.C, keyspace.Single(n.ns)), nil
	}
	st := NewStore(n.C, l)
	n.st.Store(st)
	return st, nil
}

// Cached returns the Store found by an earlier Store call, or nil.
func (n *Namespace) Cached() *Store { return n.st.Load() }

// Create is Store for a write that must not go to a namespace without a
// layout: on a read-only Namespace whose namespace is new, it creates the
// meta key with the configured partition count, as a Client or Server
// would (an Inspector pausing a queue before anything ran).
func (n *Namespace) Create(ctx context.Context) (*Store, error) {
	if !n.o.ReadOnly {
		return n.Store(ctx)
	}
	if st := n.st.Load(); st != nil {
		return st, nil
	}
	if _, err := n.Store(ctx); err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if st := n.st.Load(); st != nil {
		return st, nil
	}
	if n.create == nil {
		o := n.o
		o.ReadOnly = false
		n.create = keyspace.NewResolver(n.C, n.ns, o)
	}
	l, err := n.create.Layout(ctx)
	if err != nil {
		return nil, fmt.Errorf("rdb: layout of namespace %q: %w", n.ns, err)
	}
	st := NewStore(n.C, l)
	n.st.Store(st)
	return st, nil
}

// Forget drops the layout of stale, if it is still the one kept, so that
// the next Store reads the layout again: after a write met a key of the
// wrong type (IsWrongType), which is what a namespace migrated meanwhile
// leaves in place of its layout-1 queue keys.
func (n *Namespace) Forget(stale *Store) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.st.CompareAndSwap(stale, nil) {
		if n.res != nil {
			n.res.Forget()
		}
		if n.create != nil {
			n.create.Forget()
		}
	}
}

// Reassert writes the mark of the kept layout again if Redis lost it (a
// restart without persistence, FLUSHALL, a failover to a replica that had
// not received it), so that a reader that comes later takes the namespace
// for the layout this process uses: the meta key of a partitioned
// namespace, as it was first written (a reader would otherwise take a
// namespace without a meta key for a layout-1 one), or the layout-1 mark
// (keyspace.MarkLayoutOne; a reader would otherwise take the empty
// namespace for a new one and partition it). A Server calls it when it
// finds its consumer groups gone. It reports an error when Redis now holds
// another layout, which this process cannot switch to while it runs.
func (n *Namespace) Reassert(ctx context.Context) error {
	st := n.st.Load()
	if st == nil {
		return nil
	}
	if st.Layout.IsSingle() {
		if err := keyspace.MarkLayoutOne(ctx, n.C, n.ns); err != nil {
			return fmt.Errorf("rdb: %w: restart this process", err)
		}
		return nil
	}
	o := n.o
	o.Partitions, o.ReadOnly, o.Markers = st.Layout.Partitions(), false, nil
	l, err := keyspace.NewResolver(n.C, n.ns, o).Layout(ctx)
	if err != nil {
		return fmt.Errorf("rdb: write the layout of namespace %q again: %w", n.ns, err)
	}
	if l.Version() != st.Layout.Version() || l.Partitions() != st.Layout.Partitions() {
		return fmt.Errorf("rdb: %s is stored now, but this process uses %s: restart it", l, st.Layout)
	}
	return nil
}

// RecentRuns is Store.RecentRuns of the namespace's layout.
func (n *Namespace) RecentRuns(ctx context.Context, count int, kinds []string, below map[string]string) (map[string]RunPage, error) {
	st, err := n.Store(ctx)
	if err != nil {
		return nil, err
	}
	return st.RecentRuns(ctx, count, kinds, below)
}

// ClearOverlap is Store.ClearOverlap of the namespace's layout.
func (n *Namespace) ClearOverlap(ctx context.Context, marker string) error {
	st, err := n.Store(ctx)
	if err != nil {
		return err
	}
	return st.ClearOverlap(ctx, marker)
}

// AppendRun is Store.AppendRun of the namespace's layout.
func (n *Namespace) AppendRun(ctx context.Context, kind string, rec *RunRecord, keep int) error {
	st, err := n.Create(ctx)
	if err != nil {
		return err
	}
	return st.AppendRun(ctx, kind, rec, keep)
}

// This part tells whether a namespace holds anything, for the operator's
// tools: an empty listing of a namespace that does not exist is a mistyped
// name, not an answer.

// HasKeys reports whether any key of the namespace exists, in any layout.
// It asks for its meta key and the layout-1 dead letters and paused queues
// first (one EXISTS: all carry the control tag), then SCANs, on every
// master of a Redis Cluster, for any key under the control tag or a
// partition's tag (keyspace.ACLKeyPatterns): streams and run records have
// names of their own, and partitions are spread over the masters. Each
// SCAN (one per pattern and master) stops after examining about maxScan
// keys; sure is false when one stopped before it could tell (found is then
// false too).
func (n *Namespace) HasKeys(ctx context.Context, maxScan int) (found, sure bool, err error) {
	k := NewKeys(n.ns)
	c, err := n.C.Exists(ctx, keyspace.Meta(n.ns), k.Dead(), k.Paused()).Result()
	if err != nil {
		return false, false, fmt.Errorf("rdb: namespace exists: %w", err)
	}
	if c > 0 {
		return true, true, nil
	}
	var nodes []redis.Cmdable
	if cc, ok := n.C.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err := cc.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
			mu.Lock()
			nodes = append(nodes, m)
			mu.Unlock()
			return nil
		})
		if err != nil {
			return false, false, fmt.Errorf("rdb: namespace exists: %w", err)
		}
	} else {
		nodes = []redis.Cmdable{n.C}
	}
	unsure := false
	for _, pattern := range keyspace.ACLKeyPatterns(n.ns) {
		for _, node := range nodes {
			var cursor uint64
			for scanned := 0; ; scanned += 1000 {
				if scanned >= maxScan {
					unsure = true
					break
				}
				keys, next, err := node.Scan(ctx, cursor, pattern, 1000).Result()
				if err != nil {
					return false, false, fmt.Errorf("rdb: namespace exists: %w", err)
				}
				if len(keys) > 0 {
					return true, true, nil
				}
				if next == 0 {
					break
				}
				cursor = next
			}
		}
	}
	return false, !unsure, nil
}
