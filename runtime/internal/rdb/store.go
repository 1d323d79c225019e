package rdb

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

// Store is the queue storage of one namespace in one layout: the client,
// the layout and one RDB per partition (docs/queue.md, "Partitions").
// Every partition holds its share of every queue: a stream, a delayed set,
// dedup keys, dead letters, run records and a paused set of its own, under
// its own hash tag. A layout-1 namespace is a Store of one partition whose
// keys are exactly those of versions before partitions.
//
// Its operations over several partitions are one round trip: a pipeline of
// one script call or command per partition (a cluster client sends one
// pipeline per master, in parallel), each touching the keys of one
// partition, so of one slot. The exceptions are marked: off a cluster, the
// fetch, the blocking read and the batched finish each combine every
// partition in one script call or command, since a single server does not
// care about slots and one call per round costs it less than one per
// partition.
type Store struct {
	C      redis.UniversalClient
	Layout keyspace.Layout
	Parts  []*RDB // by partition index
	// Warn, if set, hears of failures of work done on the side of an
	// operation that succeeded (the namespace-wide trim of dead letters).
	Warn func(msg string, err error)

	cluster bool
	control Keys // the namespace's control keys
}

// NewStore returns the Store of layout l over c.
func NewStore(c redis.UniversalClient, l keyspace.Layout) *Store {
	parts := make([]*RDB, l.Partitions())
	for p := range parts {
		parts[p] = NewPart(c, l.Partition(p), p)
	}
	_, cluster := c.(*redis.ClusterClient)
	return &Store{C: c, Layout: l, Parts: parts, cluster: cluster, control: NewKeys(l.Namespace())}
}

// Cluster reports whether the client is a Redis Cluster client, on which
// no call may span partitions.
func (s *Store) Cluster() bool { return s.cluster }

// combined reports whether calls over several partitions may be one script
// call: off a cluster, or when there is only one partition.
func (s *Store) combined() bool { return !s.cluster || len(s.Parts) == 1 }

// PartFor returns the partition a task goes to: that of its dedup key when
// it claims one (so the claim and the task are one atomic script, and
// every client of the namespace claims a key in the same partition), else
// the one whose turn rr is (the caller's round-robin counter).
func (s *Store) PartFor(dedupKey string, dedupTTL time.Duration, rr uint32) *RDB {
	if len(s.Parts) == 1 {
		return s.Parts[0]
	}
	if dedupTTL > 0 {
		return s.Parts[s.Layout.ForDedup(dedupKey)]
	}
	return s.Parts[rr%uint32(len(s.Parts))]
}

// EnqueueItems enqueues items into their partitions (each item's To, a
// partition of s) in one round trip; see the function EnqueueItems.
func (s *Store) EnqueueItems(ctx context.Context, items []*EnqueueItem) error {
	return EnqueueItems(ctx, s.C, items)
}

// PartQueue is one queue's share in one partition: its stream, delayed
// set and paused flag there.
type PartQueue struct {
	Part  int
	Queue string
}

// scriptCall is one script call of a pipeline (runScripts).
type scriptCall struct {
	script *redis.Script
	keys   []string
	args   []any
	cmd    *redis.Cmd
}

// runScripts sends calls in one pipeline (a cluster client splits it into
// one per master, sent in parallel) and leaves each reply in its cmd.
// Calls that met NOSCRIPT (a restarted or promoted Redis has an empty
// script cache) are sent again once their script is loaded, at most twice,
// so none runs twice.
func runScripts(ctx context.Context, c redis.UniversalClient, calls []*scriptCall) {
	switch len(calls) {
	case 0:
		return
	case 1: // Run handles NOSCRIPT itself
		cl := calls[0]
		cl.cmd = cl.script.Run(ctx, c, cl.keys, cl.args...)
		return
	}
	todo := calls
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt > 0 {
			var loaded []*redis.Script
			for _, cl := range todo {
				if !containsScript(loaded, cl.script) {
					loaded = append(loaded, cl.script)
					if err := cl.script.Load(ctx, c).Err(); err != nil {
						return // the calls keep their NOSCRIPT replies
					}
				}
			}
		}
		p := c.Pipeline()
		for _, cl := range todo {
			cl.cmd = p.EvalSha(ctx, cl.script.Hash(), cl.keys, cl.args...)
		}
		_, _ = p.Exec(ctx)
		var again []*scriptCall
		for _, cl := range todo {
			if attempt < 2 && isNoScript(cl.cmd.Err()) {
				again = append(again, cl)
			}
		}
		todo = again
	}
}

