package rdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Blocker holds a dedicated connection for blocking reads, so that another
// goroutine can end a read at once with CLIENT UNBLOCK instead of waiting
// for its timeout: that is what makes Server.Shutdown prompt. On Redis
// Cluster the connection goes to the master of the namespace's slot (after
// a failover the read fails, Reset drops the connection and the next Cmd
// finds the new master). Other clients fall back to the shared pool, and
// Unblock then does nothing; the read ends at its timeout.
type Blocker struct {
	r *RDB

	mu   sync.Mutex
	conn *redis.Conn
	id   int64         // CLIENT ID of conn; 0 when unknown
	node *redis.Client // on a cluster, the node conn is to: CLIENT UNBLOCK goes there
}

// NewBlocker returns a Blocker over r's client.
func NewBlocker(r *RDB) *Blocker { return &Blocker{r: r} }

// Cmd returns the connection to run the next blocking read on. After a
// failed read, call Reset so that the next Cmd dials afresh.
func (b *Blocker) Cmd(ctx context.Context) redis.Cmdable {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn == nil {
		switch c := b.r.C.(type) {
		case *redis.ClusterClient:
			m, err := c.MasterForKey(ctx, b.r.K.Dead())
			if err != nil {
				return b.r.C
			}
			b.conn, b.node = m.Conn(), m
		case interface{ Conn() *redis.Conn }:
			b.conn = c.Conn()
		default:
			return b.r.C
		}
	}
	if b.id == 0 {
		id, err := b.conn.ClientID(ctx).Result()
		if err != nil {
			return b.conn // the read will fail too, and the caller resets
		}
		b.id = id
	}
	return b.conn
}

// Reset drops the dedicated connection after an error. On a cluster, an
// error that says the node may no longer serve the partition (the
// connection failed or timed out) makes the cluster client reload its slot
// map, so that the next connection goes to the master that serves it now:
// the dedicated connection is a node's own, which the cluster client's
// hooks (ReloadOnFailure) do not see.
func (b *Blocker) Reset(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn != nil {
		_ = b.conn.Close()
	}
	b.conn, b.id, b.node = nil, 0, nil
	if cc, ok := b.r.C.(*redis.ClusterClient); ok && staleMap(err) {
		cc.ReloadState(context.Background())
	}
}

// Unblock ends a blocking read in progress on the dedicated connection, if
// any; the read returns as if it had timed out.
func (b *Blocker) Unblock(ctx context.Context) {
	b.mu.Lock()
	id, node := b.id, b.node
	b.mu.Unlock()
	if id == 0 {
		return
	}
	if node != nil {
		// CLIENT UNBLOCK has no key, so it must go to the node holding the
		// connection (after a failover, no longer the partition's master).
		_ = node.ClientUnblock(ctx, id).Err()
		return
	}
	_ = b.r.C.ClientUnblock(ctx, id).Err()
}

// Close releases the dedicated connection.
func (b *Blocker) Close() { b.Reset(nil) }

// abort closes the dedicated connection under a read in progress, which
// then fails; the reader's Reset does the rest.
func (b *Blocker) abort() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn != nil {
		_ = b.conn.Close()
	}
}

// Blockers are a fetcher's blocking reads over every partition of a Store
// (docs/queue.md, "Wake-ups"). Off a cluster they are one dedicated
// connection and one XREADGROUP over every partition's streams, so an idle
// server of a partitioned namespace waits exactly as one of a single-tag
// namespace does. On a Redis Cluster one command cannot read streams of
// different slots (CROSSSLOT), even when one master owns them, so there is
// one dedicated connection per partition; Read blocks on all of them at
// once and, as soon as one returns, ends the others with CLIENT UNBLOCK.
// The reads are Read's own goroutines: it returns only once every one of
// them has.
type Blockers struct {
	s  *Store
	bs []*Blocker // one off a cluster, else one per partition
}

// NewBlockers returns the Blockers of s. They dial nothing until the first
// Read.
func NewBlockers(s *Store) *Blockers {
	b := &Blockers{s: s}
	if s.combined() {
		b.bs = []*Blocker{NewBlocker(s.Parts[0])}
		return b
	}
	for _, r := range s.Parts {
		b.bs = append(b.bs, NewBlocker(r))
	}
	return b
}

