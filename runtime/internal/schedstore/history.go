package schedstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// FiringRecord is one entry of a schedule's firing history
// (<p>history:<id>, newest first): a firing and what became of each of
// its jobs. The fire script writes it (historyLua) and History reads it
// (decodeFiringRecord); both live in this file, which is the only place
// that spells its JSON form:
//
//	{"at": <unix ms>, "slot": <unix ms>, "src": "<source>",
//	 "jobs": [{"job": "<name>", "task": "<task ID>", "result": "<result>"}, ...],
//	 "inst": "<instance>"}      (isolated schedules only: AppendHistory)
type FiringRecord struct {
	At     time.Time // when the firing was written
	Slot   time.Time // the trigger it stands for
	Source string    // trigger, catchup, request, backfill, isolated
	Jobs   []FiringJob
	// Instance is the instance that fired an isolated schedule, which
	// writes its record itself (AppendHistory); "" for the leader's.
	Instance string
}

// FiringJob is what one firing did with one job: Result is enqueued,
// buffered or skipped, or cleared for a stale overlap marker the firing
// dropped (Task is then the cleared run's task ID).
type FiringJob struct {
	Job    string `json:"job"`
	Task   string `json:"task"`
	Result string `json:"result"`
}

// historyLua defines
//
//	chronos_history(key, cap, at_ms, slot_ms, src, jobs)
//
// which pushes one FiringRecord to the history list key and trims it to cap
// entries. jobs is a Lua array of {job, task, result} arrays. The jobs
// array is assembled by hand because cjson encodes an empty table as {};
// at_ms and slot_ms are the decimal strings the script received, which
// cjson would round to 14 significant digits.
const historyLua = `
local function chronos_history(key, cap, at, slot, src, jobs)
  local parts = {}
  for i, j in ipairs(jobs) do
    parts[i] = cjson.encode({job = j[1], task = j[2], result = j[3]})
  end
  redis.call('LPUSH', key, '{"at":' .. at .. ',"slot":' .. slot .. ',"src":' .. cjson.encode(src) ..
    ',"jobs":[' .. table.concat(parts, ',') .. ']}')
  redis.call('LTRIM', key, 0, cap - 1)
end
`

// firingRecordJSON is the stored form of a FiringRecord.
type firingRecordJSON struct {
	At   int64       `json:"at"`
	Slot int64       `json:"slot"`
	Src  string      `json:"src"`
	Jobs []FiringJob `json:"jobs"`
	Inst string      `json:"inst,omitempty"`
}

// decodeFiringRecord parses one history entry.
func decodeFiringRecord(v string) (FiringRecord, error) {
	// Versions before historyLua let cjson encode an empty jobs array
	// (every job of a group paused) as {}.
	v = strings.Replace(v, `"jobs":{}`, `"jobs":[]`, 1)
	var rec firingRecordJSON
	if err := json.Unmarshal([]byte(v), &rec); err != nil {
		return FiringRecord{}, err
	}
	return FiringRecord{At: time.UnixMilli(rec.At), Slot: time.UnixMilli(rec.Slot), Source: rec.Src, Jobs: rec.Jobs, Instance: rec.Inst}, nil
}

// encodeFiringRecord is the stored form of r, as historyLua writes it.
func encodeFiringRecord(r FiringRecord) ([]byte, error) {
	jobs := r.Jobs
	if jobs == nil {
		jobs = []FiringJob{}
	}
	return json.Marshal(firingRecordJSON{At: ms(r.At), Slot: ms(r.Slot), Src: r.Source, Jobs: jobs, Inst: r.Instance})
}

// AppendHistory adds r to the history of schedule id, keeping the newest
// keep records, in one round trip. The fire script writes the leader's
// records; instances write those of their isolated firings with this.
func (s *Store) AppendHistory(ctx context.Context, id string, r FiringRecord, keep int) error {
	b, err := encodeFiringRecord(r)
	if err != nil {
		return fmt.Errorf("schedstore: history of %q: %w", id, err)
	}
	key := s.keys.history(id)
	_, err = s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, key, b)
		p.LTrim(ctx, key, 0, int64(max(keep, 1)-1))
		return nil
	})
	if err != nil {
		return fmt.Errorf("schedstore: history of %q: %w", id, err)
	}
	return nil
}

// LastFirings returns the newest firing record of each schedule of ids
// that has one, pipelined (pipelinedBatches).
func (s *Store) LastFirings(ctx context.Context, ids []string) (map[string]FiringRecord, error) {
	cmds := make([]*redis.StringCmd, len(ids))
	err := s.pipelinedBatches(ctx, len(ids), func(p redis.Pipeliner, i int) {
		cmds[i] = p.LIndex(ctx, s.keys.history(ids[i]), 0)
	}, nil)
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("schedstore: last firings: %w", err)
	}
	out := make(map[string]FiringRecord, len(ids))
	for i, c := range cmds {
		v, err := c.Result()
		if err != nil {
			continue
		}
		if rec, err := decodeFiringRecord(v); err == nil {
			out[ids[i]] = rec
		}
	}
	return out, nil
}

// History returns up to limit firing records of schedule id, newest first.
func (s *Store) History(ctx context.Context, id string, limit int) ([]FiringRecord, error) {
	vals, err := s.client.LRange(ctx, s.keys.history(id), 0, int64(limit-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("schedstore: history of %q: %w", id, err)
	}
	out := make([]FiringRecord, 0, len(vals))
	for _, v := range vals {
		rec, err := decodeFiringRecord(v)
		if err != nil {
			return nil, fmt.Errorf("schedstore: history of %q: %w", id, err)
		}
		out = append(out, rec)
	}
	return out, nil
}
