package rdb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/leader"
)

// ErrNotReplicated is wrapped by an item's error when fewer replicas than
// Replication asks for acknowledged its enqueue in time. The task was
// enqueued on the master, but a failover before it reaches a replica would
// lose it.
var ErrNotReplicated = errors.New("enqueue not acknowledged by enough replicas")

// Replication makes enqueues wait for replicas: the pipeline that carries
// a batch to a master ends with WAIT, so an enqueue is acknowledged only
// once the master's replicas have it, and a failover that promotes one of
// them keeps it. WAIT counts the writes of its own connection on its own
// server, so on a cluster the items are grouped by the master of their
// partition and each group is one pipeline on that master's own client
// (leader.Primary), the groups in parallel. A master is asked for no more
// replicas than it has been seen to have connected (leader.ReplicaGuard,
// one per master): a promoted replica whose old master is not back yet,
// or a server without replicas, does not fail every enqueue.
//
// The zero value and nil wait for nothing. It is safe for concurrent use.
type Replication struct {
	Want    int           // replicas each enqueue must reach
	Timeout time.Duration // bound of each WAIT

	mu     sync.Mutex
	guards map[string]*leader.ReplicaGuard // by master address
}

// waits reports whether w asks for replicas.
func (w *Replication) waits() bool { return w != nil && w.Want > 0 }

func (w *Replication) guard(addr string) *leader.ReplicaGuard {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.guards == nil {
		w.guards = map[string]*leader.ReplicaGuard{}
	}
	g, ok := w.guards[addr]
	if !ok {
		g = leader.NewReplicaGuard(w.Want)
		w.guards[addr] = g
	}
	return g
}

// EnqueueItemsReplicated is EnqueueItems that waits for w's replicas (see
// Replication): an item the replicas did not acknowledge in time keeps its
// GotID and has an Err wrapping ErrNotReplicated.
func EnqueueItemsReplicated(ctx context.Context, c redis.UniversalClient, items []*EnqueueItem, w *Replication) error {
	if !w.waits() {
		return EnqueueItems(ctx, c, items)
	}
	type group struct {
		node  redis.UniversalClient
		items []*EnqueueItem
	}
	var groups []*group
	for _, it := range items {
		node, err := leader.Primary(ctx, c, it.To.keysOf(it.Queue).stream)
		if err != nil {
			it.Err = fmt.Errorf("rdb: enqueue to %q: %w", it.Queue, err)
			continue
		}
		var g *group
		for _, o := range groups {
			if o.node == node {
				g = o
				break
			}
		}
		if g == nil {
			g = &group{node: node}
			groups = append(groups, g)
		}
		g.items = append(g.items, it)
	}
	if len(groups) == 1 {
		enqueueOnMaster(ctx, c, groups[0].node, groups[0].items, w)
		return nil
	}
	var wg sync.WaitGroup
	for _, g := range groups {
		wg.Go(func() { enqueueOnMaster(ctx, c, g.node, g.items, w) })
	}
	wg.Wait()
	return nil
}

// enqueueOnMaster enqueues items, all of whose partitions node serves, in
// a pipeline that ends with WAIT and INFO replication; c is the client the
// caller gave (a cluster client reloads its slot map after errors of
// node's). Items that met NOSCRIPT are sent again, with a WAIT of their
// own, once the script is loaded.
func enqueueOnMaster(ctx context.Context, c, node redis.UniversalClient, items []*EnqueueItem, w *Replication) {
	addr := ""
	if n, ok := node.(*redis.Client); ok {
		addr = n.Options().Addr
	}
	g := w.guard(addr)
	if !g.Observed() {
		// Learn the master's replicas before its first write, or that
		// write would be asked for none.
		if info, err := node.Info(ctx, "replication").Result(); err == nil {
			g.Observe(info)
		}
	}
	timeout := max(w.Timeout, time.Millisecond)
	todo := items
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt > 0 {
			if err := enqueueScript.Load(ctx, node).Err(); err != nil {
				leader.Reload(c, err)
				for _, it := range todo {
					it.Err = fmt.Errorf("rdb: load enqueue script: %w", err)
				}
				return
			}
		}
		required := g.Required()
		cmds := make([]redis.Cmder, len(todo))
		var wait *redis.Cmd
		var info *redis.StringCmd
		_, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, it := range todo {
				cmds[i] = enqueueCmd(ctx, it)
				_ = p.Process(ctx, cmds[i])
			}
			if required > 0 {
				wait = p.Do(ctx, "WAIT", required, timeout.Milliseconds())
			}
			info = p.Info(ctx, "replication")
			return nil
		})
		if node != c {
			leader.Reload(c, err)
		}
		if v, ierr := info.Result(); ierr == nil {
			g.Observe(v)
		}
		var acked int64
		if wait != nil {
			acked, _ = wait.Int64()
		}
		var again []*EnqueueItem
		for i, it := range todo {
			if err := cmds[i].Err(); attempt < 2 && isNoScript(err) {
				again = append(again, it)
				continue
			}
			enqueueResult(it, cmds[i])
			if it.Err == nil && acked < int64(required) {
				it.Err = fmt.Errorf("rdb: enqueue to %q: %w: %d of %d within %v", it.Queue, ErrNotReplicated, acked, required, timeout)
			}
		}
		todo = again
	}
}

// enqueueCmd is the command that enqueues it: a bare XADD, or the enqueue
// script by its hash.
func enqueueCmd(ctx context.Context, it *EnqueueItem) redis.Cmder {
	if it.direct() {
		return xaddCmd(ctx, it)
	}
	keys, args := enqueueCall(it)
	c := make([]any, 0, 3+len(keys)+len(args))
	c = append(c, "evalsha", enqueueScript.Hash(), len(keys))
	for _, k := range keys {
		c = append(c, k)
	}
	return redis.NewCmd(ctx, append(c, args...)...)
}
