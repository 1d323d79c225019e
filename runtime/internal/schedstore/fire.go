package schedstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/leader"
)

// Fire is the state change of one firing.
type Fire struct {
	// At is the trigger time that fired.
	At time.Time
	// Next is the schedule's next fire time (zero: none).
	Next time.Time
	// Outcome is a short word for operators: "enqueued", "skipped:overlap", …
	Outcome string
}

// recordFireScript updates a schedule's state after a firing, inside the
// term of the leader that fired. last_fired only moves forward, so a late
// or repeated record cannot rewind the state catch-up relies on.
//
//	KEYS[1] lease, KEYS[2] schedule hash
//	ARGV[1] token, ARGV[2] at (ms), ARGV[3] next (ms), ARGV[4] outcome
//
// Returns 1 when recorded, 0 when the schedule does not exist, 2 when a
// later firing was already recorded.
var recordFireScript = leader.FenceScript(`
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local last = tonumber(redis.call('HGET', KEYS[2], 'last_fired') or '0')
if tonumber(ARGV[2]) <= last then return 2 end
redis.call('HSET', KEYS[2], 'last_fired', ARGV[2], 'next_fire', ARGV[3], 'last_outcome', ARGV[4])
redis.call('HINCRBY', KEYS[2], 'times_triggered', 1)
return 1
`)

// ErrStale is returned (wrapped) by RecordFire when a later firing of the
// schedule was already recorded.
var ErrStale = errors.New("schedstore: a later firing is already recorded")

// RecordFire records firing f of schedule id under leadership term t. It
// returns an error wrapping leader.ErrFenced if t no longer holds the lease.
//
// The scheduler's real firing path performs the same update inside its own
// fenced enqueue script (using the Field constants), so the enqueue and the
// state change are one atomic step; RecordFire is that step on its own, for
// firings that enqueue nothing (skipped by policy) and for tools.
func (s *Store) RecordFire(ctx context.Context, t leader.Term, id string, f Fire) error {
	n, err := recordFireScript.Run(ctx, s.rdb,
		leader.FenceKeys(s.cfg.Namespace, s.keys.sched(id)),
		leader.FenceArgs(t, ms(f.At), ms(f.Next), f.Outcome)...).Int()
	if err := leader.CheckFence(err); err != nil {
		return fmt.Errorf("schedstore: record fire of %q at %v: %w", id, f.At, err)
	}
	switch n {
	case 0:
		return fmt.Errorf("schedstore: record fire of %q: %w", id, ErrNotFound)
	case 2:
		return fmt.Errorf("schedstore: record fire of %q at %v: %w", id, f.At, ErrStale)
	}
	return nil
}
