package main

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// backend is the Redis the demo's instances share.
type backend struct {
	opt   *redis.Options
	label string
	close func()
}

// newClient returns a new client of the backend: each instance has its
// own, as separate processes would.
func (b *backend) newClient() *redis.Client { return redis.NewClient(b.opt) }

// openBackend connects to url, or starts the embedded demo-only Redis
// when url is empty.
func openBackend(url string) (*backend, error) {
	if url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		return &backend{opt: opt, label: "Redis at " + opt.Addr + " (REDIS_URL)", close: func() {}}, nil
	}
	m := miniredis.NewMiniRedis()
	// Leader and lease keys expire by TTL; miniredis only ages TTLs on
	// FastForward unless told to follow the clock.
	m.ClockTTL(true)
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("embedded redis: %w", err)
	}
	return &backend{
		opt:   &redis.Options{Addr: m.Addr()},
		label: "EMBEDDED in-process miniredis at " + m.Addr() + " -- DEMO ONLY, not a Redis server; set REDIS_URL to use a real one",
		close: m.Close,
	}, nil
}
