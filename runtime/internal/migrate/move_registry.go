package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// This file moves the scheduler's keys: overlap markers, schedules with
// their history, the indexes, requests, the change counter and the leader
// epoch. Each mover writes a batch into the partitions, then deletes it
// from layout 1 (package doc).

// reg returns the registry keys of partition p.
func (m *migration) reg(p int) schedstore.RegistryKeys {
	return schedstore.RegistryKeysAt(m.to.Partition(p))
}

// queue returns the queue keys of partition p.
func (m *migration) queue(p int) rdb.Keys { return rdb.KeysAt(m.to.Partition(p)) }

// ttlArg is a PTTL reply as a TTL to set again: 0 for none.
func ttlArg(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return max(d.Milliseconds(), 1)
}

// deleteKeys deletes keys of the layout-1 tag (one slot) in one round trip.
func (m *migration) deleteKeys(ctx context.Context, what string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if err := m.c.Del(ctx, keys...).Err(); err != nil {
		return fmt.Errorf("migrate: delete %d layout-1 keys of %s: %w", len(keys), what, err)
	}
	return m.step(what + ": deleted")
}

// moveOverlap moves each overlap marker into its schedule's partition.
func (m *migration) moveOverlap(ctx context.Context, in *inventory) error {
	if len(in.overlap) == 0 {
		return nil
	}
	known := map[string]bool{}
	for _, id := range in.scheds {
		known[id] = true
	}
	markers := make([]string, 0, len(in.overlap))
	for mk := range in.overlap {
		markers = append(markers, mk)
	}
	slices.Sort(markers)
	q := m.old.q
	for batch := range slices.Chunk(markers, m.o.Batch) {
		type read struct {
			active         *redis.StringSliceCmd
			buffer, wheres *redis.MapStringStringCmd
		}
		reads := make([]read, len(batch))
		if _, err := m.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, mk := range batch {
				reads[i] = read{p.SMembers(ctx, q.OverlapActive(mk)), p.HGetAll(ctx, q.OverlapBuffer(mk)), p.HGetAll(ctx, q.OverlapWhere(mk))}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("migrate: read %d overlap markers: %w", len(batch), err)
		}
		calls := make([]*call, len(batch))
		var del []string
		for i, mk := range batch {
			k := m.queue(m.to.ForSchedule(scheduleOfMarker(mk, known)))
			active, buffer, wheres := reads[i].active.Val(), reads[i].buffer.Val(), reads[i].wheres.Val()
			args := []any{len(active), 2 * len(buffer), 2 * len(wheres)}
			for _, a := range active {
				args = append(args, a)
			}
			args = appendMap(args, buffer)
			args = appendMap(args, wheres)
			calls[i] = &call{script: overlapScript, keys: []string{k.OverlapActive(mk), k.OverlapBuffer(mk), k.OverlapWhere(mk)}, args: args}
			del = append(del, q.OverlapActive(mk), q.OverlapBuffer(mk), q.OverlapWhere(mk))
		}
		if err := runCalls(ctx, m.c, calls); err != nil {
			return fmt.Errorf("migrate: copy %d overlap markers: %w", len(batch), err)
		}
		if err := m.step("overlap markers: copied"); err != nil {
			return err
		}
		if err := m.deleteKeys(ctx, "overlap markers", del); err != nil {
			return err
		}
		m.rep.Moved[KindOverlap] += len(batch)
	}
	return nil
}

// appendMap appends the fields and values of h to args, in field order.
func appendMap(args []any, h map[string]string) []any {
	fields := make([]string, 0, len(h))
	for f := range h {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	for _, f := range fields {
		args = append(args, f, h[f])
	}
	return args
}

// moveSchedules moves each schedule's hash (definition, trigger state,
// pauses) and history into its partition, as they are, TTLs included.
func (m *migration) moveSchedules(ctx context.Context, in *inventory) error {
	r := m.old.reg
	for batch := range slices.Chunk(in.scheds, m.o.Batch) {
		type read struct {
			hash          *redis.MapStringStringCmd
			hist          *redis.StringSliceCmd
			hashTTL, hTTL *redis.DurationCmd
		}
		reads := make([]read, len(batch))
		if _, err := m.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, id := range batch {
				reads[i] = read{p.HGetAll(ctx, r.Sched(id)), p.LRange(ctx, r.History(id), 0, -1), p.PTTL(ctx, r.Sched(id)), p.PTTL(ctx, r.History(id))}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("migrate: read %d schedules: %w", len(batch), err)
		}
		var (
			calls        []*call
			del          []string
			scheds, recs int
		)
		for i, id := range batch {
			hash, hist := reads[i].hash.Val(), reads[i].hist.Val()
			del = append(del, r.Sched(id), r.History(id))
			if len(hash) == 0 && len(hist) == 0 {
				continue
			}
			if len(hash) > 0 {
				scheds++
			}
			recs += len(hist)
			args := []any{ttlArg(reads[i].hashTTL.Val()), ttlArg(reads[i].hTTL.Val()), len(hash)}
			args = appendMap(args, hash)
			for _, h := range slices.Backward(hist) {
				args = append(args, h)
			}
			to := m.reg(m.to.ForSchedule(id))
			calls = append(calls, &call{script: replaceScript, keys: []string{to.Sched(id), to.History(id)}, args: args})
		}
		if err := runCalls(ctx, m.c, calls); err != nil {
			return fmt.Errorf("migrate: copy %d schedules: %w", len(calls), err)
		}
		if err := m.step("schedules: copied"); err != nil {
			return err
		}
		if err := m.deleteKeys(ctx, "schedules", del); err != nil {
			return err
		}
		m.rep.Moved[KindSchedules] += scheds
		m.rep.Moved[KindHistory] += recs
	}
	return nil
}

// moveIndexes splits the schedules and changed indexes over the
// partitions, by schedule, with their scores.
func (m *migration) moveIndexes(ctx context.Context, in *inventory) error {
	r := m.old.reg
	for _, ix := range []struct {
		has  bool
		from string
		to   func(schedstore.RegistryKeys) string
	}{
		{in.schedIndex, r.Schedules, func(k schedstore.RegistryKeys) string { return k.Schedules }},
		{in.changed, r.Changed, func(k schedstore.RegistryKeys) string { return k.Changed }},
	} {
		if !ix.has {
			continue
		}
		const chunk = 1000
		for start := int64(0); ; start += chunk {
			zs, err := m.c.ZRangeWithScores(ctx, ix.from, start, start+chunk-1).Result()
			if err != nil {
				return fmt.Errorf("migrate: read %s: %w", ix.from, err)
			}
			if len(zs) == 0 {
				break
			}
			if _, err := m.c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, z := range zs {
					id, _ := z.Member.(string)
					p.ZAdd(ctx, ix.to(m.reg(m.to.ForSchedule(id))), z)
				}
				return nil
			}); err != nil {
				return fmt.Errorf("migrate: copy %d entries of %s: %w", len(zs), ix.from, err)
			}
			m.rep.Moved[KindIndexes] += len(zs)
			if err := m.step("indexes: copied"); err != nil {
				return err
			}
		}
		if err := m.deleteKeys(ctx, "indexes", []string{ix.from}); err != nil {
			return err
		}
	}
	return nil
}

