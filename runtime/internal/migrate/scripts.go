package migrate

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// Every script here touches the keys of one partition, or of the layout-1
// tag: one slot on Redis Cluster. Names come in KEYS from the storage
// packages' keys.go files; no script builds one.

// copyEntriesScript adds the tasks of layout-1 stream entries to a
// partition's stream, each once whatever the number of runs: an entry is
// added only if its layout-1 ID was not in the partition's record of
// entries added yet (rdb.Keys.Migrated), which the same script writes.
//
//	KEYS[1] stream, KEYS[2] migrated record, KEYS[3…] overlap active set and records, in pairs
//	ARGV[1] n, then per entry: layout-1 entry ID, encoded task, task ID,
//	        index in KEYS of its marker's active set (0: none)
//
// Returns, per entry, 1 when it was added and 0 when an earlier run had.
var copyEntriesScript = redis.NewScript(rdb.OverlapMovedFunc + `
local n = tonumber(ARGV[1])
local added = {}
for i = 0, n - 1 do
  local b = 1 + i * 4
  added[i + 1] = 0
  if redis.call('SADD', KEYS[2], ARGV[b + 1]) == 1 then
    local e = redis.call('XADD', KEYS[1], '*', 'm', ARGV[b + 2])
    added[i + 1] = 1
    local k = tonumber(ARGV[b + 4])
    if k > 0 then chronos_overlap_moved(KEYS[k], KEYS[k + 1], KEYS[1], ARGV[b + 3], e, false) end
  end
end
return added
`)

// copyDelayedScript adds delayed tasks to a partition's delayed set
// (ZADD: adding one twice changes nothing) and wakes the partition's
// forwarders.
//
//	KEYS[1] delayed set, KEYS[2] the queue's stream (named in overlap records),
//	KEYS[3…] overlap active set and records, in pairs
//	ARGV[1] wake channel, ARGV[2] n, then per task: encoded task, due (ms), task ID,
//	        index in KEYS of its marker's active set (0: none)
//
// Returns the number of tasks that were not there yet.
var copyDelayedScript = redis.NewScript(rdb.OverlapMovedFunc + `
local n = tonumber(ARGV[2])
local added = 0
for i = 0, n - 1 do
  local b = 2 + i * 4
  added = added + redis.call('ZADD', KEYS[1], ARGV[b + 2], ARGV[b + 1])
  local k = tonumber(ARGV[b + 4])
  if k > 0 then chronos_overlap_moved(KEYS[k], KEYS[k + 1], KEYS[2], ARGV[b + 3], false, ARGV[b + 2]) end
end
if n > 0 then redis.call('PUBLISH', ARGV[1], KEYS[1]) end
return added
`)

// copyRunsScript re-adds run records to a partition's run records of a
// kind, each with its own entry ID (its time). A record whose ID is not
// above the stream's last was added by an earlier run: a partition
// receives its records in ascending order, from the migration alone
// (package doc), so it is skipped.
//
//	KEYS[1] run records
//	ARGV[1] n, then per record: entry ID, field count c, c fields and values
//
// Returns the number of records added.
var copyRunsScript = redis.NewScript(`
local n = tonumber(ARGV[1])
local i, added = 2, 0
for _ = 1, n do
  local id, c = ARGV[i], tonumber(ARGV[i + 1])
  local fv = {}
  for j = 1, c * 2 do fv[j] = ARGV[i + 1 + j] end
  local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  local after = true
  if top[1] then
    local tms, tseq = string.match(top[1][1], '^(%d+)-(%d+)$')
    after = tonumber(ms) > tonumber(tms) or (tonumber(ms) == tonumber(tms) and tonumber(seq) > tonumber(tseq))
  end
  if after then
    redis.call('XADD', KEYS[1], id, unpack(fv))
    added = added + 1
  end
  i = i + 2 + c * 2
end
return added
`)

