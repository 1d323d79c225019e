package schedstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/chronos-go/chronos/runtime/internal/leader"
)

// saveStateScript writes a schedule's trigger state inside the term of the
// leader that computed it. Prev (last_fired) never moves back, so a late or
// replayed write from an earlier evaluation cannot rewind what catch-up
// relies on; writing the same state again is harmless.
//
//	KEYS[1] lease, KEYS[2] schedule hash
//	ARGV[1] token, ARGV[2] prev (ms), ARGV[3] next (ms), ARGV[4] start (ms),
//	ARGV[5] times triggered, ARGV[6] repeat count, ARGV[7] complete (1/0),
//	ARGV[8] outcome, ARGV[9] now (ms)
//
// Returns 1 when saved, 0 when the schedule does not exist, 2 when the
// stored state has a later Prev.
var saveStateScript = leader.FenceScript(`
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local prev = tonumber(redis.call('HGET', KEYS[2], 'last_fired') or '0')
if tonumber(ARGV[2]) < prev then return 2 end
redis.call('HSET', KEYS[2], 'last_fired', ARGV[2], 'next_fire', ARGV[3], 'trigger_start', ARGV[4],
  'times_triggered', ARGV[5], 'repeat_count', ARGV[6], 'last_outcome', ARGV[8], 'state_saved', ARGV[9])
if ARGV[7] == '1' then
  redis.call('HSET', KEYS[2], 'complete', '1')
else
  redis.call('HDEL', KEYS[2], 'complete')
end
return 1
`)

// ErrStale is returned (wrapped) by SaveState when the stored state already
// has a later Prev than the one being saved.
var ErrStale = errors.New("schedstore: a later firing is already recorded")

// SaveState stores ts as schedule id's trigger state under leadership term
// t, with an outcome word for operators ("enqueued", "skipped:overlap",
// "misfire:doNothing", …). It returns an error wrapping leader.ErrFenced if
// t no longer holds the lease, ErrStale if a later firing is already
// recorded, ErrNotFound if the schedule does not exist.
//
// The scheduler's firing path makes the same update inside its own fenced
// enqueue script (with the Field constants), so that the enqueue and the
// state change are one atomic step; SaveState is that step on its own, for
// evaluations that enqueue nothing (skipped by policy, misfire doNothing)
// and for tools.
func (s *Store) SaveState(ctx context.Context, t leader.Term, id string, ts TriggerState, outcome string) error {
	complete := "0"
	if ts.Complete {
		complete = "1"
	}
	n, err := saveStateScript.Run(ctx, s.rdb,
		leader.FenceKeys(s.cfg.Namespace, s.keys.sched(id)),
		leader.FenceArgs(t, ms(ts.Prev), ms(ts.Next), ms(ts.Start), ts.TimesTriggered, ts.RepeatCount,
			complete, outcome, s.cfg.Now().UnixMilli())...).Int()
	if err := leader.CheckFence(err); err != nil {
		return fmt.Errorf("schedstore: save state of %q: %w", id, err)
	}
	switch n {
	case 0:
		return fmt.Errorf("schedstore: save state of %q: %w", id, ErrNotFound)
	case 2:
		return fmt.Errorf("schedstore: save state of %q (prev %v): %w", id, ts.Prev, ErrStale)
	}
	return nil
}
