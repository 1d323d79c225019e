package keyspace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrLayoutMismatch is returned (wrapped) when a namespace's stored
// partition count differs from the one a process was configured with.
var ErrLayoutMismatch = errors.New("keyspace: namespace has a different partition count")

// ErrUnknownLayout is returned (wrapped) for a meta key written by a newer
// version of chronos.
var ErrUnknownLayout = errors.New("keyspace: unknown namespace layout")

// ErrMigrating is returned (wrapped) for a namespace that chronos migrate
// is moving from layout 1 to partitions: its keys are partly in one
// layout, partly in the other, so no process may use it until the
// migration is finished (by running chronos migrate again if it was
// interrupted).
var ErrMigrating = errors.New("keyspace: namespace being migrated")

// Migrating is the meta key's layout field while chronos migrate moves a
// layout-1 namespace to partitions (BeginMigration); EndMigration makes it
// "2".
const Migrating = "migrating"

// Meta is the key that records a partitioned namespace's layout: a hash
// with fields layout ("2"), partitions and created (unix ms). Layout-1
// namespaces have none.
func Meta(ns string) string { return Prefix(ns) + "meta" }

// resolveScript reads a namespace's layout, or decides it for a namespace
// without one, atomically with respect to every other process doing the
// same: the meta key and the layout-1 marker keys all carry the control
// tag, so they are in one slot.
//
//	KEYS[1] meta, KEYS[2…] layout-1 marker keys
//	ARGV[1] partitions for a new namespace, ARGV[2] now (ms),
//	ARGV[3] "1" to create the meta key of a new namespace, "0" to only read
//
// Returns {layout, partitions}: the stored ones; {"1", "1"} when a marker
// exists (nothing written); the new ones when created; {} when the
// namespace is new and ARGV[3] is "0".
var resolveScript = redis.NewScript(MetaLua + `
local m = redis.call('HMGET', KEYS[1], 'layout', 'partitions')
if m[1] then return {m[1], m[2] or ''} end
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then return {'1', '1'} end
end
if ARGV[3] ~= '1' then return {} end
chronos_ensure_meta(KEYS[1], ARGV[1], ARGV[2])
return {'2', ARGV[1]}
`)

// MetaLua defines
//
//	chronos_ensure_meta(key, partitions, now)
//
// which writes the meta key of a partitioned namespace (layout 2,
// partitions, created = now in unix ms) if it is missing, and returns 1
// when it wrote it. The scheduler's heartbeat runs it with the meta key
// (Meta) of a partitioned namespace before it writes the instance index:
// when Redis lost its data, the index, a layout-1 marker (ControlMarkers),
// must not come back without the meta key, or a later process would take
// the namespace for layout 1.
const MetaLua = `
local function chronos_ensure_meta(key, partitions, now)
  if redis.call('EXISTS', key) == 1 then return 0 end
  redis.call('HSET', key, 'layout', '2', 'partitions', partitions, 'created', now)
  return 1
end
`

// Resolver finds the layout of one namespace in Redis, once, and caches it
// (see Resolve). It is safe for concurrent use.
type Resolver struct {
	client redis.UniversalClient
	ns     string
	opts   ResolveOptions

	mu sync.Mutex
	l  *Layout
}

// ResolveOptions configure a Resolver.
type ResolveOptions struct {
	// Partitions is the count for a namespace this process creates; 0
	// means DefaultPartitions. A positive count that differs from a
	// partitioned namespace's stored one is ErrLayoutMismatch; a layout-1
	// namespace keeps its single tag whatever is configured.
	Partitions int
	// Markers are keys, beyond the control keys every version writes,
	// whose existence marks a layout-1 namespace: for example the streams
	// of the queues the process serves (named with Prefix).
	Markers []string
	// ReadOnly never creates the meta key: a new namespace is reported with
	// the layout it would get, without writing it (the Inspector).
	ReadOnly bool
}

// NewResolver returns a Resolver for namespace ns.
func NewResolver(client redis.UniversalClient, ns string, o ResolveOptions) *Resolver {
	return &Resolver{client: client, ns: Namespace(ns), opts: o}
}

// Layout returns the namespace's layout, reading or deciding it on the
// first call (one script run) and from memory afterwards. A failed read is
// not cached.
func (r *Resolver) Layout(ctx context.Context) (Layout, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.l != nil {
		return *r.l, nil
	}
	l, err := resolve(ctx, r.client, r.ns, r.opts)
	if err != nil {
		return Layout{}, err
	}
	if !r.opts.ReadOnly || l.stored {
		r.l = &l.Layout
	}
	return l.Layout, nil
}

