package prometheus_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	chronosprom "github.com/chronos-go/chronos/metrics/prometheus"
	chronos "github.com/chronos-go/chronos/runtime"
)

// gauges maps the label sets of gauge family name to their values; an
// absent family is an empty map.
func gauges(t *testing.T, reg prom.Gatherer, name string) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				out[labels(m)] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

func TestHealthCollectorExportsTheHealthOfEverySchedule(t *testing.T) {
	rdb := startRedis(t)
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	insp := chronos.NewInspector(rdb)

	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(context.Context, *chronos.Task[tick]) error { return nil })
	chronos.AddHandler(mux, func(context.Context, *chronos.Task[broken]) error { return chronos.ErrSkipRetry })
	srv := chronos.NewServer(rdb, chronos.ServerConfig{Logger: quiet})
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Shutdown(ctx) }()
	sched := chronos.NewScheduler(rdb, chronos.SchedulerConfig{Logger: quiet, LeaderTTL: time.Second})
	for _, err := range []error{
		chronos.RegisterInterval(sched, time.Second, tick{}, chronos.WithScheduleID("ticker"), chronos.WithLateAfter(2*time.Second)),
		chronos.RegisterInterval(sched, time.Second, broken{}, chronos.WithScheduleID("broken"), chronos.WithFailingAfter(1)),
		chronos.RegisterInterval(sched, time.Hour, tick{}, chronos.WithScheduleID("quiet")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := sched.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sched.Shutdown(ctx) }()
	if err := insp.PauseSchedule(ctx, "quiet", chronos.PauseOptions{}); err != nil {
		t.Fatal(err)
	}

	reg := registry(t, chronosprom.HealthCollector(insp, chronosprom.HealthOptions{}))
	waitFor(t, "broken failing, ticker succeeding", func() bool {
		h := gauges(t, reg, "chronos_schedule_health")
		return h["schedule=broken,state=failing"] == 1 && gauges(t, reg, "chronos_schedule_last_run_outcome")["outcome=success,schedule=ticker"] == 1
	})
	if got, want := gauges(t, reg, "chronos_schedules"), map[string]float64{
		"state=ok": 1, "state=late": 0, "state=failing": 1, "state=paused": 1, "state=retired": 0,
	}; !equalMaps(got, want) {
		t.Errorf("chronos_schedules = %v, want %v", got, want)
	}
	if got := gauges(t, reg, "chronos_schedule_health"); len(got) != 3 || got["schedule=ticker,state=ok"] != 1 || got["schedule=quiet,state=paused"] != 1 {
		t.Errorf("chronos_schedule_health = %v: want one series per schedule, its state as label", got)
	}
	success := gauges(t, reg, "chronos_schedule_last_success_timestamp_seconds")
	if ts := success["schedule=ticker"]; len(success) != 1 || time.Since(time.UnixMilli(int64(ts*1000))) > 10*time.Second {
		t.Errorf("last success %v: want ticker's, seconds ago, and none for the others", success)
	}
	if got := gauges(t, reg, "chronos_schedule_last_run_outcome"); len(got) != 2 || got["outcome=dead,schedule=broken"] != 1 {
		t.Errorf("last outcomes %v: want broken's dead, ticker's success, none for quiet", got)
	}
	if got := gauges(t, reg, "chronos_schedule_consecutive_failures"); got["schedule=broken"] < 1 || got["schedule=ticker"] != 0 {
		t.Errorf("consecutive failures %v", got)
	}
	if got := gauges(t, reg, "chronos_schedule_health_omitted"); got[""] != 0 {
		t.Errorf("omitted %v, want 0", got)
	}

	// Bounded: problems first, the rest counted but left out.
	small := registry(t, chronosprom.HealthCollector(insp, chronosprom.HealthOptions{MaxSchedules: 1}))
	if got := gauges(t, small, "chronos_schedule_health"); len(got) != 1 || got["schedule=broken,state=failing"] != 1 {
		t.Errorf("MaxSchedules 1: %v, want the failing schedule only", got)
	}
	if got := gauges(t, small, "chronos_schedule_health_omitted"); got[""] != 2 {
		t.Errorf("MaxSchedules 1: omitted %v, want 2", got)
	}
	if got := gauges(t, small, "chronos_schedules"); got["state=ok"]+got["state=failing"]+got["state=paused"] != 3 {
		t.Errorf("MaxSchedules 1: counts %v, want all three schedules counted", got)
	}
	none := registry(t, chronosprom.HealthCollector(insp, chronosprom.HealthOptions{MaxSchedules: -1}))
	if got := gauges(t, none, "chronos_schedule_lateness_seconds"); len(got) != 0 {
		t.Errorf("MaxSchedules -1: lateness series %v, want none", got)
	}
	only := registry(t, chronosprom.HealthCollector(insp, chronosprom.HealthOptions{Schedules: []string{"ticker", "nope"}}))
	if got := gauges(t, only, "chronos_schedules"); got["state=ok"] != 1 || got["state=failing"]+got["state=paused"] != 0 {
		t.Errorf("Schedules [ticker nope]: counts %v, want ticker only", got)
	}

	// The scheduler stops: ticker turns late, its lateness grows.
	if err := sched.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "ticker late", func() bool { return gauges(t, reg, "chronos_schedule_health")["schedule=ticker,state=late"] == 1 })
	if got := gauges(t, reg, "chronos_schedule_health"); len(got) != 3 {
		t.Errorf("chronos_schedule_health = %v: the late series should have replaced the ok one", got)
	}
	if l := gauges(t, reg, "chronos_schedule_lateness_seconds")["schedule=ticker"]; l <= 2 {
		t.Errorf("ticker late with a lateness of %vs, want over its 2s", l)
	}

	_ = rdb.Close()
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "chronos schedule health") {
		t.Errorf("Gather with Redis gone: err = %v, want the health read error", err)
	}
}

func equalMaps(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// The PromQL and alert rules of docs/metrics.md name only metrics this
// module exports.
func TestTheDocumentedQueriesNameExportedMetrics(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	var exported []string
	descs := make(chan *prom.Desc, 100)
	chronosprom.New(chronosprom.Options{}).Describe(descs)
	chronosprom.QueueCollector(nil).Describe(descs)
	chronosprom.HealthCollector(nil, chronosprom.HealthOptions{}).Describe(descs)
	close(descs)
	fq := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	for d := range descs {
		exported = append(exported, fq.FindStringSubmatch(d.String())[1])
	}
	blocks := regexp.MustCompile("(?s)```(?:promql|yaml)\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 5 {
		t.Fatalf("found %d promql and yaml blocks in docs/metrics.md", len(blocks))
	}
	names := regexp.MustCompile(`\bchronos_[a-z_]+`)
	var alerts int
	for _, b := range blocks {
		alerts += strings.Count(b[1], "- alert:")
		for _, n := range names.FindAllString(b[1], -1) {
			base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
			if !slices.Contains(exported, base) {
				t.Errorf("docs/metrics.md queries %s, which no collector of this module exports", n)
			}
		}
	}
	if alerts < 2 {
		t.Errorf("docs/metrics.md has %d example alert rules, want the late and failing ones at least", alerts)
	}
}
