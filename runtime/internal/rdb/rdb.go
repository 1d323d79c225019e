package rdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RDB runs the queue's Redis operations on one partition of a namespace
// (all of a layout-1 namespace). Store holds one per partition.
type RDB struct {
	C redis.UniversalClient
	K Keys
	// Part is the partition's index in its namespace's layout: the
	// Partition of the entries it returns.
	Part int

	names sync.Map // queue or kind name → *names, so hot paths build no strings
}

// names are the keys of one queue and of the kind of the same name.
type names struct {
	stream, delayed, runs string
}

// keysOf returns the cached key names for the queue (or kind) n.
func (r *RDB) keysOf(n string) *names {
	if v, ok := r.names.Load(n); ok {
		return v.(*names)
	}
	v, _ := r.names.LoadOrStore(n, &names{stream: r.K.Stream(n), delayed: r.K.Delayed(n), runs: r.K.Runs(n)})
	return v.(*names)
}

// New returns an RDB for namespace ns over c in the single-tag layout 1
// (keys under "{ns}:", partition 0).
func New(c redis.UniversalClient, ns string) *RDB {
	return &RDB{C: c, K: NewKeys(ns)}
}

// NewPart returns the RDB of partition part, whose keys are under prefix
// (keyspace.Layout.Partition).
func NewPart(c redis.UniversalClient, prefix string, part int) *RDB {
	return &RDB{C: c, K: KeysAt(prefix), Part: part}
}

// Entry is one stream entry delivered to this process.
type Entry struct {
	// Partition is the index of the partition whose stream holds the
	// entry; entry IDs are unique per stream only.
	Partition  int
	Queue      string
	ID         string // stream entry ID
	Msg        string // encoded Message
	Deliveries int64  // set by Reclaim; 0 for first deliveries
}

// IsNoGroup reports whether err says a stream or its consumer group is
// missing (after a Redis restart without persistence, or before the first
// server started).
func IsNoGroup(err error) bool {
	return err != nil && (errors.Is(err, ErrNoGroup) || strings.Contains(err.Error(), "NOGROUP"))
}

// EnsureGroup creates the consumer group of queue, and the stream if needed.
// The group starts at ID 0, so entries added before it existed are read too.
func (r *RDB) EnsureGroup(ctx context.Context, queue string) error {
	err := r.C.XGroupCreateMkStream(ctx, r.K.Stream(queue), Group, "0").Err()
	if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("rdb: create consumer group for queue %q: %w", queue, err)
	}
	return nil
}

// Enqueue adds the encoded message msg (whose ID is id) to queue, delayed
// until due if due is after now, claiming dedupKey for dedupTTL first when
// dedupTTL > 0. It returns the ID of the task that holds the dedup key and
// whether this call was a duplicate.
func (r *RDB) Enqueue(ctx context.Context, queue string, msg []byte, id string, due, now time.Time, dedupKey string, dedupTTL time.Duration) (string, bool, error) {
	it := &EnqueueItem{Queue: queue, Msg: msg, ID: id, Due: due, Now: now, DedupKey: dedupKey, DedupTTL: dedupTTL}
	if err := r.EnqueueItems(ctx, []*EnqueueItem{it}); err != nil {
		return "", false, err
	}
	return it.GotID, it.Duplicate, it.Err
}

// ErrNoGroup wraps the error of Fetch when some queues had no consumer
// group; the entries read from the other queues are returned with it.
var ErrNoGroup = errors.New("rdb: NOGROUP: consumer group missing")

// Fetch reads up to n new entries for consumer from queues, without
// blocking, draining earlier queues first, and skipping paused queues, which
// it returns. Queues without a consumer group are skipped too and reported
// by an error wrapping ErrNoGroup, returned along with the entries read from
// the others, which must be processed.
func (r *RDB) Fetch(ctx context.Context, consumer string, queues []string, n int) (entries []Entry, paused []string, err error) {
	streams := make([]partStream, len(queues))
	for i, q := range queues {
		streams[i] = partStream{r, q}
	}
	keys, args := fetchCall(consumer, streams, n)
	res, err := fetchScript.Run(ctx, r.C, keys, args...).Slice()
	if err != nil {
		return nil, nil, fmt.Errorf("rdb: fetch: %w", err)
	}
	entries, ps, err := decodeFetch(res, streams, nil)
	for _, p := range ps {
		paused = append(paused, p.Queue)
	}
	return entries, paused, err
}

