package schedstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// liveInstance is a live instance as Sweep compares it between sweeps: its
// rank and the digest of its declarations, exactly as stored.
type liveInstance struct {
	id, version, started, digest string
}

func (in liveInstance) declarer() Declarer {
	return Declarer{InstanceID: in.id, Version: in.version, Started: msTime(in.started)}
}

// sweepRecord is the {<ns>}:sweep hash: the last full pass marked every
// schedule it found declared with score full, and the sweeps after it found
// the same live instances with the same declarations until confirmed. So a
// schedule whose "last declared" score is at least full was still declared
// at confirmed, although no sweep wrote that score: the steady-state sweep
// writes this one record instead of a score per schedule.
type sweepRecord struct {
	full, confirmed int64 // Unix ms; zero when there is no record
}

// vouches reports whether the record vouches that a schedule marked
// declared at score was still declared at r.confirmed.
func (r sweepRecord) vouches(score int64) bool {
	return r.full > 0 && score >= r.full && score < r.confirmed
}

// confirmScript moves the record's confirmed time on if the record is still
// the one the caller's last full pass wrote.
//
//	KEYS[1] sweep record
//	ARGV[1] full (ms) of the caller's last full pass, ARGV[2] now (ms)
//
// Returns 1 when confirmed, 0 when another full pass wrote the record since
// (or it is gone).
var confirmScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'full') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'confirmed', ARGV[2])
return 1
`)

// sweepMemo is what a Store remembers of its last full pass, to tell
// whether a sweep may skip the next one.
type sweepMemo struct {
	valid bool
	live  []liveInstance // the live instances it read, by ID
	full  time.Time      // when it ran (the score of its "declared" marks)
	// undone is set when it left work for a later sweep: a claim that lost
	// its compare-and-set, a declaration that vanished or could not be
	// read, a retirement refused because the schedule was declared again.
	undone bool
	// retireDue is when the oldest schedule no live instance declared
	// falls due for retirement; zero when there is none.
	retireDue time.Time
}

// current reports whether nothing a full pass depends on can have changed
// since m was recorded, so a sweep at now that finds live may skip the
// full pass. every is Config.FullSweepInterval.
func (m *sweepMemo) current(live []liveInstance, now time.Time, every time.Duration) bool {
	switch {
	case !m.valid || m.undone || every < 0:
		return false
	case now.Before(m.full) || now.Sub(m.full) >= every:
		return false
	case !m.retireDue.IsZero() && !now.Before(m.retireDue):
		return false
	}
	for _, in := range live {
		if in.digest == "" {
			// An instance of a version that does not publish its digest:
			// its declarations may change unseen.
			return false
		}
	}
	return slices.Equal(m.live, live)
}

// readLive returns the live instances at now, by ID, with their rank and
// declaration digest, and the sweep record: two round trips, whatever the
// number of schedules.
func (s *Store) readLive(ctx context.Context, now time.Time) ([]liveInstance, sweepRecord, error) {
	ids, err := s.liveIDs(ctx, now)
	if err != nil {
		return nil, sweepRecord{}, err
	}
	infos := make([]*redis.SliceCmd, len(ids))
	var rec *redis.SliceCmd
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			infos[i] = p.HMGet(ctx, s.keys.instance(id), "version", "started", fieldDeclDigest)
		}
		rec = p.HMGet(ctx, s.keys.sweep(), "full", "confirmed")
		return nil
	})
	if err != nil {
		return nil, sweepRecord{}, fmt.Errorf("schedstore: sweep: read live instances: %w", err)
	}
	live := make([]liveInstance, len(ids))
	for i, id := range ids {
		v := infos[i].Val()
		str := func(j int) string { x, _ := v[j].(string); return x }
		live[i] = liveInstance{id: id, version: str(0), started: str(1), digest: str(2)}
	}
	var r sweepRecord
	if v := rec.Val(); len(v) == 2 {
		full, _ := v[0].(string)
		confirmed, _ := v[1].(string)
		r.full, _ = strconv.ParseInt(full, 10, 64)
		r.confirmed, _ = strconv.ParseInt(confirmed, 10, 64)
	}
	return live, r, nil
}
