package schedstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoSuchJob is returned (wrapped) when pausing a job a schedule does not
// have.
var ErrNoSuchJob = errors.New("schedstore: no such job")

// Pause describes a pause request.
type Pause struct {
	// Job pauses one job of a group; empty pauses the whole schedule.
	Job string
	// Note says why, for operators.
	Note string
	// Who paused it.
	Who string
	// Until ends the pause on its own; zero means until Resume.
	Until time.Time
}

// pauseScript sets the pause fields of a schedule, or of one of its jobs
// after checking the job exists in the stored definition.
//
//	KEYS[1] schedule hash, KEYS[2] changed index
//	ARGV[1] job ("" = whole schedule), ARGV[2] note, ARGV[3] who,
//	ARGV[4] at (ms), ARGV[5] until (ms, 0 = none), ARGV[6] JSON PauseInfo,
//	ARGV[7] schedule ID
//
// Returns 1 when paused, 0 when the schedule does not exist, -1 when the
// job does not.
var pauseScript = redis.NewScript(changedLua + `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
chronos_changed(KEYS[2], ARGV[4], ARGV[7])
if ARGV[1] == '' then
  redis.call('HSET', KEYS[1], 'paused', '1', 'pause_note', ARGV[2], 'paused_by', ARGV[3],
    'paused_at', ARGV[4], 'pause_until', ARGV[5])
  return 1
end
local jobs = cjson.decode(redis.call('HGET', KEYS[1], 'jobs') or '[]')
for _, j in ipairs(jobs) do
  if j.name == ARGV[1] then
    redis.call('HSET', KEYS[1], 'jobpause:' .. ARGV[1], ARGV[6])
    return 1
  end
end
return -1
`)

// Pause pauses schedule id, or one of its jobs, durably: the pause survives
// restarts, leader changes and redeploys until Resume or p.Until. What
// happens to fire times missed while paused is the misfire policy's call
// when the pause ends.
func (s *Store) Pause(ctx context.Context, id string, p Pause) error {
	at := s.cfg.Now()
	info, err := json.Marshal(PauseInfo{Note: p.Note, Who: p.Who, At: at.UTC(), Until: p.Until.UTC()})
	if err != nil {
		return fmt.Errorf("schedstore: pause %q: %w", id, err)
	}
	n, err := pauseScript.Run(ctx, s.client, []string{s.keys.sched(id), s.keys.of(id).changed},
		p.Job, p.Note, p.Who, ms(at), ms(p.Until), info, id).Int()
	switch {
	case err != nil:
		return fmt.Errorf("schedstore: pause %q: %w", id, err)
	case n == 0:
		return fmt.Errorf("schedstore: pause %q: %w", id, ErrNotFound)
	case n < 0:
		return fmt.Errorf("schedstore: pause %q job %q: %w", id, p.Job, ErrNoSuchJob)
	}
	return nil
}

// Resume ends the pause of schedule id (job == "") or of one of its jobs.
// It reports whether there was a pause to end. Ending a pause of the whole
// schedule records when (State.Resumed). Either is noted in the changed
// index, so a mirror that rebuilds a lost registry sees the resume.
func (s *Store) Resume(ctx context.Context, id, job string) (bool, error) {
	n, err := resumeScript.Run(ctx, s.client, []string{s.keys.sched(id), s.keys.of(id).changed},
		ms(s.cfg.Now()), id, job).Int()
	if err != nil {
		return false, fmt.Errorf("schedstore: resume %q: %w", id, err)
	}
	return n > 0, nil
}

// resumeScript ends the pause of a whole schedule (ARGV[3] == "") and
// records when, or ends the pause of one job.
//
//	KEYS[1] schedule hash, KEYS[2] changed index
//	ARGV[1] now (ms), ARGV[2] schedule ID, ARGV[3] job
//
// Returns 1 when a pause ended, 0 when there was none.
var resumeScript = redis.NewScript(changedLua + `
if ARGV[3] ~= '' then
  if redis.call('HDEL', KEYS[1], '` + FieldJobPausePrefix + `' .. ARGV[3]) == 0 then return 0 end
  chronos_changed(KEYS[2], ARGV[1], ARGV[2])
  return 1
end
if redis.call('HDEL', KEYS[1], '` + FieldPaused + `', '` + FieldPauseNote + `', '` + FieldPausedBy + `', '` +
	FieldPausedAt + `', '` + FieldPauseUntil + `') == 0 then return 0 end
redis.call('HSET', KEYS[1], '` + FieldResumedAt + `', ARGV[1])
chronos_changed(KEYS[2], ARGV[1], ARGV[2])
return 1
`)
