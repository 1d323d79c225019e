package healthcheck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// Check is the outcome of one run of a health check, passed to
// Monitor.Report.
type Check struct {
	TaskID   string    // the task, stable across its retries
	Attempt  int       // 1 for the first run of the task
	Schedule string    // schedule that enqueued the run
	Trigger  time.Time // trigger the run stands for
	Queue    string    // queue the task came from (chronos.LocalQueue for Local: it runs in process)
	Instance string    // Monitor.Instance of the process that ran it
	Detail   string    // what was measured
	Err      error     // nil when healthy
}

// Monitor holds the health-check handlers. Create one per process and pass
// it to RegisterChronosJobs.
type Monitor struct {
	// Instance names this replica in reports (default: none).
	Instance string

	// Ping checks the dependency every replica shares; Cluster calls it.
	// Nil reports the check as not configured.
	Ping func(ctx context.Context) error

	// MaxGoroutines is the goroutine count above which Local reports this
	// replica unhealthy (default 10000).
	MaxGoroutines int

	// Report receives every check. Default: log with slog.Default, at
	// Info when healthy and Warn when not.
	Report func(Check)
}

// LocalArgs is the task argument of Local.
type LocalArgs struct{}

// Kind returns the stable task kind of the local check.
func (LocalArgs) Kind() string { return "healthcheck.local" }

// ClusterArgs is the task argument of Cluster.
type ClusterArgs struct{}

// Kind returns the stable task kind of the cluster check.
func (ClusterArgs) Kind() string { return "healthcheck.cluster" }

// ErrUnhealthy is wrapped by the error of a check that found a problem, as
// opposed to one that could not run.
var ErrUnhealthy = errors.New("unhealthy")

// Local checks this replica. An unhealthy replica is reported, not
// failed: retrying a measurement would not change it.
//
//chronos:schedule every=5s isolated=true
func (m *Monitor) Local(ctx context.Context, t *chronos.Task[LocalArgs]) error {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	n := runtime.NumGoroutine()
	c := newCheck(m, t)
	c.Detail = fmt.Sprintf("goroutines=%d heap=%dKiB", n, ms.HeapAlloc/1024)
	limit := m.MaxGoroutines
	if limit <= 0 {
		limit = 10000
	}
	if n > limit {
		c.Err = fmt.Errorf("%w: %d goroutines", ErrUnhealthy, n)
	}
	m.report(c)
	return nil
}

// Cluster checks the shared dependency once per trigger across the
// cluster. A failed ping fails the task, so it is retried once and then
// dead-lettered where operators look.
//
//chronos:schedule every=2s max-retry=1 timeout=1s
func (m *Monitor) Cluster(ctx context.Context, t *chronos.Task[ClusterArgs]) error {
	c := newCheck(m, t)
	start := time.Now()
	switch {
	case m.Ping == nil:
		c.Detail = "no Ping configured"
	default:
		if err := m.Ping(ctx); err != nil {
			c.Err = fmt.Errorf("%w: ping: %w", ErrUnhealthy, err)
		}
		c.Detail = "ping " + time.Since(start).Round(time.Microsecond).String()
	}
	m.report(c)
	return c.Err
}

// newCheck starts the report of a run of task t.
func newCheck[A chronos.TaskArgs](m *Monitor, t *chronos.Task[A]) Check {
	return Check{TaskID: t.ID, Attempt: t.Attempt, Schedule: t.ScheduleID, Trigger: t.TriggerTime,
		Queue: t.Queue, Instance: m.Instance}
}

func (m *Monitor) report(c Check) {
	if m.Report != nil {
		m.Report(c)
		return
	}
	level, msg := slog.LevelInfo, "healthy"
	if c.Err != nil {
		level, msg = slog.LevelWarn, "unhealthy"
	}
	slog.Log(context.Background(), level, "healthcheck: "+msg, "schedule", c.Schedule,
		"trigger", c.Trigger.Format(time.RFC3339), "instance", c.Instance, "detail", c.Detail, "err", c.Err)
}
