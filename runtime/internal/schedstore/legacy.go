package schedstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// DropLegacyIsolatedQueues deletes the isolated queues that versions before
// in-process isolated schedules kept in Redis, one per instance
// (isolated:<instance>, listed in {<ns>}:isolated-instances), for the
// instances that are no longer live: their tasks were local work no other
// instance can do, as those versions' leaders decided too. A rolling
// deploy from such a version therefore leaves no queue behind. It returns
// the queues deleted. Only a namespace of layout 1 has them: their queue
// keys carry the control tag, like the set.
func (s *Store) DropLegacyIsolatedQueues(ctx context.Context) ([]string, error) {
	ids, err := s.client.SMembers(ctx, s.keys.legacyIsolated()).Result()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	live, err := s.liveSet(ctx, s.cfg.Now())
	if err != nil {
		return nil, err
	}
	var dropped []string
	for _, id := range ids {
		if live[id] {
			continue
		}
		q := legacyIsolatedQueue(id)
		_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, s.keys.legacyQueue().Stream(q), s.keys.legacyQueue().Delayed(q))
			p.SRem(ctx, s.keys.legacyIsolated(), id)
			return nil
		})
		if err != nil {
			return dropped, fmt.Errorf("schedstore: delete legacy isolated queue %q: %w", q, err)
		}
		dropped = append(dropped, q)
	}
	return dropped, nil
}