func containsScript(list []*redis.Script, s *redis.Script) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Fetch reads up to n new entries for consumer from the partitions'
// shares of queues, without blocking: queue by queue in the given order
// (earlier queues are drained first), and within a queue partition by
// partition from partition start on, so that the caller, by moving start
// every round, gives every partition its turn to be read first. Paused
// queues are skipped and returned per partition. Streams without a
// consumer group are skipped too and reported by an error wrapping
// ErrNoGroup, returned with the entries read from the others, which must
// be processed.
//
// Off a cluster this is one script call over every partition's streams.
// On a cluster it is one call per partition, each asking for its share of
// n (the remainder to the first): ⌈n/8⌉ partitions from start at a time,
// in one pipeline, and the next ones only while nothing was read. So a
// round that reads nothing has asked every partition, and reports the
// pauses of every partition, which is what a fetcher that then blocks on
// all of them needs.
func (s *Store) Fetch(ctx context.Context, consumer string, queues []string, start, n int) ([]Entry, []PartQueue, error) {
	np := len(s.Parts)
	if s.combined() {
		streams := make([]partStream, 0, np*len(queues))
		for _, q := range queues {
			for j := range np {
				streams = append(streams, partStream{s.Parts[(start+j)%np], q})
			}
		}
		keys, args := fetchCall(consumer, streams, n)
		res, err := fetchScript.Run(ctx, s.C, keys, args...).Slice()
		if err != nil {
			return nil, nil, fmt.Errorf("rdb: fetch: %w", err)
		}
		return decodeFetch(res, streams, nil)
	}
	var (
		out    []Entry
		paused []PartQueue
		errs   []error
	)
	per := min(np, max(1, (n+clusterShare-1)/clusterShare)) // partitions asked per round trip
	for asked := 0; asked < np && len(out) == 0; {
		k := min(per, np-asked)
		calls := make([]*scriptCall, k)
		streams := make([][]partStream, k)
		for j := range k {
			share := n / k
			if j < n%k {
				share++
			}
			r := s.Parts[(start+asked+j)%np]
			st := make([]partStream, len(queues))
			for i, q := range queues {
				st[i] = partStream{r, q}
			}
			keys, args := fetchCall(consumer, st, share)
			calls[j] = &scriptCall{script: fetchScript, keys: keys, args: args}
			streams[j] = st
		}
		runScripts(ctx, s.C, calls)
		for i, cl := range calls {
			res, err := cl.cmd.Slice()
			if err != nil {
				errs = append(errs, fmt.Errorf("rdb: fetch from partition %d: %w", streams[i][0].r.Part, err))
				continue
			}
			var es []Entry
			es, paused, err = decodeFetch(res, streams[i], paused)
			out = append(out, es...)
			if err != nil {
				errs = append(errs, err)
			}
		}
		asked += k
	}
	return out, paused, errors.Join(errs...)
}

// clusterShare is about the fewest entries a fetch on a cluster asks one
// partition for: a round asks ⌈n/8⌉ partitions (at most all), not all of
// them. Asking every partition for its share of n made a round cost P
// script calls, most of them for one entry or none; on a 3-master cluster
// that was 1.3 fetch calls per task, and each master spent as much Redis
// CPU per task of the namespace as a single server spends per task.
const clusterShare = 8

// Finish ends a delivery in one round trip, in its partition, if consumer
// still holds it. A dead letter of a partitioned namespace is written
// under the namespace's dead-letter lock, after making room for it
// (deadRoom).
func (s *Store) Finish(ctx context.Context, consumer string, f *Finish) (FinishResult, error) {
	if f.Outcome == Dead {
		defer s.deadRoom(ctx, 1, f.DeadCap)()
	}
	return s.Parts[f.Partition].Finish(ctx, consumer, f)
}

// deadLockTTL bounds how long a writer of dead letters holds the lock, and
// so how long a crashed one blocks the others.
const deadLockTTL = 2 * time.Second

