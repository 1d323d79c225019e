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
//	cpu-µs/fire     this process's CPU time per trigger while firing: the
//	                leader's, and the forwarder's of the Server that moves
//	                the triggers fired ahead (SchedulerConfig.FireAhead) from
//	                the delayed set to the stream at their time
//	redis-cpu-µs/fire  redis-server's CPU time per trigger (INFO cpu)
//	lag-p50-ms,
//	lag-p99-ms,
//	lag-max-ms      when the task reached its queue's stream (the entry ID:
//	                Redis's clock at the forwarder's or fire script's XADD)
//	                − intended trigger time, ms resolution. Task.EnqueuedAt
//	                would say nothing: a trigger fired ahead is enqueued
//	                before its time.
//	unforwarded     triggers of the window still in the delayed set 5 s after
//	                it (counted in the lag with their wait so far); 0 normally
//	evalsha/fire    fire scripts sent per trigger (EVALSHA of the fire script)
//	rtt/fire        the scheduler client's round trips per trigger,
//	                everything included (leases, heartbeats, polling;
//	                pipelined batches count once); the Server has a client
//	                of its own
//	fires/s         triggers whose time fell in the window, per second
//
// The queue is paused, so that the tasks stay in the stream to be read:
// the forwarder still moves tasks into a paused queue, and no worker
// takes them. Run with -benchtime 1x: each run does the whole
// measurement once.
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

	if err := NewInspector(srv.Client()).PauseQueue(ctx, DefaultQueue); err != nil {
		b.Fatal(err)
	}
	forwarder := NewServer(srv.NewClient(nil), ServerConfig{Logger: benchLogger()})
	if err := forwarder.Start(ctx, NewMux()); err != nil {
		b.Fatal(err)
	}
	defer forwarder.Shutdown(ctx)

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
	if len(s.own) != n { // Start moved the declarations to own
		b.Fatalf("%d declared", len(s.own))
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
	if err := s.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
	end := start.Add(elapsed)

	// The window's last triggers reach the stream at their time; wait for
	// the forwarder, and count any it did not move with their wait so far.
	before := strconv.FormatInt(end.UnixMilli()-1, 10)
	parts := queueKeys(b, srv.Client())
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var left int64
		for _, k := range parts {
			n, err := srv.Client().ZCount(ctx, k.Delayed(DefaultQueue), "-inf", before).Result()
			if err != nil {
				b.Fatal(err)
			}
			left += n
		}
		if left == 0 {
			break
		}
	}
	inWindow := func(m *rdb.Message) bool {
		at := time.UnixMilli(m.TriggerTime)
		return m.TriggerTime != 0 && !at.Before(start) && at.Before(end)
	}
	var lags []time.Duration
	for _, k := range parts {
		delayed, err := srv.Client().ZRangeByScore(ctx, k.Delayed(DefaultQueue), &redis.ZRangeBy{Min: "-inf", Max: before}).Result()
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range delayed {
			if msg, err := rdb.Decode([]byte(d)); err == nil && inWindow(msg) {
				lags = append(lags, time.Since(time.UnixMilli(msg.TriggerTime)))
			}
		}
	}
	unforwarded := len(lags)
	for _, k := range parts {
		xs, err := srv.Client().XRange(ctx, k.Stream(DefaultQueue), "-", "+").Result()
		if err != nil {
			b.Fatal(err)
		}
		for _, x := range xs {
			msg, err := rdb.Decode([]byte(x.Values["m"].(string)))
			if err != nil {
				b.Fatal(err)
			}
			if !inWindow(msg) {
				continue
			}
			ms, _, _ := strings.Cut(x.ID, "-")
			at, err := strconv.ParseInt(ms, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			lags = append(lags, time.Duration(at-msg.TriggerTime)*time.Millisecond)
		}
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
	b.ReportMetric(float64(lags[fires-1].Milliseconds()), "lag-max-ms")
	b.ReportMetric(float64(unforwarded), "unforwarded")
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
