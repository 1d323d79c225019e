package chronos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// Client enqueues tasks. It is safe for concurrent use; create one per
// process and share it: concurrent Enqueue calls on one Client share round
// trips to Redis (see Enqueue).
//
// A Client reads the namespace's layout at its first enqueue (one round
// trip; for a new namespace it creates it with WithPartitions partitions)
// and keeps it. A task with a dedup key goes to the partition of its key,
// so that every Client claims a key in the same partition, atomically with
// the task; others go to the partitions in turn (docs/queue.md,
// "Partitions").
type Client struct {
	ns    *rdb.Namespace
	repl  *rdb.Replication // WithReplicas; nil: none
	batch *rdb.EnqueueBatcher
	turn  atomic.Uint32 // round-robin over the partitions
	now   func() time.Time
}

// ClientOption configures a Client or an Inspector.
type ClientOption interface {
	applyClient(*clientConfig)
}

type clientConfig struct {
	namespace  string
	partitions int
	replicas   int
	replicaTO  time.Duration
}

type clientOption func(*clientConfig)

func (f clientOption) applyClient(c *clientConfig) { f(c) }

// WithNamespace selects the namespace (default "chronos"). Servers,
// schedulers, clients and inspectors only see each other within one
// namespace. A namespace's keys are spread over its partitions, each under
// its own Redis Cluster hash tag (docs/queue.md).
func WithNamespace(ns string) ClientOption {
	return clientOption(func(c *clientConfig) { c.namespace = ns })
}

// WithPartitions sets the number of partitions of the namespace, between 1
// and 1024. It matters only to the first process that uses a new
// namespace, which records the count in Redis; every other process reads
// it. 0 (the default) means the stored count, or 12 for a new namespace
// (12 splits evenly over 1, 2, 3, 4, 6 and 12 Redis Cluster masters). A count that differs from an existing partitioned
// namespace's is an error wrapping ErrLayoutMismatch; a namespace written
// by a version before partitions keeps its single hash tag.
func WithPartitions(n int) ClientOption {
	return clientOption(func(c *clientConfig) { c.partitions = n })
}

// WithReplicas makes a Client's Enqueue and EnqueueMany wait until n
// replicas of the master that took each task have it (Redis WAIT, for up to
// timeout; 0 means one second), so that a failover that promotes one of
// them keeps every task the Client acknowledged. A task the replicas did
// not acknowledge in time is enqueued on the master, and its error wraps
// ErrNotReplicated: a failover could still lose it, and enqueueing it again
// could add it twice unless it has a dedup key. Each round trip to a
// master then waits for one replication round trip too. Keep timeout under
// the Redis client's ReadTimeout, which bounds the round trip WAIT is in.
//
// WAIT counts the replicas of the server it runs on, for the writes of its
// own connection: with a cluster client each round trip goes to the master
// of the tasks' partitions, on that master's own connection, one per
// master, in parallel. A master is asked for no more replicas than it has
// been seen to have connected, so a replica just promoted, whose old master
// has not come back as its replica yet, or a server without replicas, does
// not fail every enqueue (docs/queue.md, "What a failover keeps and
// loses"). An Inspector ignores it.
func WithReplicas(n int, timeout time.Duration) ClientOption {
	return clientOption(func(c *clientConfig) { c.replicas, c.replicaTO = n, timeout })
}

// NewClient returns a Client that enqueues through client.
// A cluster client (*redis.ClusterClient) is made to reload its slot map
// when a command fails to connect or meets CLUSTERDOWN, so that the death
// of a master costs the time to promote its replica rather than up to the
// client's ClusterStateReloadInterval (docs/cluster.md).
func NewClient(client redis.UniversalClient, opts ...ClientOption) *Client {
	rdb.ReloadOnFailure(client)
	var cfg clientConfig
	for _, o := range opts {
		o.applyClient(&cfg)
	}
	var repl *rdb.Replication
	if cfg.replicas > 0 {
		to := cfg.replicaTO
		if to <= 0 {
			to = time.Second
		}
		repl = &rdb.Replication{Want: cfg.replicas, Timeout: to}
	}
	return &Client{
		ns:    rdb.NewNamespace(client, cfg.namespace, keyspace.ResolveOptions{Partitions: cfg.partitions}),
		repl:  repl,
		batch: rdb.NewEnqueueBatcher(client, repl),
		now:   time.Now,
	}
}

