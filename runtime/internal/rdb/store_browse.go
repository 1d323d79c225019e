package rdb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

// This file holds the reads of a namespace's queues for operators' tools
// (the Inspector, the console, the CLI, the Prometheus collector), over
// every partition: counts are summed, listings are merged in the order one
// partition would give (by time), and a task found by ID is looked for in
// every partition. Each partition is read with the commands of browse.go
// and dead.go; none of them is on a worker's path.

// QueueStats reads the sizes of queue, summed over the partitions, in one
// round trip. OldestPending is the oldest of every partition's, and the
// queue counts as paused when any partition's paused set says so (servers
// then skip its tasks there).
func (s *Store) QueueStats(ctx context.Context, queue string) (QueueStats, error) {
	type cmds struct {
		xlen, zcard *redis.IntCmd
		pend        *redis.XPendingCmd
		paused      *redis.BoolCmd
	}
	cs := make([]cmds, len(s.Parts))
	_, err := s.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range s.Parts {
			k := r.keysOf(queue)
			cs[i] = cmds{xlen: p.XLen(ctx, k.stream), pend: p.XPending(ctx, k.stream, Group), zcard: p.ZCard(ctx, k.delayed), paused: p.SIsMember(ctx, r.K.Paused(), queue)}
		}
		return nil
	})
	var st QueueStats
	if err != nil && !IsNoGroup(err) {
		return st, fmt.Errorf("rdb: stats of queue %q: %w", queue, err)
	}
	for _, c := range cs {
		st.Stream += c.xlen.Val()
		st.Delayed += c.zcard.Val()
		st.Paused = st.Paused || c.paused.Val()
		if p, err := c.pend.Result(); err == nil && p.Count > 0 {
			st.Pending += p.Count
			if st.OldestPending == "" || compareIDs(p.Lower, st.OldestPending) < 0 {
				st.OldestPending = p.Lower
			}
		}
	}
	return st, nil
}

// OldestReady returns the entry ID of the oldest task of queue, in any
// partition, that no worker has taken yet, or "" when there is none. One
// round trip.
func (s *Store) OldestReady(ctx context.Context, queue string) (string, error) {
	calls := make([]*scriptCall, len(s.Parts))
	for i, r := range s.Parts {
		calls[i] = &scriptCall{script: oldestReadyScript, keys: []string{r.keysOf(queue).stream}, args: []any{Group}}
	}
	runScripts(ctx, s.C, calls)
	oldest := ""
	for _, c := range calls {
		id, err := c.cmd.Text()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("rdb: oldest ready task of %q: %w", queue, err)
		}
		if oldest == "" || compareIDs(id, oldest) < 0 {
			oldest = id
		}
	}
	return oldest, nil
}

// compareIDs orders stream entry IDs ("<ms>-<seq>") by time, then
// sequence.
func compareIDs(a, b string) int {
	am, as := splitID(a)
	bm, bs := splitID(b)
	if c := cmp.Compare(am, bm); c != 0 {
		return c
	}
	return cmp.Compare(as, bs)
}

func splitID(id string) (ms, seq uint64) {
	l, r, _ := strings.Cut(id, "-")
	ms, _ = strconv.ParseUint(l, 10, 64)
	seq, _ = strconv.ParseUint(r, 10, 64)
	return ms, seq
}

// partPatterns returns the SCAN patterns that match, in every partition,
// the keys named by name with their variable part left out (name(k) is
// the key of "" under k): one pattern for the namespace's partition tags,
// from keyspace.ACLKeyPatterns, whose first pattern covers the control
// tag (layout 1) and whose others cover the partitions.
func (s *Store) partPatterns(name func(Keys) string) []string {
	k := s.Parts[0].K
	segment := globEscape(strings.TrimPrefix(name(k), k.Prefix())) + "*"
	acl := keyspace.ACLKeyPatterns(s.Layout.Namespace())
	if s.Layout.IsSingle() {
		acl = acl[:1]
	} else {
		acl = acl[1:]
	}
	out := make([]string, len(acl))
	for i, p := range acl {
		out[i] = strings.TrimSuffix(p, "*") + segment
	}
	return out
}

// partOfKey returns the partition whose prefix key starts with, and the
// rest of the key.
func (s *Store) partOfKey(key string) (*RDB, string, bool) {
	for _, r := range s.Parts {
		if rest, ok := strings.CutPrefix(key, r.K.Prefix()); ok {
			return r, rest, true
		}
	}
	return nil, "", false
}

