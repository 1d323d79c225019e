package chronos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
)

// With WithReplicas, every enqueue on a cluster waits for the replica of
// the master that took it: each master runs WAITs, on the connection of
// the enqueues (or they would count nothing), whether the enqueues come
// one by one, group-committed from concurrent callers, or in EnqueueMany.
func TestWithReplicasWaitsOnTheMasterOfEachEnqueue(t *testing.T) {
	skipInLayoutOne(t)
	if testing.Short() {
		t.Skip("a three-master cluster")
	}
	redistest.Parallel(t)
	cl := testClusters.Get(t)
	ctx := context.Background()
	before := map[string]int{}
	for _, m := range cl.Masters() {
		before[m.Addr()] = waitCalls(t, m.Addr())
	}
	c := NewClient(cl.NewClient(nil), WithReplicas(1, time.Second))
	defer c.Close()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 30 {
				var opts []EnqueueOption
				if i%3 == 0 {
					opts = append(opts, WithDedupKey(fmt.Sprintf("k%d-%d", w, i), time.Minute))
				}
				if i%5 == 0 {
					opts = append(opts, WithProcessIn(time.Hour))
				}
				if _, err := c.Enqueue(ctx, tick{N: i}, opts...); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	many := make([]TaskArgs, 50)
	for i := range many {
		many[i] = tick{N: i}
	}
	if _, err := c.EnqueueMany(ctx, many); err != nil {
		t.Fatal(err)
	}
	for _, m := range cl.Masters() {
		got := waitCalls(t, m.Addr()) - before[m.Addr()]
		t.Logf("master %s: %d WAIT calls", m.Addr(), got)
		if got == 0 {
			t.Errorf("master %s ran no WAIT", m.Addr())
		}
	}
	q, err := NewInspector(cl.NewClient(nil)).QueueInfo(ctx, DefaultQueue)
	if err != nil || q.Ready+q.Delayed != 8*30+50 {
		t.Fatalf("queue %+v, %v; want %d tasks", q, err, 8*30+50)
	}
}

// A replica that does not acknowledge in time (here: stopped for a
// second) makes the enqueues of its master fail with ErrNotReplicated,
// though the task is on the master, and leaves the other masters'
// enqueues alone. A server without replicas is never waited for.
func TestWithReplicasReportsAnEnqueueTheReplicaDidNotAcknowledge(t *testing.T) {
	skipInLayoutOne(t)
	if testing.Short() {
		t.Skip("a three-master cluster")
	}
	redistest.Parallel(t)
	cl := redistest.StartCluster(t, redistest.ClusterOptions{ReplicasPerMaster: 1})
	ctx := context.Background()
	c := NewClient(cl.NewClient(nil), WithReplicas(1, 200*time.Millisecond))
	defer c.Close()
	// The client has seen every master with its replica.
	for i := range 12 {
		if _, err := c.Enqueue(ctx, tick{N: i}); err != nil {
			t.Fatal(err)
		}
	}
	st := testStore(t, cl.Client())
	stopped := cl.MasterForKey(st.QueueKeys(0).Stream(DefaultQueue))
	var replica redistest.ClusterNode
	for _, r := range cl.Replicas() {
		if id := cl.Nodes(); r.MasterID == nodeID(id, stopped.Addr()) {
			replica = r
		}
	}
	if replica.Server == nil {
		t.Fatal("no replica of the master of partition 0")
	}
	if err := syscall.Kill(replica.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(replica.PID(), syscall.SIGCONT)
	var short, ok int
	for i := range 12 { // one per partition, in turn
		_, err := c.Enqueue(ctx, tick{N: 100 + i})
		switch {
		case errors.Is(err, ErrNotReplicated):
			short++
		case err == nil:
			ok++
		default:
			t.Fatal(err)
		}
	}
	if err := syscall.Kill(replica.PID(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// The stopped replica's master serves 4 of the 12 partitions.
	if short != 4 || ok != 8 {
		t.Fatalf("%d enqueues short of replicas and %d acknowledged; want 4 and 8", short, ok)
	}
	q, err := NewInspector(cl.Client()).QueueInfo(ctx, DefaultQueue)
	if err != nil || q.Ready != 24 {
		t.Fatalf("queue %+v, %v; want all 24 tasks enqueued", q, err)
	}

	// A server without replicas: nothing to wait for, nothing waited.
	single := redistest.Start(t)
	before := waitCalls(t, single.Addr())
	sc := NewClient(single.Client(), WithReplicas(1, time.Second))
	defer sc.Close()
	for i := range 5 {
		if _, err := sc.Enqueue(ctx, tick{N: i}); err != nil {
			t.Fatalf("enqueue on a server without replicas: %v", err)
		}
	}
	if got := waitCalls(t, single.Addr()) - before; got != 0 {
		t.Fatalf("%d WAITs on a server that never had a replica", got)
	}
}

// nodeID is the ID of the node at addr.
func nodeID(nodes []redistest.ClusterNode, addr string) string {
	for _, n := range nodes {
		if n.Addr() == addr {
			return n.ID
		}
	}
	return ""
}

// BenchmarkEnqueueOnACluster is the cost of WithReplicas on a cluster of
// three masters with a replica each: one enqueue at a time (a round trip
// to a master, and with WithReplicas a WAIT for its replica in the same
// round trip), and from 16 goroutines (group-committed pipelines, one per
// master, each ending with WAIT).
//
//	go test -run '^$' -bench EnqueueOnACluster -benchtime 5000x -count 3 ./runtime/
func BenchmarkEnqueueOnACluster(b *testing.B) {
	cl := testClusters.Get(b)
	ctx := context.Background()
	for _, replicas := range []int{0, 1} {
		var opts []ClientOption
		if replicas > 0 {
			opts = append(opts, WithReplicas(replicas, time.Second))
		}
		c := NewClient(cl.NewClient(nil), opts...)
		b.Run(fmt.Sprintf("replicas=%d/sequential", replicas), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := c.Enqueue(ctx, tick{N: i}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("replicas=%d/parallel", replicas), func(b *testing.B) {
			b.SetParallelism(8) // 16 goroutines on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Enqueue(ctx, tick{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		_ = c.Close()
	}
}
