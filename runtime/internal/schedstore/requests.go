package schedstore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RequestKind says what an operator asked for.
type RequestKind string

const (
	// KindTriggerNow asks for one extra firing now.
	KindTriggerNow RequestKind = "trigger"
	// KindBackfill asks for the firings of a past time range.
	KindBackfill RequestKind = "backfill"
)

// Request is a durable operator request. It stays in the store until the
// leader calls CompleteRequest, so a leader change between reading and
// acting on it loses nothing; the ID gives the firing path a dedup identity
// so that acting on it twice enqueues once.
type Request struct {
	ID       string      `json:"id"` // time-ordered
	Kind     RequestKind `json:"kind"`
	Schedule string      `json:"schedule"`
	From     time.Time   `json:"from,omitzero"` // backfill range, inclusive
	To       time.Time   `json:"to,omitzero"`   // backfill range, inclusive
	Who      string      `json:"who,omitempty"`
	Created  time.Time   `json:"created"`
	// Planned is how many fire times a backfill's range holds, counted
	// when it was requested.
	Planned int `json:"planned,omitempty"`
	// Next and Fired are a backfill's progress: the leader fires its range
	// a chunk at a time, from Next (zero: From), and has fired Fired so far.
	Next  time.Time `json:"next,omitzero"`
	Fired int       `json:"fired,omitempty"`
}

// ErrInvalidRequest is returned (wrapped) for a malformed request.
var ErrInvalidRequest = errors.New("schedstore: invalid request")

