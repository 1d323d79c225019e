package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// rttHook counts the round trips a go-redis client makes (a single command
// and a pipeline are one round trip each) and the commands it sends.
// With byName set it also counts commands by name (for -cmds; it costs a
// lock per command, so the CPU figures of such a run are not comparable).
type rttHook struct {
	n, cmds, evalsha atomic.Int64
	byName           *nameCounts
}

// nameCounts counts commands by name.
type nameCounts struct {
	mu sync.Mutex
	m  map[string]int64
}

func (c *nameCounts) add(cs ...redis.Cmder) {
	if c == nil {
		return
	}
	c.mu.Lock()
	for _, x := range cs {
		c.m[x.Name()]++
	}
	c.mu.Unlock()
}

// top returns "name=count" for the k most sent commands.
func (c *nameCounts) top(k int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.m))
	for n := range c.m {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return int(c.m[b] - c.m[a]) })
	var parts []string
	for _, n := range names[:min(k, len(names))] {
		parts = append(parts, fmt.Sprintf("%s=%d", n, c.m[n]))
	}
	return strings.Join(parts, " ")
}

func (h *rttHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *rttHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		h.n.Add(1)
		h.cmds.Add(1)
		h.countScript(c)
		h.byName.add(c)
		return next(ctx, c)
	}
}

func (h *rttHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cs []redis.Cmder) error {
		h.n.Add(1)
		h.cmds.Add(int64(len(cs)))
		for _, c := range cs {
			h.countScript(c)
		}
		h.byName.add(cs...)
		return next(ctx, cs)
	}
}

// countScript counts the scripts sent. chronos sends one EVALSHA of its
// fire script per trigger, and a few a second besides (the forwarder's
// moves, heartbeats, lease renewals): at 1,000 fires a second, scripts per
// fire within a few thousandths of 1 show that the counters' window holds
// the firings of the counted triggers and no other burst's (one burst
// more in a 30 s window would add 0.033).
func (h *rttHook) countScript(c redis.Cmder) {
	if n := c.Name(); n == "evalsha" || n == "eval" {
		h.evalsha.Add(1)
	}
}

// heapAfterGC returns the live heap after a full collection.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// redisStats is what the benchmark reads from INFO: the server's CPU time
// and the number of commands it has processed.
type redisStats struct {
	cpu  time.Duration
	cmds int64
}

// readRedisStats reads INFO cpu and INFO stats over admin, a client the
// systems under test do not use, so it does not disturb their counts.
// The INFO command itself is counted by Redis; sub subtracts it.
func readRedisStats(ctx context.Context, admin *redis.Client) (redisStats, error) {
	info, err := admin.Info(ctx, "cpu", "stats").Result()
	if err != nil {
		return redisStats{}, fmt.Errorf("read INFO: %w", err)
	}
	var s redisStats
	for line := range strings.SplitSeq(info, "\r\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "used_cpu_sys", "used_cpu_user":
			f, _ := strconv.ParseFloat(v, 64)
			s.cpu += time.Duration(f * float64(time.Second))
		case "total_commands_processed":
			s.cmds, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return s, nil
}

func (s redisStats) sub(t redisStats) redisStats {
	return redisStats{cpu: s.cpu - t.cpu, cmds: s.cmds - t.cmds - 1}
}

// redisVersion returns the server's redis_version.
func redisVersion(ctx context.Context, admin *redis.Client) string {
	info, err := admin.Info(ctx, "server").Result()
	if err != nil {
		return "unknown"
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			return v
		}
	}
	return "unknown"
}

// loadavg returns the first three fields of /proc/loadavg, or "n/a".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// percentile returns the p-th percentile (0 < p < 1) of sorted xs by the
// nearest-rank rule.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// result is what one system measured in one round.
type result struct {
	name          string
	schedules     int
	heapPerSched  float64 // bytes, while firing
	heapAtStartup float64 // chronos: bytes at the leader's first firing; 0: not measured
	fires         int     // triggers whose intended time fell in the window
	window        time.Duration
	cpuPerFire    time.Duration
	redisCPUFire  time.Duration
	lagP50        time.Duration // per trigger
	lagP99        time.Duration
	lagMax        time.Duration
	bursts        int           // whole seconds with triggers in the window
	lastP50       time.Duration // per burst: the lag of its last trigger
	lastP99       time.Duration
	lastMax       time.Duration
	unforwarded   int // chronos: tasks of the window still in the delayed set when the stream was read
	rtt           int64
	rttPerFire    float64
	sentPerFire   float64 // commands the client sent, pipelined or not
	scriptPerFire float64 // EVALSHA (and EVAL) the client sent
	cmdsPerFire   float64
	registerTime  time.Duration // from creating the scheduler to a leader elected (chronos) or the last entry added (asynq)
	startup       time.Duration // chronos: from creating the scheduler to the leader's first firing; 0: not measured
	notes         []string
}

// fireLag is one trigger of the window: its intended time and how late it
// reached Redis.
type fireLag struct {
	trigger time.Time
	lag     time.Duration
}

// finishLags fills the lag fields of r from the window's triggers: per
// trigger, and per burst (the triggers due at the same whole second) the
// lag of its last one, which is when the whole burst had reached Redis.
func (r *result) finishLags(fs []fireLag) {
	r.fires = len(fs)
	lags := make([]time.Duration, len(fs))
	last := map[int64]time.Duration{}
	for i, f := range fs {
		lags[i] = f.lag
		sec := f.trigger.Truncate(time.Second).Unix()
		if l, ok := last[sec]; !ok || f.lag > l {
			last[sec] = f.lag
		}
	}
	r.lagP50, r.lagP99, r.lagMax = spread(lags)
	r.bursts = len(last)
	r.lastP50, r.lastP99, r.lastMax = spread(slices.Collect(maps.Values(last)))
}

// spread sorts xs and returns its p50, p99 and maximum.
func spread(xs []time.Duration) (p50, p99, maxi time.Duration) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	slices.Sort(xs)
	return percentile(xs, 0.50), percentile(xs, 0.99), xs[len(xs)-1]
}