// names scans for the keys name matches in every partition and returns
// the variable parts of those found (queue or kind names), using cut to
// read them from a partition's key.
func (s *Store) names(ctx context.Context, name func(Keys) string, cut func(Keys, string) (string, bool), limit int, into map[string]bool) error {
	for _, pattern := range s.partPatterns(name) {
		keys, err := scanKeys(ctx, s.C, pattern, limit)
		if err != nil {
			return err
		}
		for _, key := range keys {
			if r, _, ok := s.partOfKey(key); ok {
				if n, ok := cut(r.K, key); ok {
					into[n] = true
				}
			}
		}
	}
	return nil
}

// QueueNames returns the names of the queues that have a stream, delayed
// tasks or a pause in any partition, sorted, scanning at most about limit
// keys per kind of key.
func (s *Store) QueueNames(ctx context.Context, limit int) ([]string, error) {
	seen := map[string]bool{}
	if err := s.names(ctx, func(k Keys) string { return k.Stream("") }, Keys.StreamQueue, limit, seen); err != nil {
		return nil, err
	}
	if err := s.names(ctx, func(k Keys) string { return k.Delayed("") }, Keys.DelayedQueue, limit, seen); err != nil {
		return nil, err
	}
	cmds := make([]*redis.StringSliceCmd, len(s.Parts))
	_, err := s.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range s.Parts {
			cmds[i] = p.SMembers(ctx, r.K.Paused())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rdb: paused queues: %w", err)
	}
	for _, c := range cmds {
		for _, q := range c.Val() {
			seen[q] = true
		}
	}
	return sortedKeys(seen), nil
}

