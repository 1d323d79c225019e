package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

// DefaultLiveWithin is how recently a consumer must have read or claimed
// a task to count as a live server: twice the default visibility timeout
// (30 s), within which a live server holding tasks renews its leases.
const DefaultLiveWithin = time.Minute

// DefaultBatch is how many items a round trip moves.
const DefaultBatch = 100

// Options configure Run.
type Options struct {
	// Namespace is the namespace to migrate ("": keyspace.DefaultNamespace).
	Namespace string
	// Partitions is the count to migrate to; 0 means
	// keyspace.DefaultPartitions, or, for a migration under way, its count.
	Partitions int
	// Force migrates although scheduler instances or servers look live:
	// for ones that crashed (their heartbeat or lease has not expired yet).
	Force bool
	// DryRun counts what would move and writes nothing.
	DryRun bool
	// LiveWithin is how recently a consumer of a queue's group must have
	// read or claimed a task to count as a live server. Default
	// DefaultLiveWithin.
	LiveWithin time.Duration
	// Batch is how many items a round trip moves. Default DefaultBatch.
	Batch int
	// Now returns the current time. Default time.Now.
	Now func() time.Time
	// Step, if set, is called after every round trip that wrote, with
	// what it wrote (for example "streams: copied"); an error stops the
	// migration there, as a crash would. For tests.
	Step func(step string) error
}

// Kinds of what a migration moves: the keys of Report.Moved.
const (
	KindSchedules = "schedules"       // hashes: definition, trigger state, pauses
	KindHistory   = "history records" // firing records
	KindIndexes   = "index entries"   // the schedules and changed indexes
	KindRequests  = "requests"        // pending operator requests
	KindDedup     = "dedup keys"      // with their remaining TTL
	KindReady     = "ready tasks"     // stream entries not delivered yet
	KindPending   = "pending tasks"   // delivered, unfinished: re-added as new entries
	KindDelayed   = "delayed tasks"
	KindDead      = "dead tasks"
	KindOverlap   = "overlap markers"
	KindRuns      = "run records"
	KindPaused    = "paused queues"
	KindEpoch     = "leader epoch" // the value every partition's epoch starts above
)

// Kinds lists the kinds in the order reports print them.
var Kinds = []string{KindSchedules, KindHistory, KindIndexes, KindRequests, KindDedup, KindReady, KindPending,
	KindDelayed, KindDead, KindOverlap, KindRuns, KindPaused, KindEpoch}

// States of a namespace when Run finds it (Report.Found).
const (
	FoundLayout1     = "layout 1"    // no meta key: written by versions before partitions
	FoundMigrating   = "migrating"   // an interrupted migration, which Run finishes
	FoundPartitioned = "partitioned" // migrated already (Run moves what is left, if anything)
)

// Report says what a migration did, or (DryRun) would do.
type Report struct {
	Namespace  string
	Partitions int
	Found      string // FoundLayout1, FoundMigrating or FoundPartitioned
	DryRun     bool
	// Moved counts what moved (or would move) by kind (Kinds). An item an
	// interrupted run moved already is not counted again.
	Moved map[string]int
	// Queues are the queues whose layout-1 stream and delayed set were
	// replaced by the marker (rdb.MigratedMarker).
	Queues []string
	// Left are keys under the layout-1 tag left where they are: keys
	// chronos does not write, and the queues of versions before
	// in-process isolated schedules (which the leader deletes).
	Left []string
	// Forced lists what looked live when Force was set.
	Forced []string
}

// ErrNothing is returned (wrapped) for a namespace that holds no key.
var ErrNothing = errors.New("migrate: nothing to migrate")

// ErrPartitioned is returned (wrapped) for a namespace without a meta key
// that holds keys of partitions.
var ErrPartitioned = errors.New("migrate: namespace is partitioned")

// migration is one Run.
type migration struct {
	c   redis.UniversalClient
	ns  string
	o   Options
	old legacy
	to  keyspace.Layout
	rep *Report
}

