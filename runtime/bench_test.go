package chronos_test

import (
	"context"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

// BenchmarkEnqueue measures one immediate enqueue: one script call.
func BenchmarkEnqueue(b *testing.B) {
	rdb := redistest.Start(b).Client()
	client := chronos.NewClient(rdb)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.Enqueue(ctx, Greet{Name: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnqueueParallel measures enqueue throughput from many goroutines
// sharing one client.
func BenchmarkEnqueueParallel(b *testing.B) {
	rdb := redistest.Start(b).Client()
	client := chronos.NewClient(rdb)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := client.Enqueue(ctx, Greet{Name: "bench"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkEnqueueMany measures enqueueing in pipelined batches of 100;
// one op is one task.
func BenchmarkEnqueueMany(b *testing.B) {
	rdb := redistest.Start(b).Client()
	client := chronos.NewClient(rdb)
	ctx := context.Background()
	batch := make([]chronos.TaskArgs, 100)
	for i := range batch {
		batch[i] = Greet{Name: "bench"}
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i += len(batch) {
		n := min(len(batch), b.N-i)
		if _, err := client.EnqueueMany(ctx, batch[:n]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEndToEnd measures draining b.N queued no-op tasks with 10
// workers: fetch, run, acknowledge and record each. Enqueueing is not timed.
func BenchmarkEndToEnd(b *testing.B) {
	for _, conc := range []int{10, 100} {
		b.Run("concurrency="+itoa(conc), func(b *testing.B) {
			rdb := redistest.Start(b).Client()
			client := chronos.NewClient(rdb)
			ctx := context.Background()
			for range b.N {
				if _, err := client.Enqueue(ctx, Greet{Name: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			done := make(chan struct{})
			mux := chronos.NewMux()
			chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[Greet]) error {
				if left.Add(-1) == 0 {
					close(done)
				}
				return nil
			})
			srv := chronos.NewServer(rdb, chronos.ServerConfig{Concurrency: conc, Logger: quietLogger})
			b.ReportAllocs()
			b.ResetTimer()
			if err := srv.Start(ctx, mux); err != nil {
				b.Fatal(err)
			}
			<-done
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
			_ = srv.Shutdown(ctx)
		})
	}
}

// BenchmarkPickupLatency measures the time from Enqueue returning to the
// handler starting, on an idle server (one task at a time), and reports
// its median and 99th percentile.
func BenchmarkPickupLatency(b *testing.B) {
	rdb := redistest.Start(b).Client()
	client := chronos.NewClient(rdb)
	ctx := context.Background()
	started := make(chan time.Time, 1)
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[Greet]) error {
		started <- time.Now()
		return nil
	})
	srv := chronos.NewServer(rdb, chronos.ServerConfig{Concurrency: 1, Logger: quietLogger})
	if err := srv.Start(ctx, mux); err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown(ctx)
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		if _, err := client.Enqueue(ctx, Greet{}); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		lat = append(lat, (<-started).Sub(t0))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}
