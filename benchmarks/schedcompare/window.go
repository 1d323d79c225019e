package main

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// windowCounts is what a measurement window consumed.
type windowCounts struct {
	cpu   time.Duration // this process, user + system
	rtt   int64         // round trips of the system's client
	redis redisStats    // redis-server CPU and commands
}

// measureWindow sleeps from start for window and returns what was spent in
// between. Nothing else runs in this process meanwhile, so the process CPU
// is the scheduler's (plus the Go runtime's own background work).
func measureWindow(ctx context.Context, admin *redis.Client, hook *rttHook, start time.Time, window time.Duration) (windowCounts, error) {
	r0, err := readRedisStats(ctx, admin)
	if err != nil {
		return windowCounts{}, err
	}
	cpu0, rtt0 := processCPU(), hook.n.Load()
	waitUntil(ctx, start.Add(window))
	cpu1, rtt1 := processCPU(), hook.n.Load()
	r1, err := readRedisStats(ctx, admin)
	if err != nil {
		return windowCounts{}, err
	}
	return windowCounts{cpu: cpu1 - cpu0, rtt: rtt1 - rtt0, redis: r1.sub(r0)}, nil
}

// fill sets r's per-fire figures from w; r.fires must be set.
func (w windowCounts) fill(r *result) {
	r.rtt = w.rtt
	if r.fires == 0 {
		return
	}
	f := float64(r.fires)
	r.cpuPerFire = time.Duration(float64(w.cpu) / f)
	r.redisCPUFire = time.Duration(float64(w.redis.cpu) / f)
	r.rttPerFire = float64(w.rtt) / f
	r.cmdsPerFire = float64(w.redis.cmds) / f
}

// waitUntil sleeps until t or until ctx is done, and returns t.
func waitUntil(ctx context.Context, t time.Time) time.Time {
	select {
	case <-time.After(time.Until(t)):
	case <-ctx.Done():
	}
	return t
}
