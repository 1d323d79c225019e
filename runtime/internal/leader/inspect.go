package leader

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Lease is the state of one election as Redis holds it, for operators
// (the CLI's "leader" command, the console).
type Lease struct {
	// Held is false when no instance holds the lease.
	Held bool
	// Token, Epoch and Instance describe the holder's term.
	Token    string
	Epoch    int64
	Instance string
	// Since is when the holder's term began, as the holder's clock said;
	// zero when not recorded (a term of a version before the record).
	Since time.Time
	// Remaining is how long the lease lasts without a renewal.
	Remaining time.Duration
	// LastEpoch is the latest epoch ever issued in the election.
	LastEpoch int64
}

// Inspect reads the lease of election k in one round trip. It changes
// nothing.
func Inspect(ctx context.Context, client redis.UniversalClient, k Keys) (Lease, error) {
	return inspect(ctx, client, k)
}

// InspectAll reads the leases of several elections (the partitions of a
// namespace) in one pipeline. It changes nothing.
func InspectAll(ctx context.Context, client redis.UniversalClient, ks []Keys) ([]Lease, error) {
	cmds := make([]leaseCmds, len(ks))
	_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range ks {
			cmds[i] = queueInspect(ctx, p, k)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("leader: inspect %d leases: %w", len(ks), err)
	}
	out := make([]Lease, len(ks))
	for i, c := range cmds {
		out[i] = c.lease()
	}
	return out, nil
}

func inspect(ctx context.Context, client redis.UniversalClient, k Keys) (Lease, error) {
	var c leaseCmds
	_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		c = queueInspect(ctx, p, k)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return Lease{}, fmt.Errorf("leader: inspect %s: %w", k.Lock, err)
	}
	return c.lease(), nil
}

// leaseCmds are the reads of one lease in a pipeline.
type leaseCmds struct {
	get, epoch, since *redis.StringCmd
	pttl              *redis.DurationCmd
}

func queueInspect(ctx context.Context, p redis.Pipeliner, k Keys) leaseCmds {
	return leaseCmds{get: p.Get(ctx, k.Lock), pttl: p.PTTL(ctx, k.Lock), epoch: p.Get(ctx, k.Epoch), since: p.Get(ctx, k.Since)}
}

func (c leaseCmds) lease() Lease {
	var l Lease
	l.LastEpoch, _ = c.epoch.Int64()
	tok, err := c.get.Result()
	if err != nil {
		return l
	}
	l.Held, l.Token = true, tok
	l.Epoch, l.Instance, _, _ = parseToken(tok)
	if d := c.pttl.Val(); d > 0 {
		l.Remaining = d
	}
	// "<epoch>:<unix ms>", trusted only for the holder's epoch.
	if e, ms, ok := strings.Cut(c.since.Val(), ":"); ok && e == strconv.FormatInt(l.Epoch, 10) {
		if n, err := strconv.ParseInt(ms, 10, 64); err == nil && n > 0 {
			l.Since = time.UnixMilli(n)
		}
	}
	return l
}

// Holders returns the instance holding each election's lease ("" when
// free), in one pipeline of GETs: what Assign needs.
func Holders(ctx context.Context, client redis.UniversalClient, ks []Keys) ([]string, error) {
	cmds := make([]*redis.StringCmd, len(ks))
	_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range ks {
			cmds[i] = p.Get(ctx, k.Lock)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("leader: read %d leases: %w", len(ks), err)
	}
	out := make([]string, len(ks))
	for i, c := range cmds {
		if tok, err := c.Result(); err == nil {
			_, out[i], _, _ = parseToken(tok)
		}
	}
	return out, nil
}
