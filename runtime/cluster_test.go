package chronos_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

type flaky struct {
	Fail bool `json:"fail"`
}

func (flaky) Kind() string { return "flaky" }

// Every script declares its keys and touches one partition's, so the whole
// life of a task works on Redis Cluster, in a namespace of 12 partitions
// over three masters: enqueue (immediate, delayed, deduplicated), fetch,
// retry, dead letters, requeue, run records. Two namespaces run side by
// side.
func TestTheQueueWorksOnRedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	redistest.Parallel(t)
	rc := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3}).Client()
	ctx := context.Background()
	for _, ns := range []string{"chronos", "billing"} {
		done := make(chan string, 10)
		mux := chronos.NewMux()
		chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[flaky]) error {
			if task.Args.Fail && task.Attempt == 1 {
				return errors.New("first run fails")
			}
			if task.Args.Fail && task.Attempt > 2 {
				return chronos.ErrSkipRetry
			}
			done <- task.ID
			return nil
		}, chronos.WithBackoff(chronos.ConstantBackoff(time.Millisecond)))
		srv := chronos.NewServer(rc, chronos.ServerConfig{Namespace: ns, Logger: quietLogger, VisibilityTimeout: 300 * time.Millisecond, SuccessRunInterval: -1})
		if err := srv.Start(ctx, mux); err != nil {
			t.Fatalf("%s: Start: %v", ns, err)
		}
		client := chronos.NewClient(rc, chronos.WithNamespace(ns))
		insp := chronos.NewInspector(rc, chronos.WithNamespace(ns))

		now, _ := client.Enqueue(ctx, flaky{})
		later, _ := client.Enqueue(ctx, flaky{}, chronos.WithProcessIn(20*time.Millisecond), chronos.WithDedupKey("once", time.Minute))
		dup, err := client.Enqueue(ctx, flaky{}, chronos.WithDedupKey("once", time.Minute))
		if err != nil || !dup.Duplicate || dup.ID != later.ID {
			t.Fatalf("%s: duplicate enqueue = %+v, %v", ns, dup, err)
		}
		retried, err := client.Enqueue(ctx, flaky{Fail: true}, chronos.WithMaxRetry(5))
		if err != nil {
			t.Fatalf("%s: Enqueue: %v", ns, err)
		}
		got := map[string]bool{}
		for range 3 {
			got[recv(t, done, ns+" task")] = true
		}
		if !got[now.ID] || !got[later.ID] || !got[retried.ID] {
			t.Fatalf("%s: ran %v", ns, got)
		}

		dead, err := client.Enqueue(ctx, flaky{Fail: true}, chronos.WithMaxRetry(0))
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, ns+" dead letter", func() bool {
			d, err := insp.GetDead(ctx, dead.ID)
			return err == nil && d.Reason == "first run fails"
		})
		if _, err := insp.RequeueDead(ctx, dead.ID); err != nil {
			t.Fatalf("%s: RequeueDead: %v", ns, err)
		}
		// Requeued with a fresh budget, it runs as attempt 1 again, fails,
		// and MaxRetry 0 sends it back.
		eventually(t, ns+" dead letter again", func() bool {
			n, err := insp.CountDead(ctx)
			return err == nil && n == 1
		})
		runs, err := insp.ListRuns(ctx, "flaky", 100)
		// now, later, retried (retry + success), dead, requeued-and-dead.
		if err != nil || len(runs) != 6 {
			t.Fatalf("%s: ListRuns = %d records, %v", ns, len(runs), err)
		}
		if err := srv.Shutdown(ctx); err != nil {
			t.Fatalf("%s: Shutdown: %v", ns, err)
		}
	}
}