// replaceScript writes a copy of a schedule's hash and history over
// whatever an interrupted run left of them: the keys of a partition are
// written by the migration alone until it ends (package doc).
//
//	KEYS[1] hash, KEYS[2] history
//	ARGV[1] hash TTL (ms, 0: none), ARGV[2] history TTL, ARGV[3] field count f,
//	ARGV[4…] f fields and values, then the history, oldest first (LPUSH
//	puts each at the head, so the list reads newest first, as copied; the
//	commands are those chronos.ACLRules grants)
var replaceScript = redis.NewScript(`
redis.call('DEL', KEYS[1], KEYS[2])
local f = tonumber(ARGV[3])
if f > 0 then redis.call('HSET', KEYS[1], unpack(ARGV, 4, 3 + 2 * f)) end
if #ARGV > 3 + 2 * f then redis.call('LPUSH', KEYS[2], unpack(ARGV, 4 + 2 * f)) end
if tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return 1
`)

// overlapScript merges a layout-1 overlap marker into its schedule's
// partition: the active set's members, and the buffered firing's and the
// records' fields where the partition has none (a record the move of a
// task rewrote is newer than the layout-1 one).
//
//	KEYS[1] active set, KEYS[2] buffered firing, KEYS[3] records
//	ARGV[1] a, ARGV[2] b, ARGV[3] w, then a members, b/2 buffer fields
//	and values, w/2 record fields and values
var overlapScript = redis.NewScript(`
local a, b, w = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local i = 4
if a > 0 then redis.call('SADD', KEYS[1], unpack(ARGV, i, i + a - 1)) end
i = i + a
for j = i, i + b - 1, 2 do redis.call('HSETNX', KEYS[2], ARGV[j], ARGV[j + 1]) end
i = i + b
for j = i, i + w - 1, 2 do redis.call('HSETNX', KEYS[3], ARGV[j], ARGV[j + 1]) end
return 1
`)

// raiseScript sets a counter (a partition's fencing epoch, its change
// counter) to at least ARGV[1]: never lower, whatever the order and number
// of runs.
//
//	KEYS[1] counter; ARGV[1] value
var raiseScript = redis.NewScript(`
local v = tonumber(ARGV[1])
if tonumber(redis.call('GET', KEYS[1]) or '0') < v then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
`)

// markScript replaces a layout-1 queue's stream and delayed set by the
// marker string, if both are empty: atomically in their slot, so a task a
// process added after the migration's last pass over them keeps them,
// and the next pass moves it.
//
//	KEYS[1] stream, KEYS[2] delayed set; ARGV[1] the marker
//
// Returns 1 when both are markers now, 0 when a task is left in them.
var markScript = redis.NewScript(`
local s = redis.call('TYPE', KEYS[1]).ok
local d = redis.call('TYPE', KEYS[2]).ok
if (s == 'stream' and redis.call('XLEN', KEYS[1]) > 0) or d == 'zset' then return 0 end
if s ~= 'string' then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[1], ARGV[1])
end
if d ~= 'string' then
  redis.call('DEL', KEYS[2])
  redis.call('SET', KEYS[2], ARGV[1])
end
return 1
`)

// call is one script call of a pipeline.
type call struct {
	script *redis.Script
	keys   []string
	args   []any
	cmd    *redis.Cmd
}

// runCalls sends calls in one pipeline (a cluster client splits it into
// one per master) and returns the joined errors of those that failed. A
// call that met NOSCRIPT (a restarted Redis forgot the script) is sent
// again once the script is loaded: NOSCRIPT means it did not run.
func runCalls(ctx context.Context, c redis.UniversalClient, calls []*call) error {
	todo := calls
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt > 0 {
			loaded := map[*redis.Script]bool{}
			for _, cl := range todo {
				if !loaded[cl.script] {
					loaded[cl.script] = true
					if err := cl.script.Load(ctx, c).Err(); err != nil {
						return err
					}
				}
			}
		}
		p := c.Pipeline()
		for _, cl := range todo {
			cl.cmd = p.EvalSha(ctx, cl.script.Hash(), cl.keys, cl.args...)
		}
		_, _ = p.Exec(ctx)
		var again []*call
		for _, cl := range todo {
			if attempt < 2 && cl.cmd.Err() != nil && strings.HasPrefix(cl.cmd.Err().Error(), "NOSCRIPT") {
				again = append(again, cl)
			}
		}
		todo = again
	}
	var errs []error
	for _, cl := range calls {
		if err := cl.cmd.Err(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
