package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// This file moves the queue's keys: each queue's stream entries and
// delayed tasks, dead letters, run records, dedup keys and paused queues,
// and leaves the marker in place of each layout-1 queue.

// partOfTask is the partition a task goes to: its schedule's (where its
// overlap marker and trigger dedup key are), its dedup key's (where a
// Client enqueues it), or one spread by its ID. fallback (the stream
// entry's ID) places what does not decode.
func (m *migration) partOfTask(msg *rdb.Message, fallback string) int {
	switch {
	case msg == nil || msg.ID == "":
		return m.to.ForSchedule(fallback)
	case msg.ScheduleID != "":
		return m.to.ForSchedule(msg.ScheduleID)
	case msg.DedupKey != "":
		return m.to.ForDedup(msg.DedupKey)
	}
	return m.to.ForSchedule(msg.ID)
}

// taskBatch is one script call's share of a batch: the tasks going to one
// partition, with the overlap keys they name.
type taskBatch struct {
	keys    []string
	args    []any
	markers map[string]int // marker → index in keys (1-based) of its active set
}

func newTaskBatch(keys []string, args ...any) *taskBatch {
	return &taskBatch{keys: keys, args: args, markers: map[string]int{}}
}

// marker returns the 1-based index in KEYS of the active set of the task's
// overlap marker (its records follow), adding both; 0 when it has none.
func (b *taskBatch) marker(k rdb.Keys, msg *rdb.Message) int {
	if msg == nil || msg.Overlap == "" {
		return 0
	}
	if i, ok := b.markers[msg.Overlap]; ok {
		return i
	}
	b.keys = append(b.keys, k.OverlapActive(msg.Overlap), k.OverlapWhere(msg.Overlap))
	i := len(b.keys) - 1
	b.markers[msg.Overlap] = i
	return i
}

func decodeTask(raw string) *rdb.Message {
	msg, err := rdb.DecodeString(raw)
	if err != nil {
		return nil
	}
	return msg
}