// deadRoom makes room for n dead letters of a partitioned namespace under
// a cap of max (TrimDead), holding the namespace's dead-letter lock, which
// the returned function releases once the letters are written. One writer
// at a time is what makes the cap exact: a trim then sees every letter
// written before it, and no other is written until its own. A writer that
// cannot take the lock within deadLockTTL (its holder died) goes on
// without it. With one partition it does nothing: the finish script's own
// trim is exact. The lock costs two round trips per batch of outcomes
// holding deaths; a flood of deaths is written a batch at a time.
func (s *Store) deadRoom(ctx context.Context, n, max int) (release func()) {
	if len(s.Parts) == 1 || max <= 0 {
		return func() {}
	}
	key := s.control.DeadLock()
	var b [8]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	held := false
	for wait, deadline := time.Millisecond, time.Now().Add(deadLockTTL); ; wait = min(2*wait, 20*time.Millisecond) {
		ok, err := s.C.SetNX(ctx, key, token, deadLockTTL).Result()
		if err != nil {
			s.warn("take the dead-letter lock; writing without it", err)
			break
		}
		if held = ok; ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(wait)
	}
	if err := s.TrimDead(ctx, max, n); err != nil {
		s.warn("drop the oldest dead letters", err)
	}
	return func() {
		if held {
			if err := releaseLockScript.Run(ctx, s.C, []string{key}, token).Err(); err != nil {
				s.warn("release the dead-letter lock", err)
			}
		}
	}
}

func (s *Store) warn(msg string, err error) {
	if s.Warn != nil {
		s.Warn(msg, err)
	}
}

// ForwardReq asks Forward to move the due tasks of one queue's delayed set
// in one partition; Forward fills in the results.
type ForwardReq struct {
	PartQueue
	Moved int       // tasks moved
	Next  time.Time // when the earliest remaining one is due (zero if none)
	Err   error
}

// Forward moves up to limit delayed tasks that are due at now to their
// streams, for each of reqs, in one round trip (one script call per
// partition and queue).
func (s *Store) Forward(ctx context.Context, now time.Time, limit int, reqs []*ForwardReq) {
	calls := make([]*scriptCall, len(reqs))
	for i, rq := range reqs {
		q := s.Parts[rq.Part].keysOf(rq.Queue)
		calls[i] = &scriptCall{script: forwardScript, keys: []string{q.delayed, q.stream}, args: []any{now.UnixMilli(), limit}}
	}
	runScripts(ctx, s.C, calls)
	for i, rq := range reqs {
		rq.Moved, rq.Next, rq.Err = forwardResult(rq.Queue, calls[i].cmd)
	}
}

// ReclaimReq asks Reclaim to take over the expired leases of one queue in
// one partition; Reclaim fills in the results.
type ReclaimReq struct {
	PartQueue
	Cursor  string // where the scan of the pending list starts ("0-0" for its start)
	Count   int    // the most entries to claim
	Entries []Entry
	Next    string // the cursor for the next call ("0-0" once the scan wrapped around)
	Err     error
}

// Reclaim takes over, for consumer and each of reqs, entries whose lease
// (idle time) exceeds minIdle, in one round trip.
func (s *Store) Reclaim(ctx context.Context, consumer string, minIdle time.Duration, reqs []*ReclaimReq) {
	calls := make([]*scriptCall, len(reqs))
	for i, rq := range reqs {
		calls[i] = &scriptCall{script: reclaimScript, keys: []string{s.Parts[rq.Part].keysOf(rq.Queue).stream},
			args: []any{Group, consumer, minIdle.Milliseconds(), rq.Cursor, rq.Count}}
	}
	runScripts(ctx, s.C, calls)
	for i, rq := range reqs {
		rq.Entries, rq.Next, rq.Err = s.Parts[rq.Part].reclaimResult(rq.Queue, rq.Cursor, calls[i].cmd)
	}
}

// LeaseReq is consumer's entries of one queue in one partition, for
// Extend and Release; Extend fills in Lost and both fill in Err.
type LeaseReq struct {
	PartQueue
	IDs  []string
	Lost []string // the entries whose lease another consumer took
	Err  error
}

// Extend renews consumer's leases on the entries of reqs, in one round
// trip, and reports in each the IDs whose lease was already lost to
// another consumer.
func (s *Store) Extend(ctx context.Context, consumer string, reqs []*LeaseReq) {
	s.lease(ctx, consumer, reqs, 0)
}

// Release gives consumer's entries of reqs back for immediate recovery by
// any worker, without counting the delivery, in one round trip.
func (s *Store) Release(ctx context.Context, consumer string, reqs []*LeaseReq, idle time.Duration) {
	s.lease(ctx, consumer, reqs, max(idle, time.Millisecond))
}

func (s *Store) lease(ctx context.Context, consumer string, reqs []*LeaseReq, idle time.Duration) {
	var (
		calls []*scriptCall
		of    []*LeaseReq
	)
	for _, rq := range reqs {
		if len(rq.IDs) == 0 {
			continue
		}
		keys, args := leaseCall(s.Parts[rq.Part], rq.Queue, consumer, rq.IDs, idle)
		calls = append(calls, &scriptCall{script: leaseScript, keys: keys, args: args})
		of = append(of, rq)
	}
	runScripts(ctx, s.C, calls)
	for i, rq := range of {
		lost, err := calls[i].cmd.StringSlice()
		if err != nil {
			rq.Err = fmt.Errorf("rdb: lease on %d tasks of %q in partition %d: %w", len(rq.IDs), rq.Queue, rq.Part, err)
			continue
		}
		rq.Lost = lost
	}
}

