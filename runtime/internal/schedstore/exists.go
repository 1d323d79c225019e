package schedstore

import (
	"context"
	"fmt"
)

// HasRegistry reports whether the namespace has a scheduler registry: a
// registered schedule, a live instance or a pending request. One EXISTS,
// so that an operator's tool can tell a namespace in use from a mistyped
// one without a SCAN.
func (s *Store) HasRegistry(ctx context.Context) (bool, error) {
	n, err := s.client.Exists(ctx, s.keys.schedules(), s.keys.instances(), s.keys.requests()).Result()
	if err != nil {
		return false, fmt.Errorf("schedstore: registry exists: %w", err)
	}
	return n > 0, nil
}