// store returns the storage of the namespace's layout, read at the first
// enqueue, to queue: the stream and delayed set queue had in the
// single-tag layout mark a namespace of that layout (a namespace used only
// through clients and servers of an earlier version has no other mark).
func (c *Client) store(ctx context.Context, queue string) (*rdb.Store, error) {
	if st := c.ns.Cached(); st != nil {
		return st, nil
	}
	k := rdb.NewKeys(c.ns.Name())
	st, err := c.ns.Store(ctx, k.Stream(queue), k.Delayed(queue))
	if err != nil {
		return nil, err
	}
	return st, nil
}

// to sets the partition of it from the layout of st.
func (c *Client) to(st *rdb.Store, it *rdb.EnqueueItem) {
	it.To = st.PartFor(it.DedupKey, it.DedupTTL, c.turn.Add(1))
}

// Close waits for the enqueues in flight to be written and makes later
// Enqueue calls send each task alone. It does not close the Redis client,
// which belongs to the caller. Closing is optional: a Client runs
// goroutines only while concurrent Enqueue calls are waiting for their
// shared round trip, and they exit as soon as none waits, so an unused or
// idle Client holds nothing. Close is for a program (or a test) that wants
// no goroutine of the Client's left once it returns.
func (c *Client) Close() error {
	c.batch.Close()
	return nil
}

// Enqueue adds a task with args to its queue, or to its queue's delayed set
// when WithProcessIn or WithProcessAt put it in the future. With
// WithDedupKey, an enqueue while the key lives adds nothing and returns the
// first task's ID with Duplicate set.
//
// A lone call is one round trip to Redis. Calls made while others on the
// same Client are in flight are group-committed: they wait for one of the
// round trips in flight to end, and then all that are waiting are sent as
// one pipeline, each still its own atomic enqueue with its own result. So
// concurrent producers need far fewer round trips and a lone producer
// waits for nothing. If ctx ends while the call waits, Enqueue returns
// ctx's error and nothing was enqueued; if it ends while the call's round
// trip is in flight, the task may have been enqueued, as with any Redis
// call cancelled midway.
func (c *Client) Enqueue(ctx context.Context, args TaskArgs, opts ...EnqueueOption) (*TaskInfo, error) {
	if args == nil {
		return nil, errors.New("chronos: enqueue: nil args")
	}
	kind := args.Kind()
	if kind == "" {
		return nil, fmt.Errorf("chronos: enqueue %T: empty kind", args)
	}
	var cfg enqueueConfig
	for _, o := range opts {
		o.applyEnqueue(&cfg)
	}
	payload, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("chronos: enqueue %s: encode args: %w", kind, err)
	}
	now := c.now()
	m, due := cfg.task.message(kind, payload, now)
	b, err := m.Encode()
	if err != nil {
		return nil, fmt.Errorf("chronos: enqueue %s: %w", kind, err)
	}
	it := rdb.EnqueueItem{Queue: m.Queue, Msg: b, ID: m.ID, Due: due, Now: now, DedupKey: cfg.task.dedupKey, DedupTTL: cfg.task.dedupTTL}
	st, err := c.store(ctx, m.Queue)
	if err == nil {
		c.to(st, &it)
		err = c.batch.Enqueue(ctx, &it)
	}
	if err == nil && rdb.IsWrongType(it.Err) {
		// The namespace was migrated since its layout was read: read it
		// again and enqueue where it now says, once.
		c.ns.Forget(st)
		if st, err = c.store(ctx, m.Queue); err == nil {
			c.to(st, &it)
			it.Err = nil
			err = c.batch.Enqueue(ctx, &it)
		}
	}
	if err == nil {
		err = it.Err
	}
	if err != nil {
		return nil, fmt.Errorf("chronos: enqueue %s: %w", kind, err)
	}
	info := &TaskInfo{ID: it.GotID, Kind: kind, Queue: m.Queue, MaxRetry: m.MaxRetry, ProcessAt: now, Duplicate: it.Duplicate}
	if due.After(now) {
		info.ProcessAt = due
	}
	return info, nil
}

