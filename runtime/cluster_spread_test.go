package chronos

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
)

// spreadSize reads a size of the spread test from the environment, or
// returns def.
func spreadSize(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// chronosCalls adds up the calls of the commands chronos sends, leaving
// out the background of a cluster: INFO (the test's own), replication,
// cluster bus and client bookkeeping, COMMAND.
func chronosCalls(calls map[string]int64) int64 {
	var n int64
	for cmd, c := range calls {
		switch {
		case cmd == "info", cmd == "ping", cmd == "replconf", cmd == "wait",
			strings.HasPrefix(cmd, "cluster|"), strings.HasPrefix(cmd, "command"),
			strings.HasPrefix(cmd, "client|"), strings.HasPrefix(cmd, "config|"):
			continue
		}
		n += c
	}
	return n
}

// The per-master distribution on a cluster of three masters (each with a
// replica): a namespace's 12 partitions, four on each master, spread the
// queue's keys and commands, end to end (enqueue, fetch, run, finish), and
// the scheduler's keys and its firings' commands over the masters, each
// within 20 % of a third. Redis CPU per task and per firing is logged per
// master. Sizes: CHRONOS_SPREAD_TASKS (default 6,000 here; docs/cluster.md
// quotes 30,000) and CHRONOS_SPREAD_SCHEDULES (default 2,000; 10,000),
// which fire every CHRONOS_SPREAD_EVERY seconds (default 2; 10) for two
// periods.
func TestTheQueueAndTheSchedulerSpreadEvenlyOverThreeMasters(t *testing.T) {
	skipInLayoutOne(t)
	if !OnTestCluster() {
		t.Skip("make test-cluster runs it (TestANamespaceSpreadsOverEveryMaster is the short version)")
	}
	redistest.Parallel(t)
	cl := testClusters.Get(t)
	ctx := context.Background()
	tasks := spreadSize("CHRONOS_SPREAD_TASKS", 6000)
	schedules := spreadSize("CHRONOS_SPREAD_SCHEDULES", 2000)
	every := time.Duration(spreadSize("CHRONOS_SPREAD_EVERY", 2)) * time.Second

	within := func(what string, got, all int64) {
		t.Helper()
		third := float64(all) / 3
		if f := float64(got); f < 0.8*third || f > 1.2*third {
			t.Errorf("%s: %d of %d, not within 20%% of a third", what, got, all)
		}
	}
	check := func(phase string, d redistest.ClusterStats, units int, unit string) {
		t.Helper()
		var keys, cmds int64
		for _, m := range d {
			keys += m.Keys
			cmds += chronosCalls(m.Calls)
		}
		for _, m := range d {
			t.Logf("%s, master %s: %d keys (%.1f %%), %d commands (%.1f %%), %.1f µs of Redis CPU per %s of the namespace",
				phase, m.Addr, m.Keys, 100*float64(m.Keys)/float64(keys), chronosCalls(m.Calls), 100*float64(chronosCalls(m.Calls))/float64(cmds),
				float64(m.CPU.Microseconds())/float64(units), unit)
			within(phase+": keys on "+m.Addr, m.Keys, keys)
			within(phase+": commands on "+m.Addr, chronosCalls(m.Calls), cmds)
		}
	}

	// The queue, end to end: half the tasks with a dedup key of their
	// own (a key each, spread by the key), half spread round-robin.
	var ran atomic.Int64
	mux := NewMux()
	AddHandler(mux, func(ctx context.Context, task *Task[tick]) error {
		ran.Add(1)
		return nil
	})
	before, err := cl.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	srv := NewServer(cl.NewClient(nil), ServerConfig{Logger: quietTestLogger(), Concurrency: 20, SuccessRunInterval: -1})
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	client := NewClient(cl.NewClient(nil))
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < tasks; i += 8 {
				var opts []EnqueueOption
				if i%2 == 1 {
					opts = append(opts, WithDedupKey(fmt.Sprintf("order-%d", i), time.Hour))
				}
				if _, err := client.Enqueue(ctx, tick{N: i}, opts...); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	_ = client.Close()
	waitUntil(t, "every task to run", func() bool { return ran.Load() == int64(tasks) })
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	after, err := cl.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("queue: %d tasks end to end in %v", tasks, took.Round(time.Millisecond))
	check("queue end to end", after.Sub(before), tasks, "task")

	// The scheduler: three instances, four partitions each; the
	// registration writes the schedules, then two periods of firings.
	before = after
	var ss []*Scheduler
	for i := range 3 {
		s := NewScheduler(cl.NewClient(nil), SchedulerConfig{InstanceID: fmt.Sprintf("i%d", i), LeaderTTL: 2 * time.Second,
			Logger: quietTestLogger(), FireAhead: -1})
		for k := range schedules {
			if err := RegisterInterval(s, every, tick{N: k}, WithScheduleID(fmt.Sprintf("sched-%d", k))); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
		t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	}
	waitBalanced(t, ss...)
	// The triggers fired are the tasks in the streams (nothing serves
	// them), on the master of each schedule's partition.
	st := testStore(t, cl.Client())
	streamed := func() map[string]int64 {
		entries := map[string]int64{}
		for p := range st.Partitions() {
			k := st.QueueKeys(p).Stream(DefaultQueue)
			n, err := cl.Client().XLen(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			entries[cl.MasterForKey(k).Addr()] += n
		}
		return entries
	}
	registered, err := cl.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	early := streamed()
	check("scheduler start (registration, election, first firings)", registered.Sub(before), schedules, "schedule")
	time.Sleep(2 * every)
	fired, err := cl.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	entries := streamed()
	var total int64
	for addr, n := range entries {
		entries[addr] = n - early[addr]
		total += entries[addr]
	}
	d := fired.Sub(registered)
	t.Logf("scheduler: %d schedules every %v, %d triggers fired in %v", schedules, every, total, 2*every)
	for _, m := range d {
		t.Logf("scheduler firing, master %s: %d triggers (%.1f %%), %.1f µs of Redis CPU per trigger it fired", m.Addr, entries[m.Addr],
			100*float64(entries[m.Addr])/float64(total), float64(m.CPU.Microseconds())/float64(max(entries[m.Addr], 1)))
		within("triggers fired on "+m.Addr, entries[m.Addr], total)
	}
	check("scheduler firing", d, int(max(total, 1)), "trigger")
}
