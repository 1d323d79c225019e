package firing

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

var sizes = []int{10_000, 100_000}

// fill adds n schedules with periods between 1s and 1h and random phases,
// like a large registry of cron and interval schedules.
func fill(l *Loop, n int) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range n {
		period := time.Duration(1+rng.IntN(3600)) * time.Second
		phase := time.Duration(rng.Int64N(int64(period)))
		base := t0.Add(phase)
		next := func(after time.Time) time.Time {
			if after.Before(base) {
				return base
			}
			return base.Add((after.Sub(base)/period + 1) * period)
		}
		l.Set(fmt.Sprintf("schedule-%06d", i), next, t0)
	}
}

// BenchmarkMemoryPerSchedule reports the heap bytes one schedule costs in a
// loop of n schedules (entry, heap slot, map slot and the ID string; the
// NextFunc closure is the caller's and counted too, as it would be in use).
func BenchmarkMemoryPerSchedule(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var perSchedule float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				l := New(Config{Fire: func(context.Context, time.Time, []Due) {}})
				fill(l, n)
				runtime.GC()
				runtime.ReadMemStats(&after)
				perSchedule = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
				runtime.KeepAlive(l)
			}
			b.ReportMetric(perSchedule, "B/schedule")
		})
	}
}

// BenchmarkFire measures the loop's own CPU per fire with n schedules: pop
// the head, call its NextFunc, sift it back down, append it to the batch.
// Time advances to each next head, so every iteration fires at least one
// schedule.
func BenchmarkFire(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			l := New(Config{Fire: func(context.Context, time.Time, []Due) {}})
			fill(l, n)
			fires := 0
			b.ResetTimer()
			for b.Loop() {
				now := unixUTC(l.heap[0].at)
				fires += len(l.collect(now))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(fires), "ns/fire")
		})
	}
}

// BenchmarkReschedule measures one O(log n) update of a random schedule.
func BenchmarkReschedule(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			l := New(Config{Fire: func(context.Context, time.Time, []Due) {}})
			fill(l, n)
			ids := make([]string, 0, n)
			for id := range l.entries {
				ids = append(ids, id)
			}
			rng := rand.New(rand.NewPCG(3, 3))
			b.ResetTimer()
			for b.Loop() {
				l.Reschedule(ids[rng.IntN(n)], t0.Add(time.Duration(rng.IntN(86400))*time.Second))
			}
		})
	}
}
