package prometheus_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	chronosprom "github.com/chronos-go/chronos/metrics/prometheus"
	chronos "github.com/chronos-go/chronos/runtime"
)

// BenchmarkRecord measures one call of each hot method, from many
// goroutines at once, as workers and the firing loop make them.
func BenchmarkRecord(b *testing.B) {
	m := chronosprom.New(chronosprom.Options{})
	b.Run("TaskStarted+TaskFinished", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.TaskStarted("default", "send_email", time.Millisecond)
				m.TaskFinished("default", "send_email", chronos.OutcomeSuccess, 3*time.Millisecond)
			}
		})
	})
	b.Run("TriggerFired", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.TriggerFired(chronos.FiredTrigger{Schedule: "nightly", Source: "trigger", Result: chronos.TriggerEnqueued, Lag: 2 * time.Millisecond})
			}
		})
	})
}

// BenchmarkEndToEnd drains b.N queued no-op tasks with 10 workers, without
// Metrics and with the Prometheus exporter, to show what recording costs
// next to the Redis round trips of each task. Enqueueing is not timed.
func BenchmarkEndToEnd(b *testing.B) {
	for _, c := range []struct {
		name    string
		metrics chronos.Metrics
	}{{"metrics=none", nil}, {"metrics=prometheus", chronosprom.New(chronosprom.Options{})}} {
		b.Run(c.name, func(b *testing.B) {
			rdb := startRedis(b)
			client := chronos.NewClient(rdb)
			ctx := context.Background()
			for range b.N {
				if _, err := client.Enqueue(ctx, sendEmail{}); err != nil {
					b.Fatal(err)
				}
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			done := make(chan struct{})
			mux := chronos.NewMux()
			chronos.AddHandler(mux, func(context.Context, *chronos.Task[sendEmail]) error {
				if left.Add(-1) == 0 {
					close(done)
				}
				return nil
			})
			srv := chronos.NewServer(rdb, chronos.ServerConfig{Concurrency: 10, Metrics: c.metrics,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
