package chronos

import (
	"math/rand/v2"
	"time"
)

// Backoff returns how long to wait before the run that follows failed run
// number attempt (1 for the first run).
type Backoff func(attempt int) time.Duration

// ExponentialBackoff returns the default retry policy: exponential backoff
// with full jitter. The delay after failed run n is drawn uniformly from
// [0, min(max, base·2^(n-1))]. Full jitter spreads the retries of tasks that
// failed together (a downstream outage) instead of sending them back in one
// wave. Zero base or max mean 1 s and 1 h.
func ExponentialBackoff(base, max time.Duration) Backoff {
	if base <= 0 {
		base = time.Second
	}
	if max <= 0 {
		max = time.Hour
	}
	return func(attempt int) time.Duration {
		ceil := max
		if attempt < 1 {
			attempt = 1
		}
		if shift := attempt - 1; shift < 62 && base <= max>>shift {
			ceil = base << shift
		}
		return rand.N(ceil + 1)
	}
}

// ConstantBackoff returns a policy that always waits d.
func ConstantBackoff(d time.Duration) Backoff {
	return func(int) time.Duration { return d }
}

var defaultBackoff = ExponentialBackoff(time.Second, time.Hour)
