package rdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ErrNotFound is returned when a dead letter does not exist.
var ErrNotFound = errors.New("rdb: not found")

// deadPage reads up to limit dead letters of the partition, most recent
// death first, skipping offset, with their times of death: one round trip
// for the index, one for the letters. n is how many IDs the index gave,
// counting those deleted between the two reads, which are left out.
func (r *RDB) deadPage(ctx context.Context, offset, limit int) (out []DeadLetter, n int, err error) {
	zs, err := r.C.ZRevRangeWithScores(ctx, r.K.DeadIndex(), int64(offset), int64(offset+limit-1)).Result()
	if err != nil {
		return nil, 0, fmt.Errorf("rdb: list dead letters: %w", err)
	}
	if len(zs) == 0 {
		return nil, 0, nil
	}
	ids := make([]string, len(zs))
	for i, z := range zs {
		ids[i], _ = z.Member.(string)
	}
	vals, err := r.C.HMGet(ctx, r.K.Dead(), ids...).Result()
	if err != nil {
		return nil, 0, fmt.Errorf("rdb: list dead letters: %w", err)
	}
	out = make([]DeadLetter, 0, len(vals))
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue // deleted between the two reads
		}
		m, err := Decode([]byte(s))
		if err != nil {
			return nil, 0, fmt.Errorf("rdb: dead letter %s: %w", ids[i], err)
		}
		out = append(out, DeadLetter{Message: m, Partition: r.Part, at: zs[i].Score})
	}
	return out, len(zs), nil
}

// RequeueDead moves dead letter m.ID back to the stream of m.Queue as m.
func (r *RDB) RequeueDead(ctx context.Context, m *Message) error {
	b, err := m.Encode()
	if err != nil {
		return err
	}
	keys := []string{r.K.Dead(), r.K.DeadIndex(), r.K.Stream(m.Queue)}
	n, err := requeueDeadScript.Run(ctx, r.C, keys, m.ID, b).Int64()
	if err != nil {
		return fmt.Errorf("rdb: requeue dead letter %s: %w", m.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("rdb: requeue dead letter %s: %w", m.ID, ErrNotFound)
	}
	return nil
}

// QueueStats are the sizes of one queue.
type QueueStats struct {
	Stream  int64 // entries in the stream: ready plus running
	Pending int64 // entries delivered and not yet acknowledged (running)
	Delayed int64 // delayed tasks and retries
	// OldestPending is the entry ID of the oldest pending entry ("" if none).
	OldestPending string
	Paused        bool
}

// oldestReadyScript returns the ID of the oldest entry of a queue stream
// that no worker has taken yet: the first one after the consumer group's
// last-delivered ID (every entry, if the group does not exist yet), or
// false if there is none. Running tasks are not ready: they sit at or
// before that ID, in the group's pending list.
//
//	KEYS[1] stream; ARGV[1] group name
var oldestReadyScript = redis.NewScript(`
local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
if type(groups) == 'table' and groups.err then return false end
local last = '0-0'
for _, g in ipairs(groups) do
  local f = {}
  for k = 1, #g, 2 do f[g[k]] = g[k + 1] end
  if f['name'] == ARGV[1] then last = f['last-delivered-id'] end
end
local e = redis.call('XRANGE', KEYS[1], '(' .. last, '+', 'COUNT', 1)
if #e == 0 then return false end
return e[1][1]
`)