// PartQueues returns every partition's share of each of queues, queue by
// queue.
func (s *Store) PartQueues(queues []string) []PartQueue {
	out := make([]PartQueue, 0, len(queues)*len(s.Parts))
	for _, q := range queues {
		for p := range s.Parts {
			out = append(out, PartQueue{p, q})
		}
	}
	return out
}

// EnsureGroups creates the consumer group of each of queues in every
// partition, and the streams if needed, in one round trip. A group starts
// at ID 0, so entries added before it existed are read too.
func (s *Store) EnsureGroups(ctx context.Context, queues []string) error {
	pqs := s.PartQueues(queues)
	cmds := make([]*redis.StatusCmd, len(pqs))
	_, _ = s.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, pq := range pqs {
			cmds[i] = p.XGroupCreateMkStream(ctx, s.Parts[pq.Part].keysOf(pq.Queue).stream, Group, "0")
		}
		return nil
	})
	var errs []error
	for i, c := range cmds {
		if err := c.Err(); err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
			errs = append(errs, fmt.Errorf("rdb: create consumer group for queue %q in partition %d: %w", pqs[i].Queue, pqs[i].Part, err))
		}
	}
	return errors.Join(errs...)
}

// LeaveGroups deletes consumer from the group of each of queues in every
// partition where it holds no pending entries, in two round trips.
func (s *Store) LeaveGroups(ctx context.Context, queues []string, consumer string) error {
	pqs := s.PartQueues(queues)
	pend := make([]*redis.XPendingExtCmd, len(pqs))
	_, _ = s.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, pq := range pqs {
			pend[i] = p.XPendingExt(ctx, &redis.XPendingExtArgs{
				Stream: s.Parts[pq.Part].keysOf(pq.Queue).stream, Group: Group, Start: "-", End: "+", Count: 1, Consumer: consumer,
			})
		}
		return nil
	})
	var (
		errs []error
		free []PartQueue
	)
	for i, c := range pend {
		held, err := c.Result()
		switch {
		case IsNoGroup(err) || (err != nil && strings.Contains(err.Error(), "no such key")):
		case err != nil:
			errs = append(errs, fmt.Errorf("rdb: pending entries of %s in %q, partition %d: %w", consumer, pqs[i].Queue, pqs[i].Part, err))
		case len(held) == 0:
			free = append(free, pqs[i])
		}
	}
	del := make([]*redis.IntCmd, len(free))
	_, _ = s.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, pq := range free {
			del[i] = p.XGroupDelConsumer(ctx, s.Parts[pq.Part].keysOf(pq.Queue).stream, Group, consumer)
		}
		return nil
	})
	for i, c := range del {
		if err := c.Err(); err != nil && !IsNoGroup(err) {
			errs = append(errs, fmt.Errorf("rdb: delete consumer %s of %q in partition %d: %w", consumer, free[i].Queue, free[i].Part, err))
		}
	}
	return errors.Join(errs...)
}

// PruneConsumers deletes, in every partition's group of each of queues,
// the consumers other than self that hold nothing and have been idle
// longer than idle, in one round trip. It returns how many it deleted per
// queue.
func (s *Store) PruneConsumers(ctx context.Context, queues []string, self string, idle time.Duration) (map[string]int, error) {
	pqs := s.PartQueues(queues)
	calls := make([]*scriptCall, len(pqs))
	for i, pq := range pqs {
		calls[i] = &scriptCall{script: pruneConsumersScript, keys: []string{s.Parts[pq.Part].keysOf(pq.Queue).stream},
			args: []any{Group, idle.Milliseconds(), self}}
	}
	runScripts(ctx, s.C, calls)
	out := map[string]int{}
	var errs []error
	for i, c := range calls {
		n, err := c.cmd.Int()
		if err != nil {
			errs = append(errs, fmt.Errorf("rdb: prune idle consumers of %q in partition %d: %w", pqs[i].Queue, pqs[i].Part, err))
			continue
		}
		out[pqs[i].Queue] += n
	}
	return out, errors.Join(errs...)
}