// partStream is one queue's stream in one partition, as a fetch reads it.
type partStream struct {
	r     *RDB
	queue string
}

// fetchCall is the keys and arguments of one fetch script call that reads
// streams in order (see fetchSrc): the paused sets, then the streams. The
// streams of one queue must be consecutive; when there are several of a
// queue (the shares of several partitions), every queue has the same
// partitions, in the same order, and their paused sets come first.
func fetchCall(consumer string, streams []partStream, n int) ([]string, []any) {
	k := 1 // streams per queue
	for k < len(streams) && streams[k].queue == streams[0].queue {
		k++
	}
	var keys []string
	if k == 1 {
		keys = make([]string, 1, len(streams)+1)
		keys[0] = streams[0].r.K.paused
	} else {
		keys = make([]string, k, len(streams)+k)
		for t := range k {
			keys[t] = streams[t].r.K.paused
		}
	}
	m := len(keys)
	args := make([]any, 4, 4+2*len(streams)/k)
	args[0], args[1], args[2], args[3] = Group, consumer, n, m
	for i, st := range streams {
		keys = append(keys, st.r.keysOf(st.queue).stream)
		if i%k == 0 {
			args = append(args, st.queue, k)
		}
	}
	return keys, args
}

// decodeFetch reads the reply of a fetch script call over streams: the
// entries read, the streams whose queue is paused (appended to paused), and
// an error wrapping ErrNoGroup naming the streams without a consumer group.
func decodeFetch(res []any, streams []partStream, paused []PartQueue) ([]Entry, []PartQueue, error) {
	out := make([]Entry, 0, len(res)/3)
	var missing []string
	for i := 0; i+2 < len(res); i += 3 {
		si, _ := res[i].(int64)
		id, _ := res[i+1].(string)
		msg, _ := res[i+2].(string)
		if si < 1 || int(si) > len(streams) {
			return out, paused, fmt.Errorf("rdb: fetch: bad stream index %d", si)
		}
		st := streams[si-1]
		switch {
		case id == "" && msg == "paused":
			paused = append(paused, PartQueue{st.r.Part, st.queue})
		case id == "":
			if !slices.Contains(missing, st.queue) {
				missing = append(missing, st.queue)
			}
		default:
			out = append(out, Entry{Partition: st.r.Part, Queue: st.queue, ID: id, Msg: msg})
		}
	}
	if len(missing) > 0 {
		return out, paused, fmt.Errorf("%w for queues %q", ErrNoGroup, missing)
	}
	return out, paused, nil
}

// SetPaused pauses or resumes queue: servers stop taking its tasks (within
// about a second for a server already blocked in a read) until resumed.
// Tasks keep being enqueued, and delayed ones keep being forwarded.
func (r *RDB) SetPaused(ctx context.Context, queue string, paused bool) error {
	var err error
	if paused {
		err = r.C.SAdd(ctx, r.K.Paused(), queue).Err()
	} else {
		err = r.C.SRem(ctx, r.K.Paused(), queue).Err()
	}
	if err != nil {
		return fmt.Errorf("rdb: pause queue %q (%v): %w", queue, paused, err)
	}
	return nil
}

// Outcome is how a delivery ended.
type Outcome string

// The outcomes of a delivery.
const (
	Done  Outcome = "done"  // succeeded; the entry is acknowledged and deleted
	Retry Outcome = "retry" // failed; the updated message waits in the delayed set
	Dead  Outcome = "dead"  // failed for good; the message moves to the dead letters
)

