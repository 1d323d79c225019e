package chronos

import (
	"context"
	"fmt"
)

// This file adds what the operator CLI needs beyond the reads of the
// Inspector and the console: telling a namespace in use from a mistyped
// one, so that an empty listing is never the answer to a typo.

// namespaceScanLimit bounds the keys NamespaceExists examines when the
// namespace has neither a scheduler registry nor dead letters: a SCAN of
// a Redis with many other keys must not take long.
const namespaceScanLimit = 100_000

// NamespaceExists reports whether anything is stored under the namespace:
// a schedule, a scheduler instance, a pending request, a dead letter, a
// paused queue (each found with one EXISTS), or any other key of its
// prefix, such as a queue's stream or a kind's run records (found with a
// SCAN of at most about 100,000 keys). It reports true when the SCAN stops
// before it can tell, so false means the namespace holds nothing.
func (i *Inspector) NamespaceExists(ctx context.Context) (bool, error) {
	st, err := i.registry(ctx)
	if err != nil {
		return false, fmt.Errorf("chronos: namespace %q: %w", i.ns, err)
	}
	ok, err := st.HasRegistry(ctx)
	if err != nil {
		return false, fmt.Errorf("chronos: namespace %q: %w", i.ns, err)
	}
	if ok {
		return true, nil
	}
	found, sure, err := i.queue.HasKeys(ctx, namespaceScanLimit)
	if err != nil {
		return false, fmt.Errorf("chronos: namespace %q: %w", i.ns, err)
	}
	return found || !sure, nil
}