// Cached returns the layout found by an earlier Layout call, if any.
func (r *Resolver) Cached() (Layout, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.l == nil {
		return Layout{}, false
	}
	return *r.l, true
}

// Forget drops the cached layout, so that the next Layout reads it again:
// after a write met a key of the wrong type, which is what a namespace
// migrated meanwhile leaves in place of its layout-1 queue keys.
func (r *Resolver) Forget() {
	r.mu.Lock()
	r.l = nil
	r.mu.Unlock()
}

// resolved is a Layout and whether Redis holds it (a meta key, or layout-1
// keys), as opposed to a new namespace seen read-only.
type resolved struct {
	Layout
	stored bool
}

// ControlMarkers are the control keys of layout 1 that any earlier version
// writes once it runs: the scheduler's schedules index, instance set and
// leader epoch, and the queue's dead-letter index and paused set. Their
// names are those of schedstore, leader and rdb in layout 1; this list is
// checked against them by the storage packages' tests.
func ControlMarkers(ns string) []string {
	p := Prefix(ns)
	return []string{p + "schedules", p + "instances", p + "leader:epoch", p + "dead:index", p + "paused"}
}

// resolve reads the layout of namespace ns, or decides it: a meta key
// gives a partitioned namespace its count; without one, any of
// ControlMarkers or o.Markers makes it layout 1 (the single tag of
// earlier versions, which never wrote a meta key); with none, the
// namespace is new and gets o.Partitions partitions, recorded in its meta
// key unless o.ReadOnly.
func resolve(ctx context.Context, client redis.UniversalClient, ns string, o ResolveOptions) (resolved, error) {
	if err := ValidateNamespace(ns); err != nil {
		return resolved{}, err
	}
	ns = Namespace(ns)
	want := o.Partitions
	if want == 0 {
		want = DefaultPartitions
	}
	if want < 1 || want > MaxPartitions {
		return resolved{}, fmt.Errorf("%w: %d", ErrBadPartitions, want)
	}
	// The meta key alone first: a partitioned namespace is answered by one
	// small command (which is also the first an unauthenticated connection
	// sends, and so fails with NOAUTH rather than Redis's limit on the
	// arguments of an unauthenticated command).
	m, err := client.HMGet(ctx, Meta(ns), "layout", "partitions").Result()
	if err != nil {
		return resolved{}, fmt.Errorf("keyspace: read the layout of namespace %q: %w", ns, err)
	}
	var res []string
	if l, ok := m[0].(string); ok {
		p, _ := m[1].(string)
		res = []string{l, p}
	} else {
		keys := append([]string{Meta(ns)}, ControlMarkers(ns)...)
		keys = append(keys, o.Markers...)
		create := "1"
		if o.ReadOnly {
			create = "0"
		}
		res, err = resolveScript.Run(ctx, client, keys, want, time.Now().UnixMilli(), create).StringSlice()
		if err != nil {
			return resolved{}, fmt.Errorf("keyspace: read the layout of namespace %q: %w", ns, err)
		}
	}
	if len(res) == 0 { // new, read-only
		l, err := Partitioned(ns, want)
		return resolved{Layout: l}, err
	}
	switch res[0] {
	case "1":
		return resolved{Layout: Single(ns), stored: true}, nil
	case "2":
		n, err := strconv.Atoi(res[1])
		if err != nil {
			return resolved{}, fmt.Errorf("%w: namespace %q: partitions %q", ErrUnknownLayout, ns, res[1])
		}
		if o.Partitions != 0 && n != o.Partitions {
			return resolved{}, fmt.Errorf("%w: namespace %q has %d partitions, this process is configured with %d: drop the setting or migrate the namespace",
				ErrLayoutMismatch, ns, n, o.Partitions)
		}
		l, err := Partitioned(ns, n)
		return resolved{Layout: l, stored: true}, err
	case Migrating:
		return resolved{}, fmt.Errorf("%w: namespace %q is moving to %s partitions: let chronos migrate finish (run it again if it was interrupted)",
			ErrMigrating, ns, res[1])
	default:
		return resolved{}, fmt.Errorf("%w: namespace %q has layout %q, written by a newer chronos", ErrUnknownLayout, ns, res[0])
	}
}
