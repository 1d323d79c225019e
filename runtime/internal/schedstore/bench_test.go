package schedstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
)

func manyDefs(n int) []Definition {
	defs := make([]Definition, n)
	for i := range defs {
		defs[i] = def(fmt.Sprintf("schedule-%06d", i), "0 */5 * * * ?")
	}
	return defs
}

// BenchmarkRegister measures registering n schedules from one instance
// whose definitions are already in force (the common restart case).
func BenchmarkRegister(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := redistest.Start(b)
			st := New(s.Client(), Config{Layout: testLayout()})
			inst := Instance{ID: "a", Version: "v1", Started: time.Now()}
			st.Heartbeat(ctx, inst)
			defs := manyDefs(n)
			if _, err := st.Register(ctx, inst.Declarer(), defs); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := st.Register(ctx, inst.Declarer(), defs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/schedule")
		})
	}
}

// BenchmarkSweep measures a leader's sweep over n schedules declared by
// three live instances, with nothing to hand over or retire. In "steady"
// nothing changed since the previous sweep (the common case); in "changed"
// one instance restarted in between (a new start time), so every sweep
// reads the whole registry. The clock stands still, so no instance expires
// and no periodic full pass falls due however long the benchmark runs.
func BenchmarkSweep(b *testing.B) {
	for _, mode := range []string{"steady", "changed"} {
		for _, n := range []int{1_000, 10_000} {
			b.Run(fmt.Sprintf("%s/%d", mode, n), func(b *testing.B) {
				s := redistest.Start(b)
				st := New(s.Client(), Config{Layout: testLayout(), Now: func() time.Time { return t0 }})
				defs := manyDefs(n)
				var first Instance
				for i := range 3 {
					inst := Instance{ID: fmt.Sprint("i", i), Version: "v1", Started: t0.Add(time.Duration(i-3) * time.Hour)}
					st.Heartbeat(ctx, inst)
					if _, err := st.Register(ctx, inst.Declarer(), defs); err != nil {
						b.Fatal(err)
					}
					if i == 0 {
						first = inst
					}
				}
				if _, err := st.Sweep(ctx); err != nil { // a leader's first sweep
					b.Fatal(err)
				}
				for b.Loop() {
					if mode == "changed" {
						// Still the lowest rank, so nothing is handed over.
						first.Started = first.Started.Add(time.Millisecond)
						st.Heartbeat(ctx, first)
					}
					if _, err := st.Sweep(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/schedule")
			})
		}
	}
}
