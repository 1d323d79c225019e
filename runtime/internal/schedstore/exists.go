package schedstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// HasRegistry reports whether the namespace has a scheduler registry: a
// registered schedule, a live instance or a pending request. One EXISTS
// per partition, in one pipeline (a multi-key EXISTS cannot span the
// partitions' slots), so that an operator's tool can tell a namespace in
// use from a mistyped one without a SCAN.
func (s *Store) HasRegistry(ctx context.Context) (bool, error) {
	cmds := make([]*redis.IntCmd, 0, 1+len(s.keys.parts))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmds = append(cmds, p.Exists(ctx, s.keys.instances()))
		for i := range s.keys.parts {
			cmds = append(cmds, p.Exists(ctx, s.keys.parts[i].schedules, s.keys.parts[i].requests))
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("schedstore: registry exists: %w", err)
	}
	for _, c := range cmds {
		if c.Val() > 0 {
			return true, nil
		}
	}
	return false, nil
}
