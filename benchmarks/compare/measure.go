package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// tracker records the tasks a phase's handlers run: each Seq once, the
// duplicates (both systems deliver at least once) and, when times is set,
// when each task started.
type tracker struct {
	want     int
	seen     []atomic.Bool
	started  []atomic.Int64 // unix ns; nil unless start times are kept
	distinct atomic.Int64
	dups     atomic.Int64
	stray    atomic.Int64 // Seq outside [0, want): left over from another phase
	done     chan struct{}
}

func newTracker(want int, times bool) *tracker {
	t := &tracker{want: want, seen: make([]atomic.Bool, want), done: make(chan struct{})}
	if times {
		t.started = make([]atomic.Int64, want)
	}
	if want == 0 {
		close(t.done)
	}
	return t
}

// handle is the body of every benchmark handler.
func (t *tracker) handle(a benchArgs) {
	var now int64
	if t.started != nil {
		now = time.Now().UnixNano()
	}
	if a.Seq < 0 || a.Seq >= t.want {
		t.stray.Add(1)
		return
	}
	if t.seen[a.Seq].Swap(true) {
		t.dups.Add(1)
		return
	}
	if t.started != nil {
		t.started[a.Seq].Store(now)
	}
	if t.distinct.Add(1) == int64(t.want) {
		close(t.done)
	}
}

// wait blocks until every task ran once, or ctx ends.
func (t *tracker) wait(ctx context.Context) error {
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%d of %d tasks ran (%d duplicates): %w", t.distinct.Load(), t.want, t.dups.Load(), context.Cause(ctx))
	}
}

// roundTrips counts the requests a Redis client sends: each command sent
// alone and each pipeline is one round trip. A blocking read counts once,
// however long it waits.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

// sample is what a phase reads before and after its measured part.
type sample struct {
	at       time.Time
	mallocs  uint64
	bytes    uint64
	trips    int64
	cpu      time.Duration // user+sys of this process
	redisCPU float64       // seconds, user+sys of redis-server
	// redisWait is how long redis-server has waited for a CPU while
	// runnable (Linux schedstat; -1 when unknown).
	redisWait time.Duration
	// commands is INFO commandstats, when asked for.
	commands map[string]cmdStat
}

// takeSample reads the counters of a sample; with stats it also reads
// Redis's per-command statistics.
func takeSample(ctx context.Context, admin *redis.Client, rt *roundTrips, redisPID int, stats bool) (sample, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := sample{mallocs: ms.Mallocs, bytes: ms.TotalAlloc, trips: rt.n.Load(), cpu: processCPU(), redisWait: runQueueWait(redisPID)}
	if stats {
		cs, err := commandStats(ctx, admin)
		if err != nil {
			return s, err
		}
		s.commands = cs
	}
	cpu, err := redisCPU(ctx, admin)
	if err != nil {
		return s, err
	}
	s.redisCPU = cpu
	s.at = time.Now()
	return s, nil
}

// usage is the cost of a measured part, per task where it says so.
type usage struct {
	elapsed        time.Duration
	allocsPerTask  float64
	bytesPerTask   float64
	tripsPerTask   float64
	cpuPerTask     time.Duration
	redisCPUPerTsk time.Duration
	redisWaitShare float64 // of the elapsed time, in percent; -1 when unknown
}

func since(a, b sample, tasks int) usage {
	n := float64(max(tasks, 1))
	u := usage{
		elapsed:        b.at.Sub(a.at),
		allocsPerTask:  float64(b.mallocs-a.mallocs) / n,
		bytesPerTask:   float64(b.bytes-a.bytes) / n,
		tripsPerTask:   float64(b.trips-a.trips) / n,
		cpuPerTask:     time.Duration(float64(b.cpu-a.cpu) / n),
		redisWaitShare: -1,
		redisCPUPerTsk: time.Duration((b.redisCPU - a.redisCPU) / n * float64(time.Second)),
	}
	if a.redisWait >= 0 && b.redisWait >= 0 && b.at.After(a.at) {
		u.redisWaitShare = 100 * float64(b.redisWait-a.redisWait) / float64(b.at.Sub(a.at))
	}
	return u
}

// runQueueWait returns how long process pid has spent runnable but waiting
// for a CPU, summed over its threads, from /proc/PID/task/*/schedstat; -1
// when pid is 0 or the system does not tell. A redis-server that waits a
// large share of the time is starved by the machine, and then every rate
// measures the machine's load more than the queue.
func runQueueWait(pid int) time.Duration {
	if pid == 0 {
		return -1
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return -1
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return -1
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return -1
		}
		total += time.Duration(ns)
	}
	return total
}

// redisCPU returns the CPU seconds redis-server has used, from INFO cpu.
func redisCPU(ctx context.Context, admin *redis.Client) (float64, error) {
	info, err := admin.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO cpu: %w", err)
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (k != "used_cpu_user" && k != "used_cpu_sys") {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu: %s: %w", k, err)
		}
		total += f
	}
	return total, nil
}

// cmdStat is one command's line of INFO commandstats.
type cmdStat struct {
	calls int64
	usec  int64
}

// commandStats returns INFO commandstats by command name.
func commandStats(ctx context.Context, admin *redis.Client) (map[string]cmdStat, error) {
	info, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, fmt.Errorf("INFO commandstats: %w", err)
	}
	out := make(map[string]cmdStat)
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, found := strings.CutPrefix(name, "cmdstat_")
		if !ok || !found {
			continue
		}
		var st cmdStat
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				st.calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				st.usec, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		out[name] = st
	}
	return out, nil
}

// redisVersion returns redis_version from INFO server.
func redisVersion(ctx context.Context, admin *redis.Client) (string, error) {
	info, err := admin.Info(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("INFO server: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "unknown", nil
}

// isLoopback reports whether addr is on this machine, where the benchmark
// may send load.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
