package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/redis/go-redis/v9"
)

// guard is how far the counters' window precedes the trigger window. The
// fires counted are those whose intended time is in [start, start+window),
// and a burst due at start runs just after start; sampling the counters at
// start would race with it. Sampling half a second early puts every counted
// burst, and no other, inside the counters' window while lags stay under
// half a second.
const guard = 500 * time.Millisecond

// windowCounts is what a measurement window consumed.
type windowCounts struct {
	cpu   time.Duration // this process, user + system
	rtt   int64         // round trips of the system's client
	sent  int64         // commands it sent
	redis redisStats    // redis-server CPU and commands
}

// measureWindow sleeps from start for window and returns what was spent in
// between. Nothing else runs in this process meanwhile, so the process CPU
// is the scheduler's (plus the Go runtime's own background work).
func measureWindow(ctx context.Context, admin *redis.Client, hook *rttHook, start time.Time, window time.Duration, profile string) (windowCounts, error) {
	r0, err := readRedisStats(ctx, admin)
	if err != nil {
		return windowCounts{}, err
	}
	if hook.byName != nil {
		hook.byName.mu.Lock()
		clear(hook.byName.m)
		hook.byName.mu.Unlock()
	}
	stopProfile, err := startProfile(profile)
	if err != nil {
		return windowCounts{}, err
	}
	cpu0, rtt0, sent0 := processCPU(), hook.n.Load(), hook.cmds.Load()
	waitUntil(ctx, start.Add(window))
	cpu1, rtt1, sent1 := processCPU(), hook.n.Load(), hook.cmds.Load()
	stopProfile()
	r1, err := readRedisStats(ctx, admin)
	if err != nil {
		return windowCounts{}, err
	}
	return windowCounts{cpu: cpu1 - cpu0, rtt: rtt1 - rtt0, sent: sent1 - sent0, redis: r1.sub(r0)}, nil
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
	r.sentPerFire = float64(w.sent) / f
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

// newHook returns a round-trip hook, counting by command name if byName.
func newHook(byName bool) *rttHook {
	h := &rttHook{}
	if byName {
		h.byName = &nameCounts{m: map[string]int64{}}
	}
	return h
}

// startProfile starts a CPU profile written to path ("" for none) and
// returns the function that ends it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
