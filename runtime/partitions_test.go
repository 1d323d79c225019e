package chronos_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// parts reads a namespace's queue keys in every partition, in the layout
// its Clients and Servers read from Redis, for tests that check what Redis
// holds.
type parts struct {
	t  testing.TB
	c  redis.UniversalClient
	st *rdb.Store
}

// partsOf returns the partitions of namespace ns ("" for the default).
func partsOf(t testing.TB, c redis.UniversalClient, ns string) *parts {
	t.Helper()
	st, err := rdb.NewNamespace(c, ns, keyspace.ResolveOptions{ReadOnly: true}).Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &parts{t: t, c: c, st: st}
}

// sum adds up an integer reply over the partitions.
func (p *parts) sum(cmd func(ctx context.Context, k rdb.Keys) *redis.IntCmd) int64 {
	n := int64(0)
	for _, r := range p.st.Parts {
		n += cmd(context.Background(), r.K).Val()
	}
	return n
}

// xlen is the length of queue's streams.
func (p *parts) xlen(queue string) int64 {
	return p.sum(func(ctx context.Context, k rdb.Keys) *redis.IntCmd { return p.c.XLen(ctx, k.Stream(queue)) })
}

// delayed is the number of delayed tasks of queue.
func (p *parts) delayed(queue string) int64 {
	return p.sum(func(ctx context.Context, k rdb.Keys) *redis.IntCmd { return p.c.ZCard(ctx, k.Delayed(queue)) })
}

// runs is the number of run records of kind.
func (p *parts) runs(kind string) int64 {
	return p.sum(func(ctx context.Context, k rdb.Keys) *redis.IntCmd { return p.c.XLen(ctx, k.Runs(kind)) })
}

// pending is the number of entries of queue taken by a worker and not
// acknowledged.
func (p *parts) pending(queue string) int64 {
	n := int64(0)
	for _, r := range p.st.Parts {
		if x, err := p.c.XPending(context.Background(), r.K.Stream(queue), rdb.Group).Result(); err == nil {
			n += x.Count
		}
	}
	return n
}

// consumers returns the names of the consumers of queue's group, in any
// partition.
func (p *parts) consumers(queue string) map[string]bool {
	out := map[string]bool{}
	for _, r := range p.st.Parts {
		for _, c := range p.c.XInfoConsumers(context.Background(), r.K.Stream(queue), rdb.Group).Val() {
			out[c.Name] = true
		}
	}
	return out
}

// holding returns the keys of the partition whose stream of queue holds
// task id; the test fails if none does.
func (p *parts) holding(queue, id string) rdb.Keys {
	p.t.Helper()
	for _, r := range p.st.Parts {
		xs, err := p.c.XRange(context.Background(), r.K.Stream(queue), "-", "+").Result()
		if err != nil {
			p.t.Fatal(err)
		}
		for _, x := range xs {
			s, _ := x.Values["m"].(string)
			if m, err := rdb.Decode([]byte(s)); err == nil && m.ID == id {
				return r.K
			}
		}
	}
	p.t.Fatalf("task %s is in no stream of queue %q", id, queue)
	return rdb.Keys{}
}

// dedup is the claim key of dedup key key, in the partition of the key.
func (p *parts) dedup(key string) string {
	return p.st.Parts[p.st.Layout.ForDedup(key)].K.Dedup(key)
}
