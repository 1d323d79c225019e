package reports_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/examples/reports"
	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

// startReplica runs the generated registration on a fresh scheduler and
// server, as the example's main does, and returns an Inspector of the same
// Redis to drive and observe it.
func startReplica(t *testing.T, dir string) *chronos.Inspector {
	t.Helper()
	ctx := context.Background()
	rdb := redis.NewClient(redistest.Start(t).Options())
	t.Cleanup(func() { _ = rdb.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sched := chronos.NewScheduler(rdb, chronos.SchedulerConfig{Logger: quiet})
	srv := chronos.NewServer(rdb, chronos.ServerConfig{
		Queues: map[string]int{chronos.DefaultQueue: 3, "batch": 1},
		Logger: quiet,
	})
	mux := chronos.NewMux()
	if err := reports.RegisterChronosJobs(sched, mux, &reports.Reports{Source: reports.SampleSource{}, Dir: dir}); err != nil {
		t.Fatalf("RegisterChronosJobs: %v", err)
	}
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatalf("server start: %v", err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	if err := sched.Start(ctx); err != nil {
		t.Fatalf("scheduler start: %v", err)
	}
	t.Cleanup(func() { _ = sched.Shutdown(context.Background()) })
	return chronos.NewInspector(rdb)
}

// lastRun waits for a run of kind and returns the newest.
func lastRun(t *testing.T, insp *chronos.Inspector, kind string) *chronos.RunRecord {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		runs, err := insp.ListRuns(context.Background(), kind, 1)
		if err != nil {
			t.Fatalf("ListRuns(%s): %v", kind, err)
		}
		if len(runs) > 0 {
			return runs[0]
		}
	}
	t.Fatalf("no run of %s", kind)
	return nil
}

func TestDailySalesCoversTheSeoulDayBeforeItsTriggerAndStoresItsSummary(t *testing.T) {
	dir := t.TempDir()
	insp := startReplica(t, dir)

	// Fire the 02:00 Seoul trigger of 1 March 2026 as the schedule itself
	// would have, through the leader.
	at := time.Date(2026, 3, 1, 2, 0, 0, 0, time.FixedZone("KST", 9*3600))
	if _, err := insp.BackfillSchedule(context.Background(), "reports.Reports.DailySales", at, at, chronos.BackfillOptions{Who: "test"}); err != nil {
		t.Fatalf("BackfillSchedule: %v", err)
	}

	run := lastRun(t, insp, "reports.daily-sales")
	if run.Status != "success" || !run.TriggerTime.Equal(at) {
		t.Fatalf("run = %+v, want a success for trigger %v", run, at)
	}
	var sum reports.SalesSummary
	if err := json.Unmarshal(run.Result, &sum); err != nil {
		t.Fatalf("stored result %s: %v", run.Result, err)
	}
	// February has 28 days in 2026; SampleSource has 3 orders an hour.
	want := reports.SalesSummary{Day: "2026-02-28", Orders: 24 * 3, Total: 24 * (1000 + 2000 + 3000), File: dir + "/sales-2026-02-28.csv"}
	if sum != want {
		t.Errorf("result = %+v, want %+v", sum, want)
	}
	if _, err := os.Stat(sum.File); err != nil {
		t.Errorf("report file: %v", err)
	}
}

func TestMonthEndGroupRunsEveryJobOnTheBatchQueue(t *testing.T) {
	dir := t.TempDir()
	insp := startReplica(t, dir)

	if _, err := insp.TriggerSchedule(context.Background(), "month-end-export", "test"); err != nil {
		t.Fatalf("TriggerSchedule: %v", err)
	}

	for kind, rows := range map[string]int{"reports.Reports.ExportUsers": 3, "reports.Reports.ExportOrders": 31 * 24 * 3} {
		run := lastRun(t, insp, kind)
		if run.Status != "success" || run.Queue != "batch" || run.ScheduleID != "month-end-export" {
			t.Errorf("%s: run = %+v, want a success on queue batch for schedule month-end-export", kind, run)
			continue
		}
		var res reports.ExportResult
		if err := json.Unmarshal(run.Result, &res); err != nil {
			t.Fatalf("%s: stored result %s: %v", kind, run.Result, err)
		}
		if res.Rows != rows {
			t.Errorf("%s: %d rows, want %d", kind, res.Rows, rows)
		}
	}
}