// moveQueues moves the stream entries and the delayed tasks of every
// queue of the inventory.
func (m *migration) moveQueues(ctx context.Context, in *inventory) error {
	for _, q := range in.streams {
		if err := m.moveStream(ctx, q); err != nil {
			return err
		}
	}
	for _, q := range in.delayed {
		if err := m.moveDelayed(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// pendingOf returns the IDs of the entries of stream that the consumer
// group has delivered and not acknowledged.
func (m *migration) pendingOf(ctx context.Context, stream string) (map[string]bool, error) {
	out := map[string]bool{}
	start := "-"
	for {
		ps, err := m.c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: rdb.Group, Start: start, End: "+", Count: 1000}).Result()
		if err != nil {
			if rdb.IsNoGroup(err) || errors.Is(err, redis.Nil) {
				return out, nil
			}
			return nil, fmt.Errorf("migrate: pending entries of %s: %w", stream, err)
		}
		for _, p := range ps {
			out[p.ID] = true
		}
		if len(ps) < 1000 {
			return out, nil
		}
		start = "(" + ps[len(ps)-1].ID
	}
}

// moveStream re-adds each entry of queue's layout-1 stream, pending ones
// included, as a new entry of its partition's stream (copyEntriesScript:
// once, whatever the number of runs), then deletes it.
func (m *migration) moveStream(ctx context.Context, queue string) error {
	src := m.old.q.Stream(queue)
	if t, err := m.c.Type(ctx, src).Result(); err != nil || t != "stream" {
		if err != nil {
			return fmt.Errorf("migrate: queue %q: %w", queue, err)
		}
		return nil // gone, or the marker already
	}
	pending, err := m.pendingOf(ctx, src)
	if err != nil {
		return err
	}
	// A queue servers read in layout 1 is read in every partition: its
	// consumer groups are created as a server would, so the queue is
	// listed (and read) even where no task of it moves.
	groups, err := m.c.XInfoGroups(ctx, src).Result()
	if err != nil && !strings.Contains(err.Error(), "no such key") {
		return fmt.Errorf("migrate: consumer groups of queue %q: %w", queue, err)
	}
	if slices.ContainsFunc(groups, func(g redis.XInfoGroup) bool { return g.Name == rdb.Group }) {
		if err := rdb.NewStore(m.c, m.to).EnsureGroups(ctx, []string{queue}); err != nil {
			return err
		}
	}
	for {
		xs, err := m.c.XRangeN(ctx, src, "-", "+", int64(m.o.Batch)).Result()
		if err != nil {
			return fmt.Errorf("migrate: read queue %q: %w", queue, err)
		}
		if len(xs) == 0 {
			return nil
		}
		byPart := map[int]*taskBatch{}
		var order []int
		ids := make([]string, len(xs))
		for i, x := range xs {
			ids[i] = x.ID
			raw, _ := x.Values["m"].(string)
			msg := decodeTask(raw)
			p := m.partOfTask(msg, x.ID)
			k := m.queue(p)
			b := byPart[p]
			if b == nil {
				b = newTaskBatch([]string{k.Stream(queue), k.Migrated(queue)}, 0)
				byPart[p] = b
				order = append(order, p)
			}
			id := x.ID
			if msg != nil {
				id = msg.ID
			}
			b.args = append(b.args, x.ID, raw, id, b.marker(k, msg))
			b.args[0] = b.args[0].(int) + 1
		}
		calls := make([]*call, len(order))
		for i, p := range order {
			calls[i] = &call{script: copyEntriesScript, keys: byPart[p].keys, args: byPart[p].args}
		}
		if err := runCalls(ctx, m.c, calls); err != nil {
			return fmt.Errorf("migrate: copy %d tasks of queue %q: %w", len(xs), queue, err)
		}
		for i, p := range order {
			added, _ := calls[i].cmd.Int64Slice()
			for j, a := range added {
				switch {
				case a == 0: // an interrupted run added it
				case pending[byPart[p].args[1+4*j].(string)]:
					m.rep.Moved[KindPending]++
				default:
					m.rep.Moved[KindReady]++
				}
			}
		}
		if err := m.step("streams: copied"); err != nil {
			return err
		}
		if err := m.c.XDel(ctx, src, ids...).Err(); err != nil {
			return fmt.Errorf("migrate: delete %d moved tasks of queue %q: %w", len(ids), queue, err)
		}
		if err := m.step("streams: deleted"); err != nil {
			return err
		}
	}
}

// moveDelayed adds each delayed task of queue's layout-1 delayed set to
// its partition's, with its due time, then deletes it.
func (m *migration) moveDelayed(ctx context.Context, queue string) error {
	src := m.old.q.Delayed(queue)
	for {
		zs, err := m.c.ZRangeWithScores(ctx, src, 0, int64(m.o.Batch)-1).Result()
		if err != nil {
			return fmt.Errorf("migrate: read the delayed tasks of queue %q: %w", queue, err)
		}
		if len(zs) == 0 {
			return nil
		}
		byPart := map[int]*taskBatch{}
		var order []int
		members := make([]any, len(zs))
		for i, z := range zs {
			raw, _ := z.Member.(string)
			members[i] = raw
			msg := decodeTask(raw)
			p := m.partOfTask(msg, raw)
			k := m.queue(p)
			b := byPart[p]
			if b == nil {
				b = newTaskBatch([]string{k.Delayed(queue), k.Stream(queue)}, k.Wake(), 0)
				byPart[p] = b
				order = append(order, p)
			}
			id := ""
			if msg != nil {
				id = msg.ID
			}
			b.args = append(b.args, raw, strconv.FormatFloat(z.Score, 'f', -1, 64), id, b.marker(k, msg))
			b.args[1] = b.args[1].(int) + 1
		}
		calls := make([]*call, len(order))
		for i, p := range order {
			calls[i] = &call{script: copyDelayedScript, keys: byPart[p].keys, args: byPart[p].args}
		}
		if err := runCalls(ctx, m.c, calls); err != nil {
			return fmt.Errorf("migrate: copy %d delayed tasks of queue %q: %w", len(zs), queue, err)
		}
		for _, cl := range calls {
			n, _ := cl.cmd.Int()
			m.rep.Moved[KindDelayed] += n
		}
		if err := m.step("delayed tasks: copied"); err != nil {
			return err
		}
		if err := m.c.ZRem(ctx, src, members...).Err(); err != nil {
			return fmt.Errorf("migrate: delete %d moved delayed tasks of queue %q: %w", len(zs), queue, err)
		}
		if err := m.step("delayed tasks: deleted"); err != nil {
			return err
		}
	}
}

// mark replaces the layout-1 stream and delayed set of every queue by the
// marker, moving first what processes still using layout 1 added since the
// last pass, and then drops the partitions' records of moved entries,
// which nothing can need once no entry can come from layout 1.
func (m *migration) mark(ctx context.Context, in *inventory) error {
	queues := append(in.queues(), in.markers...)
	slices.Sort(queues)
	queues = slices.Compact(queues)
	for _, q := range queues {
		for try := 0; ; try++ {
			ok, err := markScript.Run(ctx, m.c, []string{m.old.q.Stream(q), m.old.q.Delayed(q)}, rdb.MigratedMarker).Int()
			if err != nil {
				return fmt.Errorf("migrate: replace the layout-1 keys of queue %q: %w", q, err)
			}
			if ok == 1 {
				break
			}
			if try == 100 {
				return fmt.Errorf("migrate: queue %q: tasks kept arriving in layout 1 through 100 passes: stop the processes that enqueue them and run it again", q)
			}
			if err := m.moveStream(ctx, q); err != nil {
				return err
			}
			if err := m.moveDelayed(ctx, q); err != nil {
				return err
			}
		}
		if err := m.step("queues: marked"); err != nil {
			return err
		}
		if !slices.Contains(in.markers, q) {
			m.rep.Queues = append(m.rep.Queues, q)
		}
		if _, err := m.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for part := range m.to.Partitions() {
				p.Del(ctx, m.queue(part).Migrated(q))
			}
			return nil
		}); err != nil {
			return fmt.Errorf("migrate: delete the records of the moved tasks of queue %q: %w", q, err)
		}
		if err := m.step("records: deleted"); err != nil {
			return err
		}
	}
	return nil
}

