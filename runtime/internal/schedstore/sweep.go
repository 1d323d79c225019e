package schedstore

import (
	"context"
	"fmt"
	"strconv"
)

// SweepResult reports what Sweep did.
type SweepResult struct {
	// Live is the number of live instances.
	Live int
	// Full reports whether the sweep read the whole registry. A sweep that
	// found nothing changed since the last full one reads only the live
	// instances.
	Full bool
	// Handed lists schedules whose definition passed to another live
	// declarer (the previous one died or stopped declaring it), and
	// schedules created from a live declaration they were missing.
	Handed []string
	// Retired lists schedules retired by this sweep: no live instance has
	// declared them for about a heartbeat (two sweeps saw none), so the
	// leader stops firing them; their state is kept (a tombstone).
	Retired []string
	// Revived lists retired schedules that a live instance declares again
	// (a rollback): they fire again, from their state.
	Revived []string
	// Deleted lists schedules deleted, state and history, because no live
	// instance declared them for RetireGrace.
	Deleted []string
}

// Sweep applies the rolling-deploy rule to the whole registry; the leader
// runs it periodically (about once per InstanceTTL is plenty). For every
// schedule it:
//
//   - marks it declared now if any live instance declares it;
//   - hands its definition to the highest-ranked live declarer if the
//     current declarer is gone or no longer declares it (so a rollback
//     takes effect when the newer instances stop), and creates it from a
//     live declaration if it is missing;
//   - retires it (a tombstone: the leader stops firing it, its state is
//     kept) once no live instance has declared it for about a heartbeat,
//     and revives it if one declares it again;
//   - deletes it, state and history, when no live instance has declared
//     it for RetireGrace.
//
// Reading the whole registry costs a command per schedule, so Sweep does it
// only when something it depends on may have changed since this Store's
// last full sweep: the live instances, their ranks or their declarations
// (each instance's hash carries a digest of its declarations, written by
// Register), work that sweep left undone, a retirement falling due, or
// Config.FullSweepInterval elapsing. Otherwise it reads just the live
// instances and records, in one small hash, that the declarations the last
// full sweep saw still stood, which keeps "last declared" exact for
// retirement without a write per schedule.
//
// Sweep reads everything first and writes with compare-and-set scripts, so
// it is safe to run while instances register; a lost race is settled by
// the next sweep.
func (s *Store) Sweep(ctx context.Context) (SweepResult, error) { return s.sweep(ctx, false) }

// FullSweep is Sweep reading the whole registry whatever the last sweeps
// saw. A new leader's first sweep must be full: this Store's memory of its
// last full sweep may predate other leaders' terms.
func (s *Store) FullSweep(ctx context.Context) (SweepResult, error) { return s.sweep(ctx, true) }

func (s *Store) sweep(ctx context.Context, full bool) (SweepResult, error) {
	s.sweepMu.Lock()
	defer s.sweepMu.Unlock()
	now := s.cfg.Now()
	live, rec, err := s.readLive(ctx, now)
	if err != nil {
		return SweepResult{}, err
	}
	if !full && s.memo.current(live, now, s.cfg.FullSweepInterval) {
		ok, err := confirmScript.Run(ctx, s.client, []string{s.keys.sweep()},
			strconv.FormatInt(s.memo.full.UnixMilli(), 10), now.UnixMilli()).Int()
		if err != nil {
			return SweepResult{}, fmt.Errorf("schedstore: sweep: confirm: %w", err)
		}
		if ok == 1 {
			return SweepResult{Live: len(live)}, nil
		}
		// Another full sweep (another leader's) wrote the record since
		// ours: what ours saw no longer tells what the registry holds.
	}
	if full {
		// A new term: what this Store saw in an earlier one may be hours
		// old, so a schedule it found undeclared then gets a second look.
		clear(s.orphanSince)
	}
	// Until this pass completes, the next sweep must be full again.
	s.memo = sweepMemo{}
	res, memo, err := s.fullPass(ctx, now, live, rec)
	if err != nil {
		return res, err
	}
	s.memo = memo
	return res, nil
}