// Read waits up to block for new entries on any of streams and returns up
// to n of each stream that has some. It returns no entries and no error
// when block passes without any. A failed read's connection is dropped, so
// the next Read dials afresh (after a failover, to the new master).
func (b *Blockers) Read(ctx context.Context, consumer string, streams []PartQueue, n int, block time.Duration) ([]Entry, error) {
	if len(streams) == 0 {
		return nil, nil
	}
	if len(b.bs) == 1 {
		bl := b.bs[0]
		es, err := b.s.blockRead(ctx, bl.Cmd(ctx), consumer, streams, n, block)
		if err != nil {
			bl.Reset(err)
		}
		return es, err
	}
	var byPart [][]PartQueue // in the order of streams' partitions
	for _, pq := range streams {
		i := slices.IndexFunc(byPart, func(g []PartQueue) bool { return g[0].Part == pq.Part })
		if i < 0 {
			byPart = append(byPart, nil)
			i = len(byPart) - 1
		}
		byPart[i] = append(byPart[i], pq)
	}
	if len(byPart) == 1 {
		bl := b.bs[byPart[0][0].Part]
		es, err := b.s.blockRead(ctx, bl.Cmd(ctx), consumer, byPart[0], n, block)
		if err != nil {
			bl.Reset(err)
		}
		return es, err
	}
	type result struct {
		es  []Entry
		err error
	}
	res := make([]result, len(byPart))
	done := make(chan int, len(byPart))
	for i, g := range byPart {
		go func() {
			bl := b.bs[g[0].Part]
			es, err := b.s.blockRead(ctx, bl.Cmd(ctx), consumer, g, n, block)
			if err != nil {
				bl.Reset(err)
			}
			res[i] = result{es, err}
			done <- i
		}()
	}
	running := make([]bool, len(byPart))
	for i := range running {
		running[i] = true
	}
	unblock := func() {
		var bs []*Blocker
		for i, g := range byPart {
			if running[i] {
				bs = append(bs, b.bs[g[0].Part])
			}
		}
		unblockAll(ctx, b.s.C, bs)
	}
	var again <-chan time.Time // after the first unblock: the reads that began after it
	// A read on a node that hangs (a frozen host) would keep the round
	// until go-redis's own deadline, block + 10 s; past block + a second,
	// its connection is closed instead, which ends it with an error.
	late := time.NewTimer(block + time.Second)
	defer late.Stop()
	for left := len(byPart); left > 0; {
		select {
		case <-late.C:
			for i, g := range byPart {
				if running[i] {
					b.bs[g[0].Part].abort()
				}
			}
		case i := <-done:
			left--
			running[i] = false
			if again == nil && left > 0 && (len(res[i].es) > 0 || res[i].err != nil) {
				unblock()
				t := time.NewTicker(20 * time.Millisecond)
				defer t.Stop()
				again = t.C
			}
		case <-again:
			unblock()
		}
	}
	var (
		out  []Entry
		errs []error
	)
	for _, r := range res {
		out = append(out, r.es...)
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	return out, errors.Join(errs...)
}

// Unblock ends the blocking reads in progress, if any; they return as if
// they had timed out.
func (b *Blockers) Unblock(ctx context.Context) { unblockAll(ctx, b.s.C, b.bs) }

// Close releases the dedicated connections.
func (b *Blockers) Close() {
	for _, bl := range b.bs {
		bl.Close()
	}
}

// unblockAll ends the blocking reads of bs: one pipeline of CLIENT UNBLOCK
// per node holding some of their connections.
func unblockAll(ctx context.Context, c redis.UniversalClient, bs []*Blocker) {
	if len(bs) == 1 {
		bs[0].Unblock(ctx)
		return
	}
	if _, ok := c.(*redis.ClusterClient); !ok {
		for _, bl := range bs {
			bl.Unblock(ctx)
		}
		return
	}
	byNode := map[*redis.Client][]int64{}
	for _, bl := range bs {
		bl.mu.Lock()
		id, node := bl.id, bl.node
		bl.mu.Unlock()
		if id == 0 || node == nil {
			continue
		}
		byNode[node] = append(byNode[node], id)
	}
	for m, ids := range byNode {
		_, _ = m.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, id := range ids {
				p.ClientUnblock(ctx, id)
			}
			return nil
		})
	}
}

// blockRead is one XREADGROUP BLOCK on c over streams: on a cluster,
// streams of one partition; off a cluster, of any (slots do not matter on
// a single server).
func (s *Store) blockRead(ctx context.Context, c redis.Cmdable, consumer string, streams []PartQueue, n int, block time.Duration) ([]Entry, error) {
	keys := make([]string, 0, 2*len(streams))
	for _, pq := range streams {
		keys = append(keys, s.Parts[pq.Part].keysOf(pq.Queue).stream)
	}
	for range streams {
		keys = append(keys, ">")
	}
	if block < time.Millisecond {
		block = time.Millisecond
	}
	res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: Group, Consumer: consumer, Streams: keys, Count: int64(n), Block: block,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rdb: blocking fetch: %w", err)
	}
	var out []Entry
	for _, st := range res {
		i := slices.Index(keys[:len(streams)], st.Stream)
		if i < 0 {
			return out, fmt.Errorf("rdb: blocking fetch: reply for unknown stream %q", st.Stream)
		}
		for _, m := range st.Messages {
			msg, _ := m.Values["m"].(string)
			out = append(out, Entry{Partition: streams[i].Part, Queue: streams[i].Queue, ID: m.ID, Msg: msg})
		}
	}
	return out, nil
}