// SetPaused pauses or resumes queue in every partition, in one round trip:
// servers stop taking its tasks (within about a second for a server
// already blocked in a read) until resumed. Tasks keep being enqueued, and
// delayed ones keep being forwarded.
func (s *Store) SetPaused(ctx context.Context, queue string, paused bool) error {
	_, err := s.C.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, r := range s.Parts {
			if paused {
				p.SAdd(ctx, r.K.Paused(), queue)
			} else {
				p.SRem(ctx, r.K.Paused(), queue)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rdb: pause queue %q (%v) in %d partitions: %w", queue, paused, len(s.Parts), err)
	}
	return nil
}

// WakeChannels are the partitions' wake channels, on which a delayed task
// that became the earliest of its queue's delayed set in a partition is
// announced. A forwarder subscribes to all of them on one connection: a
// PUBLISH reaches the subscribers of every node of a cluster.
func (s *Store) WakeChannels() []string {
	out := make([]string, len(s.Parts))
	for p, r := range s.Parts {
		out[p] = r.K.Wake()
	}
	return out
}

// AppendRun adds rec to the run records of kind, keeping about keep of
// them per partition: in the partition of rec's schedule (the isolated
// schedules' runs this is for), else in partition 0.
func (s *Store) AppendRun(ctx context.Context, kind string, rec *RunRecord, keep int) error {
	p := 0
	if rec.ScheduleID != "" {
		p = s.Layout.ForSchedule(rec.ScheduleID)
	}
	return s.Parts[p].AppendRun(ctx, kind, rec, keep)
}

// TrimDead drops the oldest dead letters of the namespace, over every
// partition, until at most max − room are left (at most 100 per call):
// the namespace-wide cap of DeadRetention, which a partition's finish
// script cannot keep alone, since it sees only its own partition's dead
// letters. Writers of dead letters call it, under the dead-letter lock,
// with room for what they are about to write (deadRoom). With one
// partition it does nothing: the finish script's own trim is exact.
//
// Each partition's count and oldest letters are read together (one
// script per partition, all in one pipeline), and
// each partition drops its oldest letters up to the newest of its victims
// (trimDeadScript). So a trim that runs while another drops letters sees,
// in each partition, either all of that partition's share of them or none,
// and picks its victims among the other's: concurrent trims never drop
// more than one alone would. It costs one round trip, and one more when
// there is something to drop.
func (s *Store) TrimDead(ctx context.Context, max, room int) error {
	if len(s.Parts) == 1 {
		return nil
	}
	for look := 4; ; look = 100 {
		calls := make([]*scriptCall, len(s.Parts))
		for i, r := range s.Parts {
			calls[i] = &scriptCall{script: oldestDeadScript, keys: []string{r.K.DeadIndex()}, args: []any{look}}
		}
		runScripts(ctx, s.C, calls)
		type letter struct {
			part int
			at   float64
		}
		var (
			all   []letter
			total int64
		)
		for p, c := range calls {
			res, err := c.cmd.Slice()
			if err == nil && len(res) != 2 {
				err = fmt.Errorf("unexpected reply %v", res)
			}
			if err != nil {
				return fmt.Errorf("rdb: oldest dead letters: %w", err)
			}
			n, _ := res[0].(int64)
			total += n
			zs, _ := res[1].([]any)
			for i := 1; i < len(zs); i += 2 {
				sc, _ := zs[i].(string)
				at, err := strconv.ParseFloat(sc, 64)
				if err != nil {
					return fmt.Errorf("rdb: oldest dead letters: bad score %q", sc)
				}
				all = append(all, letter{p, at})
			}
		}
		over := min(int(total)-max+room, 100)
		if over <= 0 {
			return nil
		}
		slices.SortFunc(all, func(a, b letter) int { return cmp.Compare(a.at, b.at) })
		count := make([]int, len(s.Parts))
		upTo := make([]float64, len(s.Parts))
		for _, l := range all[:min(over, len(all))] {
			count[l.part]++
			upTo[l.part] = l.at
		}
		if slices.Contains(count, look) && look < 100 {
			continue // a partition may hold more of the victims than were read
		}
		var trims []*scriptCall
		for p, n := range count {
			if n > 0 {
				r := s.Parts[p]
				trims = append(trims, &scriptCall{script: trimDeadScript, keys: []string{r.K.Dead(), r.K.DeadIndex()},
					args: []any{strconv.FormatFloat(upTo[p], 'f', -1, 64), n}})
			}
		}
		runScripts(ctx, s.C, trims)
		for _, c := range trims {
			if err := c.cmd.Err(); err != nil {
				return fmt.Errorf("rdb: drop the oldest dead letters: %w", err)
			}
		}
		return nil
	}
}