// Finish describes the end of one delivery.
type Finish struct {
	Partition int // the entry's (Entry.Partition), for Store and FinishBatcher
	Queue     string
	EntryID   string
	Outcome   Outcome
	TaskID    string
	Kind      string
	Msg       []byte     // updated message (Retry and Dead)
	At        time.Time  // due time (Retry) or time of death (Dead)
	RunsCap   int        // keep about this many run records per kind; 0 keeps none
	DeadCap   int        // keep at most this many dead letters
	Run       *RunRecord // the run record to append; nil appends none
	Overlap   string     // the task's overlap marker, if any (overlap.go)
}

// FinishResult says what Finish did.
type FinishResult int

// The results of Finish.
const (
	Finished    FinishResult = 1  // the delivery ended as asked
	AlreadyDone FinishResult = 0  // the entry was no longer pending; nothing changed
	LeaseLost   FinishResult = -1 // another consumer holds the entry now; nothing changed
)

// Finish ends a delivery in one round trip, if consumer still holds it.
func (r *RDB) Finish(ctx context.Context, consumer string, f *Finish) (FinishResult, error) {
	keys, args := r.finishCall(consumer, f)
	n, err := finishScript.Run(ctx, r.C, keys, args...).Int64()
	if err != nil {
		return 0, fmt.Errorf("rdb: finish task %s (%s): %w", f.TaskID, f.Outcome, err)
	}
	return FinishResult(n), nil
}

// finishCall is the keys and arguments of the finish script for f.
func (r *RDB) finishCall(consumer string, f *Finish) ([]string, []any) {
	q := r.keysOf(f.Queue)
	keys := []string{q.stream, r.keysOf(f.Kind).runs, q.delayed, r.K.Dead(), r.K.DeadIndex()}
	if f.Overlap != "" {
		keys = append(keys, r.K.OverlapActive(f.Overlap), r.K.OverlapBuffer(f.Overlap), r.K.OverlapWhere(f.Overlap))
	}
	args := make([]any, 0, 30)
	var score int64
	if !f.At.IsZero() {
		score = f.At.UnixMilli()
	}
	msg := f.Msg
	if msg == nil {
		msg = []byte{}
	}
	args = append(args, Group, f.EntryID, string(f.Outcome), f.RunsCap, f.TaskID, msg, score, r.K.Wake(), f.DeadCap, consumer)
	if f.Run != nil {
		args = append(args, f.Run.Fields()...)
	}
	return keys, args
}

// Forward moves up to limit delayed tasks of queue that are due at now to
// its stream. It returns how many it moved and when the earliest remaining
// one is due (zero if none).
func (r *RDB) Forward(ctx context.Context, queue string, now time.Time, limit int) (int, time.Time, error) {
	return forwardResult(queue, forwardScript.Run(ctx, r.C, []string{r.K.Delayed(queue), r.K.Stream(queue)}, now.UnixMilli(), limit))
}

// forwardResult reads the forward script's reply for queue.
func forwardResult(queue string, cmd *redis.Cmd) (int, time.Time, error) {
	res, err := cmd.Slice()
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("rdb: forward delayed tasks of %q: %w", queue, err)
	}
	if len(res) != 2 {
		return 0, time.Time{}, fmt.Errorf("rdb: forward delayed tasks of %q: unexpected reply %v", queue, res)
	}
	moved, _ := res[0].(int64)
	var next time.Time
	if s, _ := res[1].(string); s != "-1" {
		ms, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, time.Time{}, fmt.Errorf("rdb: forward delayed tasks of %q: bad score %q", queue, s)
		}
		next = time.UnixMilli(int64(ms))
	}
	return int(moved), next, nil
}

// Reclaim takes over up to count entries of queue whose lease (idle time)
// exceeds minIdle, scanning the pending list from cursor ("0-0" to start).
// It returns them with their delivery counts and the cursor for the next
// call ("0-0" once the scan wrapped around).
func (r *RDB) Reclaim(ctx context.Context, queue, consumer string, minIdle time.Duration, cursor string, count int) ([]Entry, string, error) {
	cmd := reclaimScript.Run(ctx, r.C, []string{r.K.Stream(queue)}, Group, consumer, minIdle.Milliseconds(), cursor, count)
	return r.reclaimResult(queue, cursor, cmd)
}

