package prometheus_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	chronosprom "github.com/chronos-go/chronos/metrics/prometheus"
	chronos "github.com/chronos-go/chronos/runtime"
)

// registry returns a fresh registry with m registered.
func registry(t *testing.T, cs ...prom.Collector) *prom.Registry {
	t.Helper()
	reg := prom.NewPedanticRegistry()
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			t.Fatalf("Register: %v", err)
		}
	}
	return reg
}

// family returns the gathered family called name, failing if it is absent.
func family(t *testing.T, reg prom.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	t.Fatalf("no metric family %s", name)
	return nil
}

// labels renders the label pairs of m as "a=x,b=y".
func labels(m *dto.Metric) string {
	var b strings.Builder
	for i, l := range m.GetLabel() {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%s", l.GetName(), l.GetValue())
	}
	return b.String()
}

// histogramCounts maps the label sets of a histogram family to their
// sample counts.
func histogramCounts(t *testing.T, reg prom.Gatherer, name string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, m := range family(t, reg, name).GetMetric() {
		out[labels(m)] = m.GetHistogram().GetSampleCount()
	}
	return out
}

func TestMetricsCountEachReportUnderItsFamilyAndLabels(t *testing.T) {
	m := chronosprom.New(chronosprom.Options{})
	reg := registry(t, m)

	m.TaskStarted("default", "email", 20*time.Millisecond)
	m.TaskStarted("isolated:host-1-ab12", "cleanup", time.Millisecond)
	m.TaskFinished("default", "email", chronos.OutcomeSuccess, 30*time.Millisecond)
	m.TaskFinished("default", "email", chronos.OutcomeRetry, time.Second)
	m.TaskFinished("isolated:host-1-ab12", "cleanup", chronos.OutcomeDead, 0)
	m.TriggerFired(chronos.FiredTrigger{Schedule: "nightly", Source: "trigger", Result: chronos.TriggerEnqueued, Lag: 3 * time.Millisecond})
	m.TriggerFired(chronos.FiredTrigger{Schedule: "nightly", Source: "trigger", Result: chronos.TriggerDuplicate, Lag: time.Millisecond})
	m.TriggerFired(chronos.FiredTrigger{Schedule: "hourly", Source: "catchup", Result: chronos.TriggerEnqueued, Lag: 2 * time.Millisecond})
	m.Misfired("hourly", "fireOnceNow", 0)
	m.Misfired("minutely", "ignoreMisfires", 7)
	m.LeaderChanged(true)
	m.LeaseRenewFailed()
	m.LeaderChanged(false)
	m.LeaderChanged(true)

	const want = `
# HELP chronos_tasks_total Task runs whose outcome was recorded, by outcome: success, retry (failed, will run again) or dead (sent to the dead letters).
# TYPE chronos_tasks_total counter
chronos_tasks_total{kind="cleanup",outcome="dead",queue="isolated"} 1
chronos_tasks_total{kind="email",outcome="retry",queue="default"} 1
chronos_tasks_total{kind="email",outcome="success",queue="default"} 1
# HELP chronos_trigger_results_total Firing results per job: enqueued, buffered, skipped, cleared; or per firing that enqueued nothing: duplicate, stale, gone, fenced, error.
# TYPE chronos_trigger_results_total counter
chronos_trigger_results_total{result="duplicate",source="trigger"} 1
chronos_trigger_results_total{result="enqueued",source="catchup"} 1
chronos_trigger_results_total{result="enqueued",source="trigger"} 1
# HELP chronos_misfires_total Catch-up evaluations that applied a schedule's misfire policy or dropped fires beyond MaxCatchup.
# TYPE chronos_misfires_total counter
chronos_misfires_total{policy="fireOnceNow"} 1
chronos_misfires_total{policy="ignoreMisfires"} 1
# HELP chronos_catchup_dropped_total Missed fires dropped by the MaxCatchup cap of a catch-up.
# TYPE chronos_catchup_dropped_total counter
chronos_catchup_dropped_total 7
# HELP chronos_leader 1 while this instance leads a partition of the scheduler (the leader, with a single partition), else 0.
# TYPE chronos_leader gauge
chronos_leader 1
# HELP chronos_leader_changes_total Times this instance started leading while it led no partition (with a single partition: terms it won).
# TYPE chronos_leader_changes_total counter
chronos_leader_changes_total 2
# HELP chronos_lease_renew_failures_total Leader lease renewals that failed, each ending this instance's term of a partition.
# TYPE chronos_lease_renew_failures_total counter
chronos_lease_renew_failures_total 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"chronos_tasks_total", "chronos_trigger_results_total", "chronos_misfires_total", "chronos_catchup_dropped_total",
		"chronos_leader", "chronos_leader_changes_total", "chronos_lease_renew_failures_total"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]map[string]uint64{
		"chronos_task_duration_seconds": {"kind=cleanup,queue=isolated": 1, "kind=email,queue=default": 2},
		"chronos_task_wait_seconds":     {"queue=default": 1, "queue=isolated": 1},
		// Only enqueued jobs have a lag to observe.
		"chronos_trigger_lag_seconds": {"source=catchup": 1, "source=trigger": 1},
	} {
		got := histogramCounts(t, reg, name)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s samples = %v, want %v", name, got, want)
		}
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

func TestScheduleAndInstanceQueueLabelsAreOptIn(t *testing.T) {
	m := chronosprom.New(chronosprom.Options{ScheduleLabel: true, InstanceQueues: true})
	reg := registry(t, m)
	m.TriggerFired(chronos.FiredTrigger{Schedule: "nightly", Source: "trigger", Result: chronos.TriggerEnqueued, Lag: time.Millisecond})
	m.Misfired("nightly", "doNothing", 0)
	m.TaskFinished("isolated:host-1-ab12", "cleanup", chronos.OutcomeSuccess, time.Millisecond)

	for name, want := range map[string]string{
		"chronos_trigger_results_total": "result=enqueued,schedule=nightly,source=trigger",
		"chronos_trigger_lag_seconds":   "schedule=nightly,source=trigger",
		"chronos_misfires_total":        "policy=doNothing,schedule=nightly",
		"chronos_tasks_total":           "kind=cleanup,outcome=success,queue=isolated:host-1-ab12",
	} {
		ms := family(t, reg, name).GetMetric()
		if len(ms) != 1 || labels(ms[0]) != want {
			t.Errorf("%s: got %d series, first %q; want one with %s", name, len(ms), labels(ms[0]), want)
		}
	}
}

type sendEmail struct{}

func (sendEmail) Kind() string { return "send_email" }

type broken struct{}

func (broken) Kind() string { return "broken" }

type tick struct{}

func (tick) Kind() string { return "tick" }

func TestServerAndSchedulerFeedTheExporter(t *testing.T) {
	rdb := startRedis(t)
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := chronosprom.New(chronosprom.Options{})
	reg := registry(t, m)

	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(context.Context, *chronos.Task[sendEmail]) error { return nil })
	chronos.AddHandler(mux, func(context.Context, *chronos.Task[broken]) error { return chronos.ErrSkipRetry })
	srv := chronos.NewServer(rdb, chronos.ServerConfig{Logger: quiet, Metrics: m})
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Shutdown(ctx) }()
	sched := chronos.NewScheduler(rdb, chronos.SchedulerConfig{Logger: quiet, Metrics: m, LeaderTTL: time.Second})
	if err := chronos.RegisterInterval(sched, time.Second, tick{}, chronos.WithScheduleID("every-second"),
		chronos.WithQueue("ticks")); err != nil {
		t.Fatal(err)
	}
	if err := sched.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sched.Shutdown(ctx) }()
	client := chronos.NewClient(rdb)
	for _, a := range []chronos.TaskArgs{sendEmail{}, broken{}} {
		if _, err := client.Enqueue(ctx, a); err != nil {
			t.Fatal(err)
		}
	}

	waitFor(t, "a success, a dead task and a firing", func() bool {
		return counter(t, reg, "chronos_tasks_total", "kind=send_email,outcome=success,queue=default") == 1 &&
			counter(t, reg, "chronos_tasks_total", "kind=broken,outcome=dead,queue=default") == 1 &&
			counter(t, reg, "chronos_trigger_results_total", "result=enqueued,source=trigger") >= 1
	})
	for _, name := range []string{"chronos_tasks_total", "chronos_task_duration_seconds", "chronos_task_wait_seconds",
		"chronos_trigger_lag_seconds", "chronos_trigger_results_total", "chronos_leader", "chronos_leader_changes_total"} {
		family(t, reg, name)
	}
	var outcomes []string
	for _, s := range family(t, reg, "chronos_tasks_total").GetMetric() {
		outcomes = append(outcomes, labels(s))
	}
	want := []string{"kind=broken,outcome=dead,queue=default", "kind=send_email,outcome=success,queue=default"}
	if fmt.Sprint(outcomes) != fmt.Sprint(want) {
		t.Errorf("task series %v, want %v", outcomes, want)
	}
	for _, s := range family(t, reg, "chronos_trigger_results_total").GetMetric() {
		// A firing late by more than a slot (a loaded machine) is a catch-up.
		if l := labels(s); l != "result=enqueued,source=trigger" && l != "result=enqueued,source=catchup" {
			t.Errorf("unexpected trigger result series %s", l)
		}
	}
	if v := family(t, reg, "chronos_leader").GetMetric()[0].GetGauge().GetValue(); v != 1 {
		t.Errorf("chronos_leader = %v, want 1", v)
	}
}

// counter returns the value of the counter series of family name whose
// labels render as want ("a=x,b=y" in label name order), or 0.
func counter(t *testing.T, reg prom.Gatherer, name, want string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if labels(s) == want {
				return s.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestQueueCollectorReadsTheQueuesAtScrapeTime(t *testing.T) {
	rdb := startRedis(t)
	ctx := context.Background()
	client := chronos.NewClient(rdb)
	for range 2 {
		if _, err := client.Enqueue(ctx, sendEmail{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.Enqueue(ctx, sendEmail{}, chronos.WithProcessIn(time.Hour)); err != nil {
		t.Fatal(err)
	}
	insp := chronos.NewInspector(rdb)
	if err := insp.PauseQueue(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	reg := registry(t, chronosprom.QueueCollector(insp, "default", "empty"))

	const want = `
# HELP chronos_queue_ready Tasks waiting for a worker.
# TYPE chronos_queue_ready gauge
chronos_queue_ready{queue="default"} 2
chronos_queue_ready{queue="empty"} 0
# HELP chronos_queue_running Tasks taken by a worker and not finished, including those whose worker died and that await recovery.
# TYPE chronos_queue_running gauge
chronos_queue_running{queue="default"} 0
chronos_queue_running{queue="empty"} 0
# HELP chronos_queue_delayed Tasks waiting for their time: delayed enqueues and retries.
# TYPE chronos_queue_delayed gauge
chronos_queue_delayed{queue="default"} 1
chronos_queue_delayed{queue="empty"} 0
# HELP chronos_queue_paused 1 while the queue is paused, else 0.
# TYPE chronos_queue_paused gauge
chronos_queue_paused{queue="default"} 1
chronos_queue_paused{queue="empty"} 0
# HELP chronos_dead_tasks Tasks in the dead letters of the namespace.
# TYPE chronos_dead_tasks gauge
chronos_dead_tasks 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "chronos_queue_ready", "chronos_queue_running",
		"chronos_queue_delayed", "chronos_queue_paused", "chronos_dead_tasks"); err != nil {
		t.Fatal(err)
	}
	ages := map[string]float64{}
	for _, s := range family(t, reg, "chronos_queue_oldest_ready_age_seconds").GetMetric() {
		ages[labels(s)] = s.GetGauge().GetValue()
	}
	if ages["queue=empty"] != 0 || ages["queue=default"] <= 0 || ages["queue=default"] > 60 {
		t.Errorf("oldest ready ages %v: want 0 for the empty queue and the seconds since the first enqueue for default", ages)
	}

	// A scrape while Redis is down fails those metrics, not the process.
	_ = rdb.Close()
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "chronos queue") {
		t.Errorf("Gather with Redis gone: err = %v, want the queue read error", err)
	}
}
