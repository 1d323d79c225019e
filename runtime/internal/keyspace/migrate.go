package keyspace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// This file is the meta key's part in chronos migrate (package migrate),
// which moves a layout-1 namespace to partitions: the meta key says
// "migrating" while keys move, so that no process of this version starts
// on a namespace half in one layout and half in the other (resolve
// returns ErrMigrating), and "2" once every key is in its partition.

// MetaState is what a namespace's meta key says.
type MetaState struct {
	// Layout is "" (no meta key: layout 1, or a new namespace), Migrating,
	// or "2".
	Layout     string
	Partitions int
}

// ReadMeta reads the meta key of namespace ns.
func ReadMeta(ctx context.Context, c redis.UniversalClient, ns string) (MetaState, error) {
	m, err := c.HMGet(ctx, Meta(ns), "layout", "partitions").Result()
	if err != nil {
		return MetaState{}, fmt.Errorf("keyspace: read the layout of namespace %q: %w", Namespace(ns), err)
	}
	var st MetaState
	st.Layout, _ = m[0].(string)
	p, _ := m[1].(string)
	if st.Layout != "" {
		if st.Partitions, err = strconv.Atoi(p); err != nil {
			return MetaState{}, fmt.Errorf("%w: namespace %q: partitions %q", ErrUnknownLayout, Namespace(ns), p)
		}
	}
	return st, nil
}

// ErrMigrationState is returned (wrapped) when the meta key is not in the
// state a migration step expects: another migration to another count, or
// a namespace partitioned meanwhile.
var ErrMigrationState = errors.New("keyspace: the namespace's layout changed under the migration")

// beginScript marks a namespace as being migrated to ARGV[1] partitions,
// unless it is already.
//
//	KEYS[1] meta; ARGV[1] partitions, ARGV[2] now (ms)
//
// Returns "begun", "resumed" (it was already migrating to that count), or
// an error naming what the meta key says instead.
var beginScript = redis.NewScript(`
local m = redis.call('HMGET', KEYS[1], 'layout', 'partitions')
if not m[1] then
  redis.call('HSET', KEYS[1], 'layout', '` + Migrating + `', 'partitions', ARGV[1], 'started', ARGV[2])
  return 'begun'
end
if m[1] == '` + Migrating + `' and m[2] == ARGV[1] then return 'resumed' end
return redis.error_reply('STATE layout ' .. tostring(m[1]) .. ' partitions ' .. tostring(m[2]))
`)

// BeginMigration records in the meta key of namespace ns, which must have
// none or be migrating to n partitions already, that it is being migrated
// to n partitions. It reports whether the migration was already under way.
func BeginMigration(ctx context.Context, c redis.UniversalClient, ns string, n int) (resumed bool, err error) {
	res, err := beginScript.Run(ctx, c, []string{Meta(ns)}, n, time.Now().UnixMilli()).Text()
	if err != nil {
		if isState(err) {
			return false, fmt.Errorf("%w: namespace %q: %s", ErrMigrationState, Namespace(ns), stateText(err))
		}
		return false, fmt.Errorf("keyspace: mark namespace %q as migrating: %w", Namespace(ns), err)
	}
	return res == "resumed", nil
}

// endScript makes a migrating namespace partitioned.
//
//	KEYS[1] meta; ARGV[1] partitions, ARGV[2] now (ms)
//
// Returns "ended", "done" (it was partitioned already, with that count),
// or an error naming what the meta key says instead.
var endScript = redis.NewScript(`
local m = redis.call('HMGET', KEYS[1], 'layout', 'partitions')
if m[1] == '2' and m[2] == ARGV[1] then return 'done' end
if m[1] == '` + Migrating + `' and m[2] == ARGV[1] then
  redis.call('HSET', KEYS[1], 'layout', '2', 'created', ARGV[2])
  redis.call('HDEL', KEYS[1], 'started')
  return 'ended'
end
return redis.error_reply('STATE layout ' .. tostring(m[1]) .. ' partitions ' .. tostring(m[2]))
`)

// EndMigration makes namespace ns, being migrated to n partitions, a
// partitioned namespace of n partitions: from then on every process reads
// it as such.
func EndMigration(ctx context.Context, c redis.UniversalClient, ns string, n int) error {
	if err := endScript.Run(ctx, c, []string{Meta(ns)}, n, time.Now().UnixMilli()).Err(); err != nil {
		if isState(err) {
			return fmt.Errorf("%w: namespace %q: %s", ErrMigrationState, Namespace(ns), stateText(err))
		}
		return fmt.Errorf("keyspace: mark namespace %q as partitioned: %w", Namespace(ns), err)
	}
	return nil
}

func isState(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && len(re.Error()) > 6 && re.Error()[:6] == "STATE "
}

func stateText(err error) string { return "its meta key says " + err.Error()[6:] }
