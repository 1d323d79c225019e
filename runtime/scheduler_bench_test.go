package chronos

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// countHook counts what a client sends: single commands and pipelines are
// one round trip each; evalsha counts the fire scripts among them.
type countHook struct{ roundTrips, cmds, evalsha atomic.Int64 }

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		h.roundTrips.Add(1)
		h.count(c)
		return next(ctx, c)
	}
}

func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cs []redis.Cmder) error {
		h.roundTrips.Add(1)
		for _, c := range cs {
			h.count(c)
		}
		return next(ctx, cs)
	}
}

func (h *countHook) count(c redis.Cmder) {
	h.cmds.Add(1)
	if a := c.Args(); len(a) > 1 && strings.EqualFold(c.Name(), "evalsha") && a[1] == schedstore.FireScriptHash() {
		h.evalsha.Add(1)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSchedulerLeader registers n simple schedules on one leader,
// staggered 1 ms apart with an interval of n ms, so that together they fire
// about 1,000 triggers a second, and measures for window:
//
//	B/schedule      heap held per registered schedule (declaration, registry
//	                entry and firing-loop entry), after GC
//	cpu-µs/fire     this process's CPU time per trigger while firing
//	redis-cpu-µs/fire  redis-server's CPU time per trigger (INFO cpu)
//	lag-p50-ms,
//	lag-p99-ms      enqueue time − intended trigger time (ms resolution)
//	evalsha/fire    fire scripts sent per trigger (EVALSHA of the fire script)
//	rtt/fire        client round trips per trigger, everything included
//	                (leases, heartbeats, polling; pipelined batches count once)
//	fires/s         triggers enqueued per second
//
// Run with -benchtime 1x: each run does the whole measurement once.
//
//	go test -run '^$' -bench BenchmarkSchedulerLeader -benchtime 1x ./runtime
func BenchmarkSchedulerLeader(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("schedules=%d", n), func(b *testing.B) {
			benchLeader(b, n, 10*time.Second)
		})
	}
}

func benchLeader(b *testing.B, n int, window time.Duration) {
	srv := redistest.Start(b)
	hook := &countHook{}
	c := srv.NewClient(func(o *redis.Options) { o.PoolSize = 8 })
	c.AddHook(hook)
	ctx := context.Background()

	runtime.GC()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)

	s := NewScheduler(c, SchedulerConfig{InstanceID: "bench", Logger: benchLogger()})
	every := time.Duration(n) * time.Millisecond
	// Registration and the leader's first load of the registry take about
	// 100 µs per schedule on a loaded machine; the first triggers come after.
	base := time.Now().Add(5*time.Second + time.Duration(n)*150*time.Microsecond).Truncate(time.Second)
	for i := range n {
		err := RegisterSimple(s, Simple{Every: every, Repeat: -1, Start: base.Add(time.Duration(i) * time.Millisecond)},
			tick{N: i}, WithScheduleID(fmt.Sprintf("bench-%06d", i)))
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer s.Shutdown(ctx)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if s.leadsAll() {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("no leadership within a minute")
		}
	}
	for time.Now().Before(base) {
		time.Sleep(10 * time.Millisecond)
	}
	runtime.GC()
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	if len(s.decls) != n {
		b.Fatalf("%d declared", len(s.decls))
	}

	b.ResetTimer()
	rcpu0 := redisCPU(b, srv.Client())
	cpu0, rt0, ev0 := cpuTime(), hook.roundTrips.Load(), hook.evalsha.Load()
	start := time.Now()
	time.Sleep(window)
	elapsed := time.Since(start)
	cpu, rt, ev := cpuTime()-cpu0, hook.roundTrips.Load()-rt0, hook.evalsha.Load()-ev0
	rcpu := redisCPU(b, srv.Client()) - rcpu0
	b.StopTimer()

	xs, err := srv.Client().XRange(ctx, rdb.NewKeys("").Stream(DefaultQueue), "-", "+").Result()
	if err != nil {
		b.Fatal(err)
	}
	var lags []time.Duration
	for _, x := range xs {
		msg, err := rdb.Decode([]byte(x.Values["m"].(string)))
		if err != nil {
			b.Fatal(err)
		}
		if time.UnixMilli(msg.TriggerTime).Before(start) || !time.UnixMilli(msg.TriggerTime).Before(start.Add(elapsed)) {
			continue
		}
		lags = append(lags, time.Duration(msg.EnqueuedAt-msg.TriggerTime)*time.Millisecond)
	}
	fires := len(lags)
	if fires == 0 {
		b.Fatal("nothing fired")
	}
	slices.Sort(lags)
	b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/float64(n), "B/schedule")
	b.ReportMetric(float64(cpu.Microseconds())/float64(fires), "cpu-µs/fire")
	b.ReportMetric(float64(rcpu.Microseconds())/float64(fires), "redis-cpu-µs/fire")
	b.ReportMetric(float64(lags[fires/2].Milliseconds()), "lag-p50-ms")
	b.ReportMetric(float64(lags[fires*99/100].Milliseconds()), "lag-p99-ms")
	b.ReportMetric(float64(ev)/float64(fires), "evalsha/fire")
	b.ReportMetric(float64(rt)/float64(fires), "rtt/fire")
	b.ReportMetric(float64(fires)/elapsed.Seconds(), "fires/s")
}

func benchLogger() *slog.Logger {
	if os.Getenv("CHRONOS_BENCH_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// redisCPU returns the server's user + system CPU time from INFO cpu.
func redisCPU(b *testing.B, c redis.UniversalClient) time.Duration {
	info, err := c.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for line := range strings.SplitSeq(info, "\r\n") {
		k, v, _ := strings.Cut(line, ":")
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}
