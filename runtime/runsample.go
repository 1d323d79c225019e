package chronos

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// runSampler spaces the run records of successful runs of a kind, per
// server, by ServerConfig.SuccessRunInterval. A run record was the largest
// per-task cost left once the queue's own round trips were batched (about
// 7 µs of Go and Redis CPU and 10 allocations of a no-op task's 40 µs),
// and RunRetention keeps only the last thousand or so per kind anyway: at
// thousands of successes a second that is a fraction of a second of
// history, written in full and thrown away. Failures, and the runs of
// schedules (which fire at human rates, and whose history the Inspector
// and the console show), are always recorded.
type runSampler struct {
	every time.Duration // <= 0: record every success
	last  sync.Map      // kind → *atomic.Int64, unix ns of the last success recorded
}

// keep reports whether the run r, which ended at now, gets a run record.
func (p *runSampler) keep(r *run, now time.Time) bool {
	if p.every <= 0 || r.outcome != rdb.Done || r.m.ScheduleID != "" {
		return true
	}
	v, ok := p.last.Load(r.m.Kind)
	if !ok {
		v, _ = p.last.LoadOrStore(r.m.Kind, new(atomic.Int64))
	}
	last := v.(*atomic.Int64)
	prev, t := last.Load(), now.UnixNano()
	return t-prev >= int64(p.every) && last.CompareAndSwap(prev, t)
}
