package rdb

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// This file holds the read-only operations that browse one partition: page
// through its streams and delayed sets, find a delayed task, count dead
// letters by queue; store_browse.go combines them over every partition.
// Operators' tools (the Inspector, the console) use them; no worker path
// does.

// scanKeys returns up to limit keys matching pattern, read with SCAN (on
// every primary of a Redis Cluster), so Redis is never blocked by a KEYS.
// The order is unspecified and a key may be missing if it was created
// during the scan.
func scanKeys(ctx context.Context, c redis.UniversalClient, pattern string, limit int) ([]string, error) {
	var (
		mu  sync.Mutex
		out []string
	)
	scan := func(ctx context.Context, c redis.Cmdable) error {
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, pattern, 1000).Result()
			if err != nil {
				return err
			}
			mu.Lock()
			out = append(out, keys...)
			full := len(out) >= limit
			mu.Unlock()
			if next == 0 || full {
				return nil
			}
			cursor = next
		}
	}
	var err error
	if cc, ok := c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	} else {
		err = scan(ctx, c)
	}
	if err != nil {
		return nil, fmt.Errorf("rdb: scan %s: %w", pattern, err)
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// LastDelivered returns the last-delivered entry ID of queue's consumer
// group: the entries after it are ready, those up to it were taken by a
// worker (acknowledged entries are deleted, so the ones left are running).
// It returns "0-0" when the stream or the group does not exist yet.
func (r *RDB) LastDelivered(ctx context.Context, queue string) (string, error) {
	groups, err := r.C.XInfoGroups(ctx, r.keysOf(queue).stream).Result()
	if err != nil {
		if strings.Contains(err.Error(), "no such key") || IsNoGroup(err) {
			return "0-0", nil
		}
		return "", fmt.Errorf("rdb: consumer group of %q: %w", queue, err)
	}
	for _, g := range groups {
		if g.Name == Group {
			return g.LastDeliveredID, nil
		}
	}
	return "0-0", nil
}

// StreamRange returns up to count entries of queue's stream from start to
// end, in XRANGE syntax ("-", "+", "(id" for exclusive bounds), oldest
// first.
func (r *RDB) StreamRange(ctx context.Context, queue, start, end string, count int) ([]Entry, error) {
	msgs, err := r.C.XRangeN(ctx, r.keysOf(queue).stream, start, end, int64(count)).Result()
	if err != nil {
		return nil, fmt.Errorf("rdb: read stream of %q: %w", queue, err)
	}
	out := make([]Entry, len(msgs))
	for i, m := range msgs {
		s, _ := m.Values["m"].(string)
		out[i] = Entry{Partition: r.Part, Queue: queue, ID: m.ID, Msg: s}
	}
	return out, nil
}

// DelayedTask is one member of a delayed set: the encoded task and when it
// is due.
type DelayedTask struct {
	Msg       string
	Due       time.Time
	Partition int
}

// DelayedRange returns up to count delayed tasks of queue, earliest due
// first, skipping offset.
func (r *RDB) DelayedRange(ctx context.Context, queue string, offset, count int) ([]DelayedTask, error) {
	zs, err := r.C.ZRangeWithScores(ctx, r.keysOf(queue).delayed, int64(offset), int64(offset+count-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("rdb: read delayed tasks of %q: %w", queue, err)
	}
	out := make([]DelayedTask, len(zs))
	for i, z := range zs {
		s, _ := z.Member.(string)
		out[i] = DelayedTask{Msg: s, Due: time.UnixMilli(int64(z.Score)), Partition: r.Part}
	}
	return out, nil
}

// FindDelayed returns the delayed task of queue whose ID is id, matching
// the encoded members with ZSCAN so that no member is decoded in vain. It
// returns an error wrapping ErrNotFound if there is none.
func (r *RDB) FindDelayed(ctx context.Context, queue, id string) (DelayedTask, error) {
	key := r.keysOf(queue).delayed
	pattern := `*"id":"` + globEscape(id) + `"*`
	var cursor uint64
	for {
		kv, next, err := r.C.ZScan(ctx, key, cursor, pattern, 500).Result()
		if err != nil {
			return DelayedTask{}, fmt.Errorf("rdb: find delayed task %s in %q: %w", id, queue, err)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m, err := Decode([]byte(kv[i]))
			if err != nil || m.ID != id {
				continue
			}
			score, _ := strconv.ParseFloat(kv[i+1], 64)
			return DelayedTask{Msg: kv[i], Due: time.UnixMilli(int64(score)), Partition: r.Part}, nil
		}
		if next == 0 {
			return DelayedTask{}, fmt.Errorf("rdb: delayed task %s in %q: %w", id, queue, ErrNotFound)
		}
		cursor = next
	}
}

// deadCountsByQueue adds to out the number of dead letters of each queue,
// reading the dead-letter hash with HSCAN. It costs one pass over every
// dead letter (at most ServerConfig.DeadRetention of them).
func (r *RDB) deadCountsByQueue(ctx context.Context, out map[string]int) error {
	var cursor uint64
	for {
		kv, next, err := r.C.HScan(ctx, r.K.Dead(), cursor, "", 500).Result()
		if err != nil {
			return fmt.Errorf("rdb: count dead letters by queue: %w", err)
		}
		for i := 1; i < len(kv); i += 2 {
			var m struct {
				Queue string `json:"queue"`
			}
			if json.Unmarshal([]byte(kv[i]), &m) == nil {
				out[m.Queue]++
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}