// moveRequests moves each pending operator request into its schedule's
// partition.
func (m *migration) moveRequests(ctx context.Context, in *inventory) error {
	if !in.requests {
		return nil
	}
	r := m.old.reg
	data, err := m.c.HGetAll(ctx, r.RequestData).Result()
	if err != nil {
		return fmt.Errorf("migrate: read requests: %w", err)
	}
	index, err := m.c.ZRangeWithScores(ctx, r.Requests, 0, -1).Result()
	if err != nil {
		return fmt.Errorf("migrate: read requests: %w", err)
	}
	score := map[string]float64{}
	for _, z := range index {
		id, _ := z.Member.(string)
		score[id] = z.Score
	}
	if _, err := m.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for id, js := range data {
			var req schedstore.Request
			_ = json.Unmarshal([]byte(js), &req) // unreadable: partition 0, as it would be read there
			to := m.reg(m.to.ForSchedule(req.Schedule))
			if req.Schedule == "" {
				to = m.reg(0)
			}
			p.HSet(ctx, to.RequestData, id, js)
			if sc, ok := score[id]; ok {
				p.ZAdd(ctx, to.Requests, redis.Z{Score: sc, Member: id})
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("migrate: copy %d requests: %w", len(data), err)
	}
	if err := m.step("requests: copied"); err != nil {
		return err
	}
	m.rep.Moved[KindRequests] += len(data)
	return m.deleteKeys(ctx, "requests", []string{r.Requests, r.RequestData})
}

// raiseAll raises counter(p) of every partition to at least v.
func (m *migration) raiseAll(ctx context.Context, what string, v int64, counter func(p int) string) error {
	calls := make([]*call, m.to.Partitions())
	for p := range calls {
		calls[p] = &call{script: raiseScript, keys: []string{counter(p)}, args: []any{v}}
	}
	if err := runCalls(ctx, m.c, calls); err != nil {
		return fmt.Errorf("migrate: raise the %s of %d partitions to %d: %w", what, len(calls), v, err)
	}
	return m.step(what + ": copied")
}

// readCounter reads an integer string key; 0 when missing.
func (m *migration) readCounter(ctx context.Context, key string) (int64, error) {
	v, err := m.c.Get(ctx, key).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("migrate: read %s: %w", key, err)
	}
	return v, nil
}

// moveVersion starts every partition's change counter at layout 1's.
func (m *migration) moveVersion(ctx context.Context, in *inventory) error {
	if !in.version {
		return nil
	}
	v, err := m.readCounter(ctx, m.old.reg.Version)
	if err != nil {
		return err
	}
	if err := m.raiseAll(ctx, "change counter", v, func(p int) string { return m.reg(p).Version }); err != nil {
		return err
	}
	return m.deleteKeys(ctx, "change counter", []string{m.old.reg.Version})
}

// moveEpoch starts every partition's fencing epoch at layout 1's, so the
// first term of each partition has an epoch above every term of layout 1,
// and deletes layout 1's lease, epoch and term record: a leader still
// holding the lease loses it at its next renewal.
func (m *migration) moveEpoch(ctx context.Context, in *inventory) error {
	if !in.epoch && !in.lease {
		return nil
	}
	old := m.old.lease
	v, err := m.readCounter(ctx, old.Epoch)
	if err != nil {
		return err
	}
	if in.epoch {
		if err := m.raiseAll(ctx, "leader epoch", v, func(p int) string { return leader.KeysAt(m.to.Partition(p)).Epoch }); err != nil {
			return err
		}
		m.rep.Moved[KindEpoch] = int(v)
	}
	return m.deleteKeys(ctx, "leader epoch", []string{old.Lock, old.Epoch, old.Since})
}
