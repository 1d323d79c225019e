package chaos

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

var cpuRun = flag.Bool("chaos.cpu", false,
	"measure the firing CPU of each scheduler process for 1, 2 and 3 instances (TestFiringCPUPerInstance)")

// The load child's parameters: how many schedules (set: a load child),
// and the first fire time of the first (unix ms).
const (
	loadEnv = "CHRONOS_CHAOS_LOAD"
	baseEnv = "CHRONOS_CHAOS_BASE"
)

// loadChild runs a scheduler instance declaring n simple schedules,
// staggered 1 ms apart with an interval of n ms, so that together they
// fire 1,000 triggers a second, until SIGTERM.
func loadChild(c redis.UniversalClient, id string, n int) int {
	base, _ := strconv.ParseInt(os.Getenv(baseEnv), 10, 64)
	log := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := chronos.NewScheduler(c, chronos.SchedulerConfig{InstanceID: id, LeaderTTL: 5 * time.Second, Logger: log})
	every := time.Duration(n) * time.Millisecond
	for i := range n {
		err := chronos.RegisterSimple(s, chronos.Simple{Every: every, Repeat: -1, Start: time.UnixMilli(base).Add(time.Duration(i) * time.Millisecond)},
			Tick{}, chronos.WithScheduleID(fmt.Sprintf("load-%06d", i)))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := s.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = s.Shutdown(sctx)
	return 0
}

// procCPU is the user + system CPU time of process pid so far.
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz
}

// TestFiringCPUPerInstance measures what each scheduler process spends
// firing 10,000 schedules at 1,000 triggers a second, with 1, 2 and 3
// instances sharing the 12 partitions: CPU time per process per second
// and per trigger, and redis-server's. Firing moves to the instances that
// lead the partitions; what each instance does besides (heartbeats,
// polling, reading back the firings of the schedules it declares for its
// memory of the registry) stays. Run it alone, without -race:
//
//	go test -count=1 -run TestFiringCPUPerInstance -v ./runtime/internal/chaos -chaos.cpu
func TestFiringCPUPerInstance(t *testing.T) {
	if !*cpuRun {
		t.Skip("a measurement: run with -chaos.cpu")
	}
	const n, window = 10_000, 10 * time.Second
	for instances := 1; instances <= 3; instances++ {
		t.Run(fmt.Sprintf("instances=%d", instances), func(t *testing.T) {
			srv := redistest.Start(t)
			c := srv.Client()
			ctx := context.Background()
			l, err := keyspace.NewResolver(c, "", keyspace.ResolveOptions{}).Layout(ctx)
			if err != nil {
				t.Fatal(err)
			}
			base := time.Now().Add(15 * time.Second).Truncate(time.Second)
			var procs []*exec.Cmd
			for i := range instances {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), childEnv+"="+fmt.Sprintf("load-%d", i), redisEnv+"="+srv.URL(),
					loadEnv+"="+strconv.Itoa(n), baseEnv+"="+strconv.FormatInt(base.UnixMilli(), 10))
				cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				procs = append(procs, cmd)
				t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			}
			// Shared out and firing, and a few heartbeats of warm-up.
			ks := make([]leader.Keys, l.Partitions())
			for p := range ks {
				ks[p] = leader.KeysAt(l.Partition(p))
			}
			deadline := time.Now().Add(2 * time.Minute)
			for {
				holders, _ := leader.Holders(ctx, c, ks)
				count := map[string]int{}
				for _, h := range holders {
					count[h]++
				}
				ok := count[""] == 0 && len(count) == instances && time.Now().After(base.Add(5*time.Second))
				for _, k := range count {
					ok = ok && k >= l.Partitions()/instances && k <= (l.Partitions()+instances-1)/instances
				}
				if ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("not shared out in 2 minutes: %v", count)
				}
				time.Sleep(100 * time.Millisecond)
			}
			fired := func() int64 {
				var total int64
				for p := range l.Partitions() {
					k := rdb.KeysAt(l.Partition(p))
					total += c.XLen(ctx, k.Stream(chronos.DefaultQueue)).Val() + c.ZCard(ctx, k.Delayed(chronos.DefaultQueue)).Val()
				}
				return total
			}
			cpu0 := make([]time.Duration, instances)
			for i, p := range procs {
				cpu0[i] = procCPU(t, p.Process.Pid)
			}
			r0, f0, t0 := redisCPU(t, c), fired(), time.Now()
			time.Sleep(window)
			f1, el := fired(), time.Since(t0)
			rcpu := redisCPU(t, c) - r0
			triggers := f1 - f0
			t.Logf("%d instances, %d schedules, %d partitions: %d triggers in %v (%.0f/s); redis-server %.0f ms/s, %.1f µs/trigger",
				instances, n, l.Partitions(), triggers, el.Round(time.Millisecond), float64(triggers)/el.Seconds(),
				float64(rcpu.Milliseconds())/el.Seconds(), float64(rcpu.Microseconds())/float64(triggers))
			holders, _ := leader.Holders(ctx, c, ks)
			for i, p := range procs {
				cpu := procCPU(t, p.Process.Pid) - cpu0[i]
				led := 0
				for _, h := range holders {
					if h == fmt.Sprintf("load-%d", i) {
						led++
					}
				}
				t.Logf("  load-%d leads %2d partitions: CPU %4.0f ms/s (%.1f %% of a core), %.1f µs per trigger of the namespace",
					i, led, float64(cpu.Milliseconds())/el.Seconds(), 100*cpu.Seconds()/el.Seconds(), float64(cpu.Microseconds())/float64(triggers))
			}
		})
	}
}

// redisCPU is redis-server's CPU time so far (INFO cpu).
func redisCPU(t *testing.T, c redis.UniversalClient) time.Duration {
	t.Helper()
	info, err := c.Info(context.Background(), "cpu").Result()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\r\n") {
		for _, f := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if v, ok := strings.CutPrefix(line, f); ok {
				x, _ := strconv.ParseFloat(v, 64)
				total += x
			}
		}
	}
	return time.Duration(total * float64(time.Second))
}