// moveDead moves each dead letter, with its time of death, into its
// task's partition.
func (m *migration) moveDead(ctx context.Context, in *inventory) error {
	if !in.dead {
		return nil
	}
	q := m.old.q
	letters := map[string]string{}
	var cursor uint64
	for {
		kv, next, err := m.c.HScan(ctx, q.Dead(), cursor, "", 1000).Result()
		if err != nil {
			return fmt.Errorf("migrate: read the dead letters: %w", err)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			letters[kv[i]] = kv[i+1]
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	ids := make([]string, 0, len(letters))
	for id := range letters {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for batch := range slices.Chunk(ids, m.o.Batch) {
		scores, err := m.c.ZMScore(ctx, q.DeadIndex(), batch...).Result()
		if err != nil {
			return fmt.Errorf("migrate: read the dead-letter index: %w", err)
		}
		if _, err := m.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, id := range batch {
				msg := decodeTask(letters[id])
				k := m.queue(m.partOfTask(msg, id))
				at := scores[i]
				if at == 0 && msg != nil {
					at = float64(msg.DiedAt)
				}
				p.HSet(ctx, k.Dead(), id, letters[id])
				p.ZAdd(ctx, k.DeadIndex(), redis.Z{Score: at, Member: id})
			}
			return nil
		}); err != nil {
			return fmt.Errorf("migrate: copy %d dead letters: %w", len(batch), err)
		}
		if err := m.step("dead letters: copied"); err != nil {
			return err
		}
		if _, err := m.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HDel(ctx, q.Dead(), batch...)
			members := make([]any, len(batch))
			for i, id := range batch {
				members[i] = id
			}
			p.ZRem(ctx, q.DeadIndex(), members...)
			return nil
		}); err != nil {
			return fmt.Errorf("migrate: delete %d moved dead letters: %w", len(batch), err)
		}
		if err := m.step("dead letters: deleted"); err != nil {
			return err
		}
		m.rep.Moved[KindDead] += len(batch)
	}
	// What is left in the index has no letter.
	return m.deleteKeys(ctx, "dead letters", []string{q.Dead(), q.DeadIndex()})
}