// addRequestScript stores a request if its schedule exists.
//
//	KEYS[1] schedule hash, KEYS[2] requests index, KEYS[3] request data
//	ARGV[1] request ID, ARGV[2] created (ms), ARGV[3] JSON Request
//
// Returns 1 when stored, 0 when the schedule does not exist.
var addRequestScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
`)

// RequestTrigger asks the leader to fire schedule id once, now.
func (s *Store) RequestTrigger(ctx context.Context, id, who string) (Request, error) {
	return s.addRequest(ctx, Request{Kind: KindTriggerNow, Schedule: id, Who: who})
}

// RequestBackfill asks the leader to fire schedule id for every trigger
// time in [from, to], of which the caller counted planned.
func (s *Store) RequestBackfill(ctx context.Context, id string, from, to time.Time, planned int, who string) (Request, error) {
	if from.IsZero() || to.Before(from) {
		return Request{}, fmt.Errorf("%w: backfill of %q: range [%v, %v]", ErrInvalidRequest, id, from, to)
	}
	return s.addRequest(ctx, Request{Kind: KindBackfill, Schedule: id, From: from.UTC(), To: to.UTC(), Planned: planned, Who: who})
}

// advanceRequestScript stores a request's new data if it is still pending.
//
//	KEYS[1] requests index, KEYS[2] request data
//	ARGV[1] request ID, ARGV[2] JSON Request
//
// Returns 1 when stored, 0 when the request is no longer pending.
var advanceRequestScript = redis.NewScript(`
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
`)

// AdvanceRequest records a backfill's progress (r.Next, r.Fired), so that
// the next leader continues from there. It reports whether the request was
// still pending.
func (s *Store) AdvanceRequest(ctx context.Context, r Request) (bool, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return false, fmt.Errorf("schedstore: advance request %s: %w", r.ID, err)
	}
	pk := s.keys.of(r.Schedule)
	n, err := advanceRequestScript.Run(ctx, s.client, []string{pk.requests, pk.reqData}, r.ID, data).Int()
	if err != nil {
		return false, fmt.Errorf("schedstore: advance request %s: %w", r.ID, err)
	}
	return n == 1, nil
}

// requestSeq makes the suffixes of a Store's request IDs: a random 47-bit
// number for the first request of a millisecond, then that number plus
// one for each further request of the same millisecond (the monotonic
// rule of ULIDs). Without it, two requests made in the same millisecond,
// as a program triggering a schedule and then backfilling it makes them,
// sorted by random suffixes: the leader could carry the later one out
// first, its firings then coming first in the queue and the history.
// Requests made in the same millisecond through different Stores (two
// processes, two operators) are concurrent and keep a random order.
type requestSeq struct {
	mu sync.Mutex
	ms int64
	n  uint64
}

// id returns the ID of a request created at ms (unix milliseconds): ms in
// 13 digits, "-", the suffix in 12 hex digits, which sorts after those of
// the IDs made before in the same millisecond.
func (q *requestSeq) id(ms int64) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if ms != q.ms || q.n+1 >= 1<<48 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		q.ms, q.n = ms, binary.BigEndian.Uint64(b[:])>>17
	} else {
		q.n++
	}
	return fmt.Sprintf("%013d-%012x", ms, q.n)
}

func (s *Store) addRequest(ctx context.Context, r Request) (Request, error) {
	r.Created = s.cfg.Now().UTC()
	r.ID = s.reqSeq.id(r.Created.UnixMilli())
	data, err := json.Marshal(r)
	if err != nil {
		return Request{}, fmt.Errorf("schedstore: %s request for %q: %w", r.Kind, r.Schedule, err)
	}
	pk := s.keys.of(r.Schedule)
	n, err := addRequestScript.Run(ctx, s.client,
		[]string{s.keys.sched(r.Schedule), pk.requests, pk.reqData},
		r.ID, r.Created.UnixMilli(), data).Int()
	switch {
	case err != nil:
		return Request{}, fmt.Errorf("schedstore: %s request for %q: %w", r.Kind, r.Schedule, err)
	case n == 0:
		return Request{}, fmt.Errorf("schedstore: %s request for %q: %w", r.Kind, r.Schedule, ErrNotFound)
	}
	return r, nil
}

// Requests returns up to limit pending requests of every partition, oldest
// first (limit <= 0: all): one pipeline for the partitions' indexes, one
// for the requests.
func (s *Store) Requests(ctx context.Context, limit int) ([]Request, error) {
	ps := make([]int, len(s.keys.parts))
	for i := range ps {
		ps[i] = i
	}
	return s.RequestsIn(ctx, limit, ps...)
}

// RequestsIn returns up to limit pending requests of partitions ps, oldest
// first (limit <= 0: all): those a partition's leader carries out, or
// those of the partitions of an instance's isolated schedules.
func (s *Store) RequestsIn(ctx context.Context, limit int, ps ...int) ([]Request, error) {
	stop := int64(limit) - 1
	if limit <= 0 {
		stop = -1
	}
	idx := make([]*redis.StringSliceCmd, len(ps))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for k, i := range ps {
			idx[k] = p.ZRange(ctx, s.keys.parts[i].requests, 0, stop)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schedstore: requests: %w", err)
	}
	data := make([]*redis.SliceCmd, len(ps))
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for k, i := range ps {
			if ids := idx[k].Val(); len(ids) > 0 {
				data[k] = p.HMGet(ctx, s.keys.parts[i].reqData, ids...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schedstore: requests: %w", err)
	}
	var out []Request
	for k, c := range data {
		if c == nil {
			continue
		}
		ids := idx[k].Val()
		for j, v := range c.Val() {
			str, ok := v.(string)
			if !ok {
				continue // completed between the two reads
			}
			var r Request
			if err := json.Unmarshal([]byte(str), &r); err != nil {
				return nil, fmt.Errorf("schedstore: request %s: %w", ids[j], err)
			}
			out = append(out, r)
		}
	}
	// Request IDs start with their creation time, and those of one
	// millisecond made by one Store sort in the order made: oldest first.
	slices.SortFunc(out, func(a, b Request) int { return strings.Compare(a.ID, b.ID) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// CompleteRequest removes request r (by its ID, in its schedule's
// partition) once the leader has acted on it. It reports whether the
// request was still pending.
func (s *Store) CompleteRequest(ctx context.Context, r Request) (bool, error) {
	pk := s.keys.of(r.Schedule)
	var zrem *redis.IntCmd
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		zrem = p.ZRem(ctx, pk.requests, r.ID)
		p.HDel(ctx, pk.reqData, r.ID)
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("schedstore: complete request %s: %w", r.ID, err)
	}
	return zrem.Val() == 1, nil
}