// reclaimResult reads the reclaim script's reply for queue, scanned from
// cursor.
func (r *RDB) reclaimResult(queue, cursor string, cmd *redis.Cmd) ([]Entry, string, error) {
	res, err := cmd.Slice()
	if err != nil {
		return nil, cursor, fmt.Errorf("rdb: reclaim expired leases of %q: %w", queue, err)
	}
	if len(res) == 0 {
		return nil, "0-0", nil
	}
	next, _ := res[0].(string)
	var out []Entry
	for i := 1; i+2 < len(res); i += 3 {
		id, _ := res[i].(string)
		msg, _ := res[i+1].(string)
		n, _ := res[i+2].(int64)
		out = append(out, Entry{Partition: r.Part, Queue: queue, ID: id, Msg: msg, Deliveries: n})
	}
	return out, next, nil
}

// Extend renews consumer's leases on the entries ids of queue and returns
// the IDs whose lease was already lost to another consumer.
func (r *RDB) Extend(ctx context.Context, queue, consumer string, ids []string) ([]string, error) {
	return r.lease(ctx, queue, consumer, ids, 0)
}

// Release gives consumer's entries ids of queue back for immediate recovery
// by any worker, without counting the delivery.
func (r *RDB) Release(ctx context.Context, queue, consumer string, ids []string, idle time.Duration) error {
	if idle < time.Millisecond {
		idle = time.Millisecond
	}
	_, err := r.lease(ctx, queue, consumer, ids, idle)
	return err
}

func (r *RDB) lease(ctx context.Context, queue, consumer string, ids []string, idle time.Duration) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	keys, args := leaseCall(r, queue, consumer, ids, idle)
	lost, err := leaseScript.Run(ctx, r.C, keys, args...).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("rdb: lease on %d tasks of %q: %w", len(ids), queue, err)
	}
	return lost, nil
}

// leaseCall is the keys and arguments of the lease script: renew (idle 0)
// or release consumer's entries ids of queue in r's partition.
func leaseCall(r *RDB, queue, consumer string, ids []string, idle time.Duration) ([]string, []any) {
	args := make([]any, 0, 3+len(ids))
	args = append(args, Group, consumer, idle.Milliseconds())
	for _, id := range ids {
		args = append(args, id)
	}
	return []string{r.keysOf(queue).stream}, args
}

// PruneConsumers deletes the consumers of queue's group, other than self,
// that hold nothing and have been idle longer than idle. It returns how many
// it deleted.
func (r *RDB) PruneConsumers(ctx context.Context, queue, self string, idle time.Duration) (int, error) {
	n, err := pruneConsumersScript.Run(ctx, r.C, []string{r.K.Stream(queue)}, Group, idle.Milliseconds(), self).Int()
	if err != nil {
		return 0, fmt.Errorf("rdb: prune idle consumers of %q: %w", queue, err)
	}
	return n, nil
}

// EnqueueItem is one task to enqueue.
type EnqueueItem struct {
	// To is the partition the task goes to (Store.PartFor chooses it);
	// nil means the RDB whose EnqueueItems is called.
	To       *RDB
	Queue    string
	Msg      []byte // the encoded Message
	ID       string // its ID
	Due      time.Time
	Now      time.Time // the enqueuer's clock: Due after Now delays the task
	DedupKey string
	DedupTTL time.Duration // > 0 claims DedupKey for this long first

	// Set by EnqueueItems.
	GotID     string // the task's ID, or for a duplicate that of the task holding the dedup key
	Duplicate bool
	Err       error
}

// direct reports whether the item needs no script: it is ready now and
// claims no dedup key, so the enqueue is a bare XADD, the same command the
// enqueue script would run, for a fifth of the script's cost in Redis.
func (it *EnqueueItem) direct() bool {
	return it.DedupTTL <= 0 && (it.Due.IsZero() || it.Due.UnixMilli() <= it.Now.UnixMilli())
}

