package console

import (
	"context"
	"sync"
	"time"
)

// cached keeps the result of an expensive read (a SCAN of the keyspace, a
// pass over the dead letters) for ttl, so that pages refreshing every few
// seconds do not repeat it. It starts no goroutine: a stale value is
// reloaded by the request that finds it stale.
type cached[T any] struct {
	ttl time.Duration

	mu   sync.Mutex
	at   time.Time
	val  T
	full bool
}

func (c *cached[T]) get(ctx context.Context, now time.Time, load func(context.Context) (T, error)) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.full && now.Sub(c.at) < c.ttl {
		return c.val, nil
	}
	v, err := load(ctx)
	if err != nil {
		return v, err
	}
	c.val, c.at, c.full = v, now, true
	return v, nil
}

// forget drops the value, after an action that changed it.
func (c *cached[T]) forget() {
	c.mu.Lock()
	c.full = false
	c.mu.Unlock()
}