// moveRuns moves each run record, with its entry ID (its time), into the
// partition of its schedule, or of its task.
func (m *migration) moveRuns(ctx context.Context, in *inventory) error {
	for _, kind := range in.runs {
		src := m.old.q.Runs(kind)
		start := "-"
		for {
			xs, err := m.c.XRangeN(ctx, src, start, "+", int64(m.o.Batch)).Result()
			if err != nil {
				return fmt.Errorf("migrate: read the run records of %q: %w", kind, err)
			}
			if len(xs) == 0 {
				break
			}
			byPart := map[int][]any{}
			var order []int
			for _, x := range xs {
				rec := rdb.DecodeRunRecord(x.Values)
				p := m.to.ForSchedule(rec.TaskID)
				if rec.ScheduleID != "" {
					p = m.to.ForSchedule(rec.ScheduleID)
				}
				args, ok := byPart[p]
				if !ok {
					args = []any{0}
					order = append(order, p)
				}
				fields := make([]string, 0, len(x.Values))
				for f := range x.Values {
					fields = append(fields, f)
				}
				slices.Sort(fields)
				args = append(args, x.ID, len(fields))
				for _, f := range fields {
					args = append(args, f, x.Values[f])
				}
				args[0] = args[0].(int) + 1
				byPart[p] = args
			}
			calls := make([]*call, len(order))
			for i, p := range order {
				calls[i] = &call{script: copyRunsScript, keys: []string{m.queue(p).Runs(kind)}, args: byPart[p]}
			}
			if err := runCalls(ctx, m.c, calls); err != nil {
				return fmt.Errorf("migrate: copy %d run records of %q: %w", len(xs), kind, err)
			}
			for _, cl := range calls {
				n, _ := cl.cmd.Int()
				m.rep.Moved[KindRuns] += n
			}
			if err := m.step("run records: copied"); err != nil {
				return err
			}
			start = "(" + xs[len(xs)-1].ID
		}
		if err := m.deleteKeys(ctx, "run records", []string{src}); err != nil {
			return err
		}
	}
	return nil
}

// moveDedup moves each dedup claim, with its remaining TTL, into the
// partition of its key (Layout.ForDedup: a trigger's key lands with its
// schedule). A claim is written only where the partition has none: one
// there is a claim of the same key made since, which stands.
func (m *migration) moveDedup(ctx context.Context, in *inventory) error {
	q := m.old.q
	for batch := range slices.Chunk(in.dedup, m.o.Batch) {
		vals := make([]*redis.StringCmd, len(batch))
		ttls := make([]*redis.DurationCmd, len(batch))
		if _, err := m.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range batch {
				vals[i], ttls[i] = p.Get(ctx, q.Dedup(k)), p.PTTL(ctx, q.Dedup(k))
			}
			return nil
		}); err != nil && !errors.Is(err, redis.Nil) {
			return fmt.Errorf("migrate: read %d dedup keys: %w", len(batch), err)
		}
		sets := make([]*redis.BoolCmd, len(batch))
		del := make([]string, len(batch))
		if _, err := m.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range batch {
				del[i] = q.Dedup(k)
				v, err := vals[i].Result()
				ttl := ttls[i].Val()
				if err != nil || ttl == -2 { // expired meanwhile
					continue
				}
				sets[i] = p.SetNX(ctx, m.queue(m.to.ForDedup(k)).Dedup(k), v, max(ttl, 0))
			}
			return nil
		}); err != nil && !errors.Is(err, redis.Nil) {
			return fmt.Errorf("migrate: copy %d dedup keys: %w", len(batch), err)
		}
		for _, s := range sets {
			if s != nil && s.Val() {
				m.rep.Moved[KindDedup]++
			}
		}
		if err := m.step("dedup keys: copied"); err != nil {
			return err
		}
		if err := m.deleteKeys(ctx, "dedup keys", del); err != nil {
			return err
		}
	}
	return nil
}

// movePaused pauses every paused queue in every partition.
func (m *migration) movePaused(ctx context.Context, in *inventory) error {
	if !in.paused {
		return nil
	}
	src := m.old.q.Paused()
	qs, err := m.c.SMembers(ctx, src).Result()
	if err != nil {
		return fmt.Errorf("migrate: read the paused queues: %w", err)
	}
	if len(qs) > 0 {
		members := make([]any, len(qs))
		for i, q := range qs {
			members[i] = q
		}
		if _, err := m.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for part := range m.to.Partitions() {
				p.SAdd(ctx, m.queue(part).Paused(), members...)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("migrate: pause %d queues in %d partitions: %w", len(qs), m.to.Partitions(), err)
		}
		if err := m.step("paused queues: copied"); err != nil {
			return err
		}
	}
	m.rep.Moved[KindPaused] += len(qs)
	return m.deleteKeys(ctx, "paused queues", []string{src})
}