// RunKinds returns the task kinds that have run records in any partition,
// sorted, scanning at most about limit keys.
func (s *Store) RunKinds(ctx context.Context, limit int) ([]string, error) {
	seen := map[string]bool{}
	if err := s.names(ctx, func(k Keys) string { return k.Runs("") }, Keys.RunsKind, limit, seen); err != nil {
		return nil, err
	}
	return sortedKeys(seen), nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// merger yields the items of several sorted sources (one per partition)
// in one order, reading each source a page at a time as it is drained.
type merger[T any] struct {
	srcs []*mergeSrc[T]
	less func(a, b T) bool
}

type mergeSrc[T any] struct {
	buf  []T
	done bool
	// load returns the next page and whether more may follow.
	load func(ctx context.Context) ([]T, bool, error)
}

// next returns the next item in order, or false when every source is
// drained.
func (m *merger[T]) next(ctx context.Context) (T, bool, error) {
	var zero T
	best := -1
	for i, s := range m.srcs {
		if len(s.buf) == 0 && !s.done {
			page, more, err := s.load(ctx)
			if err != nil {
				return zero, false, err
			}
			s.buf, s.done = page, !more || len(page) == 0
		}
		if len(s.buf) > 0 && (best < 0 || m.less(s.buf[0], m.srcs[best].buf[0])) {
			best = i
		}
	}
	if best < 0 {
		return zero, false, nil
	}
	v := m.srcs[best].buf[0]
	m.srcs[best].buf = m.srcs[best].buf[1:]
	return v, true, nil
}

// browsePage is how many items a listing reads per partition and round
// trip.
const browsePage = 500

// EntryIter yields the entries of one queue's streams in every partition,
// oldest first (by entry ID; partitions in order for equal IDs).
type EntryIter struct{ m merger[Entry] }

// Next returns the next entry, or false when there is none.
func (it *EntryIter) Next(ctx context.Context) (Entry, bool, error) { return it.m.next(ctx) }

// Tasks returns the entries of queue's streams in every partition that are
// ready (running false: after the consumer group's last-delivered ID) or
// running (taken by a worker: up to it), oldest first.
func (s *Store) Tasks(queue string, running bool) *EntryIter {
	it := &EntryIter{m: merger[Entry]{less: func(a, b Entry) bool {
		if c := compareIDs(a.ID, b.ID); c != 0 {
			return c < 0
		}
		return a.Partition < b.Partition
	}}}
	for _, r := range s.Parts {
		start, end := "", ""
		it.m.srcs = append(it.m.srcs, &mergeSrc[Entry]{load: func(ctx context.Context) ([]Entry, bool, error) {
			if start == "" { // first page: where the group stands
				last, err := r.LastDelivered(ctx, queue)
				if err != nil {
					return nil, false, err
				}
				start, end = "-", last
				if !running {
					start, end = "("+last, "+"
					if last == "0-0" {
						start = "-"
					}
				} else if last == "0-0" {
					return nil, false, nil
				}
			}
			es, err := r.StreamRange(ctx, queue, start, end, browsePage)
			if err != nil {
				return nil, false, err
			}
			if len(es) > 0 {
				start = "(" + es[len(es)-1].ID
			}
			return es, len(es) == browsePage, nil
		}})
	}
	return it
}

// DelayedIter yields the delayed tasks of one queue in every partition,
// earliest due first.
type DelayedIter struct{ m merger[DelayedTask] }

// Next returns the next delayed task, or false when there is none.
func (it *DelayedIter) Next(ctx context.Context) (DelayedTask, bool, error) { return it.m.next(ctx) }

// Delayed returns the delayed tasks of queue in every partition, earliest
// due first.
func (s *Store) Delayed(queue string) *DelayedIter {
	it := &DelayedIter{m: merger[DelayedTask]{less: func(a, b DelayedTask) bool {
		if !a.Due.Equal(b.Due) {
			return a.Due.Before(b.Due)
		}
		return a.Partition < b.Partition
	}}}
	for _, r := range s.Parts {
		off := 0
		it.m.srcs = append(it.m.srcs, &mergeSrc[DelayedTask]{load: func(ctx context.Context) ([]DelayedTask, bool, error) {
			ds, err := r.DelayedRange(ctx, queue, off, browsePage)
			if err != nil {
				return nil, false, err
			}
			off += len(ds)
			return ds, len(ds) == browsePage, nil
		}})
	}
	return it
}

// FindInStream returns the stream entry of queue, in any partition, whose
// task ID is id, reading each partition's stream from start (XRANGE
// syntax) and at most about maxScan entries per partition, and whether the
// entry is running (taken by a worker). found is false when it is in none.
func (s *Store) FindInStream(ctx context.Context, queue, id, start string, maxScan int) (e Entry, running, found bool, err error) {
	needle := `"id":"` + id + `"`
	for _, r := range s.Parts {
		from := start
		for scanned := 0; scanned < maxScan; {
			es, err := r.StreamRange(ctx, queue, from, "+", browsePage)
			if err != nil {
				return Entry{}, false, false, err
			}
			for _, e := range es {
				if !strings.Contains(e.Msg, needle) {
					continue
				}
				m, err := Decode([]byte(e.Msg))
				if err != nil || m.ID != id {
					continue
				}
				last, err := r.LastDelivered(ctx, queue)
				if err != nil {
					return Entry{}, false, false, err
				}
				return e, compareIDs(e.ID, last) <= 0, true, nil
			}
			scanned += len(es)
			if len(es) < browsePage {
				break
			}
			from = "(" + es[len(es)-1].ID
		}
	}
	return Entry{}, false, false, nil
}

// FindDelayed returns the delayed task of queue, in any partition, whose ID
// is id, or an error wrapping ErrNotFound.
func (s *Store) FindDelayed(ctx context.Context, queue, id string) (DelayedTask, error) {
	for _, r := range s.Parts {
		d, err := r.FindDelayed(ctx, queue, id)
		if !errors.Is(err, ErrNotFound) {
			return d, err
		}
	}
	return DelayedTask{}, fmt.Errorf("rdb: delayed task %s in %q: %w", id, queue, ErrNotFound)
}

// DeadLetter is a dead letter and the partition that holds it.
type DeadLetter struct {
	*Message
	Partition int
	at        float64 // time of death, the dead-letter index's score
}

// DeadIter yields the dead letters of every partition, most recent death
// first.
type DeadIter struct{ m merger[DeadLetter] }

// Next returns the next dead letter, or false when there is none.
func (it *DeadIter) Next(ctx context.Context) (DeadLetter, bool, error) { return it.m.next(ctx) }

// Dead returns the dead letters of every partition, most recent death
// first, reading pages of about page (at most browsePage) per partition.
func (s *Store) Dead(page int) *DeadIter {
	page = min(max(page, 1), browsePage)
	it := &DeadIter{m: merger[DeadLetter]{less: func(a, b DeadLetter) bool {
		if a.at != b.at {
			return a.at > b.at
		}
		return a.Partition < b.Partition
	}}}
	for _, r := range s.Parts {
		off := 0
		it.m.srcs = append(it.m.srcs, &mergeSrc[DeadLetter]{load: func(ctx context.Context) ([]DeadLetter, bool, error) {
			ds, n, err := r.deadPage(ctx, off, page)
			off += n
			return ds, n == page, err
		}})
	}
	return it
}

// ListDead returns up to limit dead letters of every partition, most
// recent death first, skipping offset.
func (s *Store) ListDead(ctx context.Context, offset, limit int) ([]*Message, error) {
	it := s.Dead(offset + limit)
	var out []*Message
	for len(out) < limit {
		d, ok, err := it.Next(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if offset > 0 {
			offset--
			continue
		}
		out = append(out, d.Message)
	}
	return out, nil
}

// CountDead returns the number of dead letters of every partition, in one
// round trip.
func (s *Store) CountDead(ctx context.Context) (int, error) {
	cmds := make([]*redis.IntCmd, len(s.Parts))
	_, err := s.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range s.Parts {
			cmds[i] = p.HLen(ctx, r.K.Dead())
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("rdb: count dead letters: %w", err)
	}
	n := 0
	for _, c := range cmds {
		n += int(c.Val())
	}
	return n, nil
}

// GetDead returns the dead letter of task id and its partition, read in
// one round trip from every partition.
func (s *Store) GetDead(ctx context.Context, id string) (*Message, int, error) {
	cmds := make([]*redis.StringCmd, len(s.Parts))
	_, err := s.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range s.Parts {
			cmds[i] = p.HGet(ctx, r.K.Dead(), id)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, 0, fmt.Errorf("rdb: dead letter %s: %w", id, err)
	}
	for p, c := range cmds {
		if v, err := c.Result(); err == nil {
			m, err := Decode([]byte(v))
			return m, p, err
		}
	}
	return nil, 0, fmt.Errorf("rdb: dead letter %s: %w", id, ErrNotFound)
}

// RequeueDead moves dead letter m.ID of partition part back to the stream
// of m.Queue in that partition, as m: where its overlap markers and dedup
// key live, if it has any.
func (s *Store) RequeueDead(ctx context.Context, m *Message, part int) error {
	return s.Parts[part].RequeueDead(ctx, m)
}

// DeleteDead deletes dead letter id from whichever partition holds it, in
// one round trip.
func (s *Store) DeleteDead(ctx context.Context, id string) error {
	calls := make([]*scriptCall, len(s.Parts))
	for i, r := range s.Parts {
		calls[i] = &scriptCall{script: deleteDeadScript, keys: []string{r.K.Dead(), r.K.DeadIndex()}, args: []any{id}}
	}
	runScripts(ctx, s.C, calls)
	n := int64(0)
	for _, c := range calls {
		v, err := c.cmd.Int64()
		if err != nil {
			return fmt.Errorf("rdb: delete dead letter %s: %w", id, err)
		}
		n += v
	}
	if n == 0 {
		return fmt.Errorf("rdb: delete dead letter %s: %w", id, ErrNotFound)
	}
	return nil
}

// DeadCountsByQueue returns the number of dead letters of each queue, over
// every partition. It costs one pass over every dead letter.
func (s *Store) DeadCountsByQueue(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	for _, r := range s.Parts {
		if err := r.deadCountsByQueue(ctx, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ClearOverlap deletes the overlap marker's keys (active set, buffered
// firing, records) in every partition, in one round trip; they exist only
// in the partition of the marker's schedule.
func (s *Store) ClearOverlap(ctx context.Context, marker string) error {
	_, err := s.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, r := range s.Parts {
			p.Del(ctx, r.K.OverlapActive(marker), r.K.OverlapBuffer(marker), r.K.OverlapWhere(marker))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rdb: clear overlap marker %q: %w", marker, err)
	}
	return nil
}

// RunPage is one read of the run records of a kind: newest first, with
// where a read of older ones goes on.
type RunPage struct {
	Records []RunRecord
	// More reports that the read stopped at its count, so older records
	// may exist; Cursor then continues below the oldest record read.
	More   bool
	Cursor string
}

// runEntry is a run record with its place in the merged order: newest
// first by entry ID, then by partition, higher first.
type runEntry struct {
	id   string
	part int
	rec  RunRecord
}

// newer reports whether a comes before b, newest first.
func newer(a, b runEntry) bool {
	if c := compareIDs(a.id, b.id); c != 0 {
		return c > 0
	}
	return a.part > b.part
}

// runCursor is where a read of run records goes on: below entry id of
// partition part in the merged order. A layout-1 cursor is the entry ID
// alone, as before partitions.
func runCursor(e runEntry, parts int) string {
	if parts == 1 {
		return e.id
	}
	return e.id + "/" + strconv.Itoa(e.part)
}

// runsFrom is the XREVRANGE start that reads, in partition part, the
// records after cursor in the merged order ("+" for none): entries with a
// lower ID, and in lower partitions also those with the cursor's ID.
func runsFrom(cursor string, part int) string {
	if cursor == "" {
		return "+"
	}
	id, p, ok := strings.Cut(cursor, "/")
	if !ok {
		return "(" + id
	}
	cp, _ := strconv.Atoi(p)
	if part < cp {
		return id
	}
	return "(" + id
}

// RecentRuns reads up to count run records of each of kinds, newest first,
// merged over the partitions, in one round trip. A kind with a cursor in
// below (a RunPage.Cursor) is read from under it; the others from the
// newest record. A kind without records has an empty page.
func (s *Store) RecentRuns(ctx context.Context, count int, kinds []string, below map[string]string) (map[string]RunPage, error) {
	cmds := make([][]*redis.XMessageSliceCmd, len(kinds))
	_, err := s.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, kind := range kinds {
			cmds[i] = make([]*redis.XMessageSliceCmd, len(s.Parts))
			for j, r := range s.Parts {
				cmds[i][j] = p.XRevRangeN(ctx, r.K.Runs(kind), runsFrom(below[kind], j), "-", int64(count))
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("rdb: recent runs of %d kinds: %w", len(kinds), err)
	}
	out := make(map[string]RunPage, len(kinds))
	for i, kind := range kinds {
		var (
			all  []runEntry
			full bool
		)
		for j, c := range cmds[i] {
			msgs := c.Val()
			full = full || len(msgs) == count
			for _, m := range msgs {
				all = append(all, runEntry{m.ID, j, decodeRunRecord(m.Values)})
			}
		}
		slices.SortFunc(all, func(a, b runEntry) int {
			if newer(a, b) {
				return -1
			}
			return 1
		})
		page := RunPage{More: full || len(all) > count}
		all = all[:min(len(all), count)]
		page.Records = make([]RunRecord, len(all))
		for k, e := range all {
			page.Records[k] = e.rec
		}
		if len(all) > 0 {
			page.Cursor = runCursor(all[len(all)-1], len(s.Parts))
		}
		out[kind] = page
	}
	return out, nil
}

// ListRuns returns up to limit run records of kind, newest first, merged
// over the partitions.
func (s *Store) ListRuns(ctx context.Context, kind string, limit int) ([]RunRecord, error) {
	pages, err := s.RecentRuns(ctx, limit, []string{kind}, nil)
	if err != nil {
		return nil, fmt.Errorf("rdb: list runs of %q: %w", kind, err)
	}
	return pages[kind].Records, nil
}

// RunsRange returns up to count run records of kind from start to end, in
// XRANGE syntax, oldest first, merged over the partitions.
func (s *Store) RunsRange(ctx context.Context, kind, start, end string, count int) ([]RunRecord, error) {
	cmds := make([]*redis.XMessageSliceCmd, len(s.Parts))
	_, err := s.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range s.Parts {
			cmds[i] = p.XRangeN(ctx, r.keysOf(kind).runs, start, end, int64(count))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("rdb: read runs of %q: %w", kind, err)
	}
	return oldestRuns(cmds, count), nil
}

// oldestRuns merges the replies of one XRANGE per partition, oldest first,
// and keeps the first count.
func oldestRuns(cmds []*redis.XMessageSliceCmd, count int) []RunRecord {
	var all []runEntry
	for j, c := range cmds {
		for _, m := range c.Val() {
			all = append(all, runEntry{m.ID, j, decodeRunRecord(m.Values)})
		}
	}
	slices.SortFunc(all, func(a, b runEntry) int {
		if newer(a, b) {
			return 1
		}
		return -1
	})
	out := make([]RunRecord, min(len(all), count))
	for i := range out {
		out[i] = all[i].rec
	}
	return out
}

// RunsSince returns, for each of kinds, up to count run records written
// at or after since in any partition, oldest first, in one round trip.
func (s *Store) RunsSince(ctx context.Context, kinds []string, since time.Time, count int) (map[string][]RunRecord, error) {
	start := strconv.FormatInt(since.UnixMilli(), 10)
	cmds := make([][]*redis.XMessageSliceCmd, len(kinds))
	_, err := s.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range kinds {
			cmds[i] = make([]*redis.XMessageSliceCmd, len(s.Parts))
			for j, r := range s.Parts {
				cmds[i][j] = p.XRangeN(ctx, r.keysOf(k).runs, start, "+", int64(count))
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("rdb: read recent runs: %w", err)
	}
	out := make(map[string][]RunRecord, len(kinds))
	for i, k := range kinds {
		if recs := oldestRuns(cmds[i], count); len(recs) > 0 {
			out[k] = recs
		}
	}
	return out, nil
}
