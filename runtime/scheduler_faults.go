package chronos

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// faultLogEvery is the least time between two warnings about writes that
// keep failing.
const faultLogEvery = 10 * time.Second

// faultLog says, once per faultLogEvery, how many writes
// failed since it last said so and the last error, instead of a line per
// failure: with Redis out of memory every schedule fails each retry, and
// a line each would bury the one that matters. It says once when writes
// succeed again.
type faultLog struct {
	log       *slog.Logger
	warning   string // the warning's message
	recovered string // the message once writes succeed again

	mu      sync.Mutex
	last    time.Time // the last warning
	count   int       // failures since it
	failing bool      // a warning was logged and no write succeeded since
	// recoveries counts the times writes succeeded again after failing:
	// each leader session (one per partition) ends its entries' backoff
	// when it sees it move.
	recoveries atomic.Int64
}

// failed counts a failed write.
func (f *faultLog) failed(err error, attrs ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count++
	now := time.Now()
	if !f.failing || now.Sub(f.last) >= faultLogEvery {
		args := append([]any{"failures", f.count, "err", err}, attrs...)
		f.log.Warn(f.warning, args...)
		f.last, f.count, f.failing = now, 0, true
	}
}

// ok records a write that succeeded. It reports whether writes had been
// failing until then.
func (f *faultLog) ok() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.failing {
		return false
	}
	f.log.Info(f.recovered, "failures_since_last_warning", f.count)
	f.failing, f.count = false, 0
	f.recoveries.Add(1)
	return true
}