// EnqueueMany enqueues every args with the same options in one round trip
// (a pipeline). Each task is enqueued atomically on its own, not the batch
// as a whole: the result has one TaskInfo per args, in order, nil where that
// task failed, and the error joins the failures.
func (c *Client) EnqueueMany(ctx context.Context, args []TaskArgs, opts ...EnqueueOption) ([]*TaskInfo, error) {
	var cfg enqueueConfig
	for _, o := range opts {
		o.applyEnqueue(&cfg)
	}
	now := c.now()
	items := make([]*rdb.EnqueueItem, len(args))
	infos := make([]*TaskInfo, len(args))
	var errs []error
	for i, a := range args {
		if a == nil || a.Kind() == "" {
			errs = append(errs, fmt.Errorf("chronos: enqueue #%d (%T): nil args or empty kind", i, a))
			continue
		}
		payload, err := json.Marshal(a)
		if err != nil {
			errs = append(errs, fmt.Errorf("chronos: enqueue #%d (%s): encode args: %w", i, a.Kind(), err))
			continue
		}
		m, due := cfg.task.message(a.Kind(), payload, now)
		b, err := m.Encode()
		if err != nil {
			errs = append(errs, fmt.Errorf("chronos: enqueue #%d: %w", i, err))
			continue
		}
		items[i] = &rdb.EnqueueItem{Queue: m.Queue, Msg: b, ID: m.ID, Due: due, Now: now, DedupKey: cfg.task.dedupKey, DedupTTL: cfg.task.dedupTTL}
		infos[i] = &TaskInfo{Kind: m.Kind, Queue: m.Queue, MaxRetry: m.MaxRetry, ProcessAt: now}
		if due.After(now) {
			infos[i].ProcessAt = due
		}
	}
	batch := make([]*rdb.EnqueueItem, 0, len(items))
	for _, it := range items {
		if it != nil {
			batch = append(batch, it)
		}
	}
	if err := c.enqueueMany(ctx, batch); err != nil {
		return make([]*TaskInfo, len(args)), fmt.Errorf("chronos: enqueue %d tasks: %w", len(args), err)
	}
	for i, it := range items {
		if it == nil {
			continue
		}
		if it.Err != nil {
			errs = append(errs, fmt.Errorf("chronos: enqueue #%d (%s): %w", i, infos[i].Kind, it.Err))
			infos[i] = nil
			continue
		}
		infos[i].ID, infos[i].Duplicate = it.GotID, it.Duplicate
	}
	return infos, errors.Join(errs...)
}

// enqueueMany enqueues items in one round trip, into the partitions of
// the namespace's layout. Items that met WRONGTYPE (the namespace was
// migrated since its layout was read) are enqueued again, once, where the
// layout read again says.
func (c *Client) enqueueMany(ctx context.Context, items []*rdb.EnqueueItem) error {
	if len(items) == 0 {
		return nil
	}
	st, err := c.store(ctx, items[0].Queue)
	if err != nil {
		return err
	}
	for _, it := range items {
		c.to(st, it)
	}
	if err := rdb.EnqueueItemsReplicated(ctx, st.C, items, c.repl); err != nil {
		return err
	}
	var again []*rdb.EnqueueItem
	for _, it := range items {
		if rdb.IsWrongType(it.Err) {
			again = append(again, it)
		}
	}
	if len(again) == 0 {
		return nil
	}
	c.ns.Forget(st)
	if st, err = c.store(ctx, items[0].Queue); err != nil {
		return err
	}
	for _, it := range again {
		it.Err = nil
		c.to(st, it)
	}
	return rdb.EnqueueItemsReplicated(ctx, st.C, again, c.repl)
}