// Run migrates the namespace o.Namespace from the single-tag layout 1 to
// o.Partitions partitions, or finishes a migration that was interrupted
// (package doc). It refuses, with a *LiveError, while a scheduler instance
// or a server of a layout-1 namespace looks live, unless o.Force.
func Run(ctx context.Context, c redis.UniversalClient, o Options) (*Report, error) {
	if err := keyspace.ValidateNamespace(o.Namespace); err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LiveWithin <= 0 {
		o.LiveWithin = DefaultLiveWithin
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	ns := keyspace.Namespace(o.Namespace)
	meta, err := keyspace.ReadMeta(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	n := o.Partitions
	rep := &Report{Namespace: ns, DryRun: o.DryRun, Moved: map[string]int{}}
	switch meta.Layout {
	case "":
		rep.Found = FoundLayout1
		if n == 0 {
			n = keyspace.DefaultPartitions
		}
	case keyspace.Migrating, "2":
		rep.Found = FoundMigrating
		if meta.Layout == "2" {
			rep.Found = FoundPartitioned
		}
		if n != 0 && n != meta.Partitions {
			return nil, fmt.Errorf("%w: namespace %q is %s to %d partitions, not %d: run it again with %d partitions (or without a count)",
				keyspace.ErrLayoutMismatch, ns, map[bool]string{true: "migrated", false: "being migrated"}[meta.Layout == "2"],
				meta.Partitions, n, meta.Partitions)
		}
		n = meta.Partitions
	default:
		return nil, fmt.Errorf("%w: namespace %q has layout %q, written by a newer chronos", keyspace.ErrUnknownLayout, ns, meta.Layout)
	}
	to, err := keyspace.Partitioned(ns, n)
	if err != nil {
		return nil, err
	}
	rep.Partitions = n
	m := &migration{c: c, ns: ns, o: o, old: legacyKeys(ns), to: to, rep: rep}
	in, err := m.scan(ctx)
	if err != nil {
		return nil, err
	}
	if meta.Layout == "" {
		// A partitioned namespace whose meta key Redis lost has control
		// keys and no meta key either: migrating it would record a count
		// that may not be its own.
		found, err := m.partitionKeys(ctx)
		if err != nil {
			return nil, err
		}
		if found != "" {
			return nil, fmt.Errorf("%w: namespace %q has no meta key but keys of partitions (%s): it is partitioned and lost its meta key; "+
				"start one of its processes with its partition count to write it again", ErrPartitioned, ns, found)
		}
		if in.keys == 0 {
			return nil, fmt.Errorf("%w: namespace %q holds no key", ErrNothing, ns)
		}
	}
	if meta.Layout != "2" {
		// Layout 1 or an interrupted migration: what still runs on the
		// layout-1 keys would write under the migration. Once the meta
		// key says 2, processes of the partitioned layout may run: what
		// is left (tasks that processes still using layout 1 added) is
		// moved under them.
		live, err := m.live(ctx, in)
		if err != nil {
			return nil, err
		}
		if live != nil {
			if !o.Force {
				return nil, live
			}
			rep.Forced = live.what()
		}
	}
	if o.DryRun {
		if err := m.count(ctx, in); err != nil {
			return nil, err
		}
		rep.Left = m.left(in)
		return rep, nil
	}
	if meta.Layout != "2" {
		if _, err := keyspace.BeginMigration(ctx, c, ns, n); err != nil {
			return nil, err
		}
		if err := m.step("meta: migrating"); err != nil {
			return nil, err
		}
		if err := m.moveAll(ctx, in); err != nil {
			return nil, err
		}
		if err := keyspace.EndMigration(ctx, c, ns, n); err != nil {
			return nil, err
		}
		if err := m.step("meta: partitioned"); err != nil {
			return nil, err
		}
		if in, err = m.scan(ctx); err != nil {
			return nil, err
		}
	}
	if err := m.finish(ctx, in); err != nil {
		return nil, err
	}
	if in, err = m.scan(ctx); err != nil {
		return nil, err
	}
	rep.Left = m.left(in)
	for k, v := range rep.Moved {
		if v == 0 {
			delete(rep.Moved, k)
		}
	}
	return rep, nil
}

// left names what a scan found that the migration leaves, or left: keys
// chronos does not write, the legacy isolated queues, and, after a run,
// what is still under the layout-1 tag: written meanwhile by a process of
// an earlier version (a partitioned namespace's registry is never
// overwritten from layout 1), or queues and dedup keys of Clients still
// using layout 1 that arrived after the last pass (a next run moves those).
func (m *migration) left(in *inventory) []string {
	out := slices.Clone(in.unknown)
	for _, q := range in.legacyIsolated {
		out = append(out, m.old.q.Stream(q))
	}
	if !m.o.DryRun {
		out = append(out, in.movable...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// partitionKeys returns a key of a partition of the namespace, of any
// count, if one exists ("" if none), scanning every master.
func (m *migration) partitionKeys(ctx context.Context) (string, error) {
	pattern := keyspace.ACLKeyPatterns(m.ns)[1]
	var nodes []redis.Cmdable
	if cc, ok := m.c.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		if err := cc.ForEachMaster(ctx, func(_ context.Context, n *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			nodes = append(nodes, n)
			return nil
		}); err != nil {
			return "", fmt.Errorf("migrate: the masters: %w", err)
		}
	} else {
		nodes = []redis.Cmdable{m.c}
	}
	for _, n := range nodes {
		var cursor uint64
		for {
			ks, next, err := n.Scan(ctx, cursor, pattern, 1000).Result()
			if err != nil {
				return "", fmt.Errorf("migrate: look for keys of partitions of %q: %w", m.ns, err)
			}
			if len(ks) > 0 {
				return ks[0], nil
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	return "", nil
}

func (m *migration) step(what string) error {
	if m.o.Step == nil {
		return nil
	}
	if err := m.o.Step(what); err != nil {
		return fmt.Errorf("migrate: stopped after %s: %w", what, err)
	}
	return nil
}

// moveAll moves everything of a layout-1 namespace to its partitions,
// while the meta key says the namespace is being migrated. Overlap
// markers move before the tasks, whose move rewrites their records.
func (m *migration) moveAll(ctx context.Context, in *inventory) error {
	for _, f := range []func(context.Context, *inventory) error{
		m.moveOverlap, m.moveSchedules, m.moveIndexes, m.moveRequests, m.moveVersion,
		m.moveQueues, m.moveDead, m.moveRuns, m.moveDedup, m.movePaused, m.moveEpoch,
	} {
		if err := f(ctx, in); err != nil {
			return err
		}
	}
	return nil
}

// finish moves, once the namespace is partitioned, what processes still
// using layout 1 added meanwhile, replaces each layout-1 queue's stream and
// delayed set by the marker, drops the records of moved entries, and moves
// the dedup keys claimed meanwhile: listed once the markers are in place,
// after which an enqueue into layout 1 fails before it claims its key
// (rdb.EnqueueFunc), so none is claimed there after the list is read.
func (m *migration) finish(ctx context.Context, in *inventory) error {
	if err := m.moveQueues(ctx, in); err != nil {
		return err
	}
	if err := m.mark(ctx, in); err != nil {
		return err
	}
	in, err := m.scan(ctx)
	if err != nil {
		return err
	}
	return m.moveDedup(ctx, in)
}
