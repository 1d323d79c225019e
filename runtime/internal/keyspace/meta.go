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
// A namespace with neither is new, or it is a layout-1 namespace whose
// Redis lost its data (restarted without persistence, flushed, failed
// over to an empty replica) while its processes run on with the layout
// they read at start, until one of them writes a marker again (a
// heartbeat, an election, a consumer group). Before it creates the meta
// key, the script asks whether any connection is subscribed to the
// namespace's layout-1 channels (ControlChannels: every layout-1
// scheduler instance and server subscribes to one for as long as it
// runs, and FLUSHALL leaves subscriptions). If one is, the namespace is
// layout 1: it writes the first marker, the leader's epoch counter, at 0
// if it is missing (an election raises it above 0 and above every epoch
// its elector saw, so 0 takes nothing from the fence), and answers layout 1, so
// that the new process joins the running ones instead of partitioning the
// namespace under them, where both layouts would fire every schedule they
// both declare. PUBSUB NUMSUB counts the subscribers of the node that
// runs the script, which is the node that holds the control tag's slot,
// where go-redis subscribes a connection whose first channel is one of
// these; a user whose ACL refuses the command only loses this check.
//
//	KEYS[1] meta, KEYS[2] the leader's epoch counter of layout 1 (the mark a
//	process joining layout 1 writes), KEYS[3…] the other layout-1 marker keys
//	ARGV[1] partitions for a new namespace, ARGV[2] now (ms),
//	ARGV[3] "1" to create the meta key of a new namespace, "0" to only read,
//	ARGV[4…] the layout-1 channels (checked only when creating)
//
// Returns {layout, partitions}: the stored ones; {"1", "1"} when a marker
// exists (nothing written) or a layout-1 process is subscribed (the mark
// written); the new ones when created; {} when the namespace is new and
// ARGV[3] is "0".
var resolveScript = redis.NewScript(MetaLua + `
local m = redis.call('HMGET', KEYS[1], 'layout', 'partitions')
if m[1] then return {m[1], m[2] or ''} end
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then return {'1', '1'} end
end
if ARGV[3] ~= '1' then return {} end
if #ARGV >= 4 then
  local subs = redis.pcall('PUBSUB', 'NUMSUB', unpack(ARGV, 4))
  if type(subs) == 'table' and not subs.err then
    for i = 2, #subs, 2 do
      if tonumber(subs[i]) > 0 then
        redis.call('SET', KEYS[2], '0', 'NX')
        return {'1', '1'}
      end
    end
  end
end
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

// markScript writes the mark of a layout-1 namespace, its leader's epoch
// counter at 0, if the namespace has no meta key and the counter is
// missing; with a meta key it writes nothing and returns its layout and
// partitions.
//
//	KEYS[1] meta, KEYS[2] the leader's epoch counter of layout 1
var markScript = redis.NewScript(`
local m = redis.call('HMGET', KEYS[1], 'layout', 'partitions')
if m[1] then return {m[1], m[2] or ''} end
redis.call('SET', KEYS[2], '0', 'NX')
return {}
`)

// ErrLayoutChanged is returned (wrapped) to a process of layout 1 whose
// namespace has a meta key: it was partitioned, or is being migrated,
// while the process runs.
var ErrLayoutChanged = errors.New("keyspace: the namespace has a layout record, but this process uses layout 1")

// MarkLayoutOne is, for a process running namespace ns in layout 1, what
// writing the meta key again is for a partitioned one: after Redis lost
// its data, it writes the namespace's layout-1 mark again (the leader's
// epoch counter, at 0 if missing), so that a process starting later takes
// the namespace for layout 1 (resolve). When the namespace has a meta key
// instead it writes nothing and returns ErrLayoutChanged: the process must
// be restarted to use the stored layout.
func MarkLayoutOne(ctx context.Context, client redis.UniversalClient, ns string) error {
	ns = Namespace(ns)
	res, err := markScript.Run(ctx, client, []string{Meta(ns), epochMark(ns)}).StringSlice()
	if err != nil {
		return fmt.Errorf("keyspace: mark namespace %q as layout 1: %w", ns, err)
	}
	if len(res) == 2 {
		return fmt.Errorf("%w: namespace %q has layout %q, %s partitions", ErrLayoutChanged, ns, res[0], res[1])
	}
	return nil
}

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
	return []string{p + "schedules", p + "instances", epochMark(ns), p + "dead:index", p + "paused"}
}

// epochMark is the layout-1 leader's epoch counter, the one of
// ControlMarkers that a process joining a layout-1 namespace that holds
// no marker writes (resolveScript, MarkLayoutOne): a counter, so that
// writing it at 0 when it is missing changes no election.
func epochMark(ns string) string { return Prefix(ns) + "leader:epoch" }

// ControlChannels are the pub/sub channels of layout 1 that its processes
// of every version subscribe to for as long as they run: the leaders'
// resign channel (every scheduler instance's elector) and the queue's wake
// channel (every Server's forwarder). Subscriptions are not data: they
// survive FLUSHALL, and come back when the processes reconnect after a
// restart, so they show layout-1 processes running in a namespace whose
// keys are gone. No process of a partitioned namespace subscribes to them
// (its channels carry the partitions' tags). Like ControlMarkers, the names
// are copies of the storage packages' layout-1 names, checked by their
// tests.
func ControlChannels(ns string) []string {
	p := Prefix(ns)
	return []string{p + "leader:resign", p + "wake"}
}

// resolve reads the layout of namespace ns, or decides it: a meta key
// gives a partitioned namespace its count; without one, any of
// ControlMarkers or o.Markers makes it layout 1 (the single tag of
// earlier versions, which never wrote a meta key); with none, and unless
// o.ReadOnly, a subscriber to ControlChannels makes it layout 1 too (a
// layout-1 namespace that lost its data while its processes run:
// resolveScript); otherwise the namespace is new and gets o.Partitions
// partitions, recorded in its meta key unless o.ReadOnly.
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
		keys := []string{Meta(ns), epochMark(ns)}
		for _, m := range ControlMarkers(ns) {
			if m != keys[1] {
				keys = append(keys, m)
			}
		}
		keys = append(keys, o.Markers...)
		create := "1"
		if o.ReadOnly {
			create = "0"
		}
		args := []any{want, time.Now().UnixMilli(), create}
		for _, c := range ControlChannels(ns) {
			args = append(args, c)
		}
		res, err = resolveScript.Run(ctx, client, keys, args...).StringSlice()
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