// A namespace's partitions are placed evenly over the slots, so on a
// three-master cluster its keys, its tasks and the commands that write
// them spread over the three masters: each within 20 % of a third.
func TestANamespaceSpreadsOverEveryMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	redistest.Parallel(t)
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3})
	rc := cl.Client()
	ctx := context.Background()
	client := chronos.NewClient(rc)
	defer client.Close()
	before, err := cl.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const tasks = 3000
	var wg sync.WaitGroup
	for w := range 10 { // concurrent producers: group-committed pipelines, split per master
		wg.Go(func() {
			for i := w; i < tasks; i += 10 {
				var opts []chronos.EnqueueOption
				if i%2 == 1 {
					// Half with a dedup key of their own, a key each: the
					// partition of a key is that of its text before the last
					// colon, which differs here.
					opts = append(opts, chronos.WithDedupKey(fmt.Sprintf("order-%d", i), time.Hour))
				}
				if _, err := client.Enqueue(ctx, Greet{}, opts...); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	after, err := cl.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	entries := map[string]int64{}
	p := partsOf(t, rc, "")
	for _, r := range p.st.Parts {
		key := r.K.Stream("default")
		entries[cl.MasterForKey(key).Addr()] += rc.XLen(ctx, key).Val()
	}
	var keys, writes, total int64 // a script's XADD counts as an XADD too
	for _, m := range d {
		keys += m.Keys
		writes += m.Calls["xadd"] + m.Calls["evalsha"]
	}
	for _, n := range entries {
		total += n
	}
	if total != tasks {
		t.Fatalf("%d tasks in the streams, want %d", total, tasks)
	}
	within := func(what string, got, all int64) {
		t.Helper()
		third := float64(all) / 3
		if f := float64(got); f < 0.8*third || f > 1.2*third {
			t.Errorf("%s: %d of %d, not within 20%% of a third", what, got, all)
		}
	}
	for _, m := range d {
		w := m.Calls["xadd"] + m.Calls["evalsha"]
		t.Logf("master %s: %d keys, %d stream entries, %d XADD + EVALSHA calls, %v CPU", m.Addr, m.Keys, entries[m.Addr], w, m.CPU)
		within("keys on "+m.Addr, m.Keys, keys)
		within("tasks on "+m.Addr, entries[m.Addr], tasks)
		within("enqueue commands on "+m.Addr, w, writes)
	}

	// Serving them spreads the same way: fetches, acknowledgements and run
	// records land on the master of each task's partition.
	var ran atomic.Int64
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		ran.Add(1)
		return nil
	})
	before = after
	srv := chronos.NewServer(rc, chronos.ServerConfig{Logger: quietLogger, Concurrency: 20})
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	eventually(t, "every task to run", func() bool { return ran.Load() == tasks })
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if after, err = cl.Stats(ctx); err != nil {
		t.Fatal(err)
	}
	d = after.Sub(before)
	var calls int64
	for _, m := range d {
		calls += m.Calls["evalsha"]
	}
	for _, m := range d {
		t.Logf("serving, master %s: %d script calls, %d commands, %.1f µs CPU per task of the namespace", m.Addr, m.Calls["evalsha"], m.Commands,
			float64(m.CPU.Microseconds())/tasks)
		within("script calls serving on "+m.Addr, m.Calls["evalsha"], calls)
	}
}

// An idle server on a cluster blocks in one read per partition, on every
// master. A task wakes the read of its partition, which ends the others
// (CLIENT UNBLOCK) instead of waiting out their block period, so pick-up
// stays prompt; Shutdown ends them all at once too.
func TestAnIdleServerOnAClusterWakesAndStopsPromptly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	redistest.Parallel(t)
	rc := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3}).Client()
	ctx := context.Background()
	started := make(chan time.Time, 1)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		started <- time.Now()
		return nil
	})
	srv := chronos.NewServer(rc, chronos.ServerConfig{Logger: quietLogger}) // reads block for 1 s
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	client := chronos.NewClient(rc)
	defer client.Close()
	for i := range 12 { // one task in each partition in turn
		time.Sleep(100 * time.Millisecond) // idle: the server blocks again
		at := time.Now()
		if _, err := client.Enqueue(ctx, Greet{}); err != nil {
			t.Fatal(err)
		}
		if took := recv(t, started, "the task to start").Sub(at); took > 500*time.Millisecond {
			t.Fatalf("task %d started %v after its enqueue: the blocked reads of other partitions were waited out", i, took)
		}
	}
	time.Sleep(100 * time.Millisecond)
	at := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(at); took > 500*time.Millisecond {
		t.Fatalf("Shutdown took %v: the blocking reads ran out their second", took)
	}
}