// EnqueueItems enqueues items in one round trip (a pipeline, for more than
// one); items without a partition (To) go to r's. See EnqueueItems.
func (r *RDB) EnqueueItems(ctx context.Context, items []*EnqueueItem) error {
	for _, it := range items {
		if it.To == nil {
			it.To = r
		}
	}
	return EnqueueItems(ctx, r.C, items)
}

// EnqueueItems enqueues items, each into its partition (To), over c in one
// round trip (a pipeline, for more than one; a cluster client sends it as
// one pipeline per master, in parallel). Each item is atomic on its own
// (the batch is not a transaction); per-item results and errors are stored
// in the items. Items that met a NOSCRIPT (a restarted or promoted Redis
// has an empty script cache) are sent again once the script is loaded, so
// no item is enqueued twice. The error is the one that stopped items from
// being sent at all.
func EnqueueItems(ctx context.Context, c redis.UniversalClient, items []*EnqueueItem) error {
	if len(items) == 1 { // nothing to share
		it := items[0]
		if it.direct() {
			cmd := xaddCmd(ctx, it)
			_ = c.Process(ctx, cmd)
			enqueueResult(it, cmd)
			return nil
		}
		keys, args := enqueueCall(it)
		enqueueResult(it, enqueueScript.Run(ctx, c, keys, args...)) // Run handles NOSCRIPT itself
		return nil
	}
	todo := items
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt > 0 {
			if err := enqueueScript.Load(ctx, c).Err(); err != nil {
				err = fmt.Errorf("rdb: load enqueue script: %w", err)
				for _, it := range todo {
					it.Err = err
				}
				return err
			}
		}
		p := c.Pipeline()
		cmds := make([]redis.Cmder, len(todo))
		for i, it := range todo {
			cmds[i] = enqueueCmd(ctx, it)
			_ = p.Process(ctx, cmds[i])
		}
		_, _ = p.Exec(ctx)
		var again []*EnqueueItem
		for i, it := range todo {
			if err := cmds[i].Err(); attempt < 2 && isNoScript(err) {
				again = append(again, it)
				continue
			}
			enqueueResult(it, cmds[i])
		}
		todo = again
	}
	return nil
}

func isNoScript(err error) bool {
	return errors.Is(err, redis.ErrNoScript) || redis.HasErrorPrefix(err, "NOSCRIPT")
}

// xaddCmd is the bare XADD of an item that needs no script.
func xaddCmd(ctx context.Context, it *EnqueueItem) *redis.StringCmd {
	return redis.NewStringCmd(ctx, "xadd", it.To.keysOf(it.Queue).stream, "*", "m", it.Msg)
}

// enqueueCall is the keys and arguments of the enqueue script for it.
func enqueueCall(it *EnqueueItem) ([]string, []any) {
	r := it.To
	q := r.keysOf(it.Queue)
	key := it.DedupKey
	if it.DedupTTL <= 0 {
		key = ""
	}
	return []string{q.stream, q.delayed, r.K.Dedup(key)}, r.K.EnqueueArgs(it.Msg, it.ID, it.Due, it.Now, it.DedupTTL)
}

// IsWrongType reports whether err is Redis's WRONGTYPE: a command met a key
// of another type. An enqueue meets it when the namespace was migrated to
// partitions since its layout was read (chronos migrate leaves a string in
// place of each layout-1 stream and delayed set).
func IsWrongType(err error) bool {
	return err != nil && strings.Contains(err.Error(), "WRONGTYPE")
}

// enqueueResult stores the reply of it's command in it.
func enqueueResult(it *EnqueueItem, cmd redis.Cmder) {
	if err := cmd.Err(); err != nil {
		it.Err = fmt.Errorf("rdb: enqueue to %q: %w", it.Queue, err)
		return
	}
	c, ok := cmd.(*redis.Cmd)
	if !ok { // XADD: the entry ID is of no interest
		it.GotID = it.ID
		return
	}
	res, err := c.Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("unexpected reply %v", res)
	}
	if err != nil {
		it.Err = fmt.Errorf("rdb: enqueue to %q: %w", it.Queue, err)
		return
	}
	it.GotID, _ = res[0].(string)
	dup, _ := res[1].(int64)
	it.Duplicate = dup == 1
}
