package chronos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// oldestReadyScript returns the ID of the oldest entry of a queue stream
// that no worker has taken yet: the first one after the consumer group's
// last-delivered ID (every entry, if the group does not exist yet), or
// false if there is none. Running tasks are not ready: they sit at or
// before that ID, in the group's pending list.
//
//	KEYS[1] stream; ARGV[1] group name
var oldestReadyScript = redis.NewScript(`
local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
if type(groups) == 'table' and groups.err then return false end
local last = '0-0'
for _, g in ipairs(groups) do
  local f = {}
  for k = 1, #g, 2 do f[g[k]] = g[k + 1] end
  if f['name'] == ARGV[1] then last = f['last-delivered-id'] end
end
local e = redis.call('XRANGE', KEYS[1], '(' .. last, '+', 'COUNT', 1)
if #e == 0 then return false end
return e[1][1]
`)

// OldestReady returns when the oldest ready task of queue (waiting for a
// worker) was added to the queue: enqueued, or moved there when its delay
// or retry backoff ran out. It is zero when no task is ready. Exporters
// turn it into the age of the queue's head, the measure of a queue that
// workers do not keep up with. One round trip.
func (i *Inspector) OldestReady(ctx context.Context, queue string) (time.Time, error) {
	id, err := oldestReadyScript.Run(ctx, i.rdb.C, []string{i.rdb.K.Stream(queue)}, rdb.Group).Text()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("chronos: oldest ready task of %q: %w", queue, err)
	}
	at, ok := entryTime(id)
	if !ok {
		return time.Time{}, fmt.Errorf("chronos: oldest ready task of %q: entry ID %q is not a stream ID", queue, id)
	}
	return at, nil
}
