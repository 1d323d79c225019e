package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/redis/go-redis/v9"
)

// guard returns how far the counters' window precedes the trigger window,
// for a system that sends each burst ahead before its second. The fires
// counted are those whose intended time is in [start, start+window). A
// burst due at second T costs work from T−ahead (chronos fires it ahead
// into the delayed set) to T+lag (it reaches the stream: chronos's
// forwarder, asynq's enqueue), so the counters must cover
// [start−ahead, start+window−1s+lag] and must not reach the next burst's
// start+window−ahead. Sampling midway between ahead and one second before
// each edge does both while lags stay under (1s−ahead)/2: 500 ms before
// for asynq, 625 ms before for chronos with its default FireAhead of
// 250 ms.
func guard(ahead time.Duration) time.Duration {
	return (time.Second + max(ahead, 0)) / 2
}

// windowCounts is what a measurement window consumed.
type windowCounts struct {
	cpu     time.Duration // this process, user + system
	rtt     int64         // round trips of the system's client
	sent    int64         // commands it sent
	scripts int64         // EVALSHA and EVAL among them
	redis   redisStats    // redis-server CPU and commands
}

// measureWindow waits until start, then sleeps for window and returns what
// was spent in between. The process CPU is the scheduler's, plus, for chronos, the
// Server whose forwarder moves the triggers fired ahead from the delayed
// set to the stream (its workers have nothing to do: the queue is
// paused), plus the Go runtime's own background work.
func measureWindow(ctx context.Context, admin *redis.Client, hook *rttHook, start time.Time, window time.Duration, profile string) (windowCounts, error) {
	waitUntil(ctx, start)
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
	cpu0, rtt0, sent0, ev0 := processCPU(), hook.n.Load(), hook.cmds.Load(), hook.evalsha.Load()
	if os.Getenv("DBG") != "" {
		fmt.Fprintf(os.Stderr, "window %s .. %s (start param %s)\n", time.Now().Format("05.000"), start.Add(window).Format("05.000"), start.Format("05.000"))
	}
	waitUntil(ctx, start.Add(window))
	cpu1, rtt1, sent1, ev1 := processCPU(), hook.n.Load(), hook.cmds.Load(), hook.evalsha.Load()
	stopProfile()
	r1, err := readRedisStats(ctx, admin)
	if err != nil {
		return windowCounts{}, err
	}
	return windowCounts{cpu: cpu1 - cpu0, rtt: rtt1 - rtt0, sent: sent1 - sent0, scripts: ev1 - ev0, redis: r1.sub(r0)}, nil
}

// fill sets r's per-fire figures from w; r.fires must be set (finishLags).
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
	r.scriptPerFire = float64(w.scripts) / f
	r.cmdsPerFire = float64(w.redis.cmds) / f
}

// windowStart returns the whole second at which the trigger window starts:
// at or after earliest, and late enough that the counters, sampled g
// before it, start in the future (after a GC that may take a while at
// 100,000 schedules).
func windowStart(earliest time.Time, g time.Duration) time.Time {
	start := earliest
	if soonest := time.Now().Add(g + 50*time.Millisecond); start.Before(soonest) {
		start = soonest.Truncate(time.Second).Add(time.Second)
	}
	return start
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
