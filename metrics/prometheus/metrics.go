// Package prometheus exports what chronos Servers and Schedulers measure as
// Prometheus metrics, and the state of queues and the health of schedules
// at scrape time.
//
// It is a module of its own, so that the chronos runtime does not depend
// on the Prometheus client. Create one Metrics per process, pass it as
// ServerConfig.Metrics and SchedulerConfig.Metrics, and register it:
//
//	m := prometheus.New(prometheus.Options{})
//	m.MustRegister(reg)
//	srv := chronos.NewServer(rdb, chronos.ServerConfig{Metrics: m})
//	sched := chronos.NewScheduler(rdb, chronos.SchedulerConfig{Metrics: m})
//	reg.MustRegister(prometheus.QueueCollector(chronos.NewInspector(rdb), "default"))
//	reg.MustRegister(prometheus.HealthCollector(chronos.NewInspector(rdb), prometheus.HealthOptions{}))
//
// The metrics, their labels and what their cardinality depends on are
// listed in docs/metrics.md of the chronos repository.
package prometheus

import (
	"strings"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	chronos "github.com/chronos-go/chronos/runtime"
)

// Options configures Metrics. The zero value is the recommended setup.
type Options struct {
	// ScheduleLabel adds a schedule label to the firing metrics
	// (chronos_trigger_lag_seconds, chronos_trigger_results_total,
	// chronos_misfires_total). Off by default: every schedule then makes
	// its own series, about 15 per schedule and source for the lag histogram,
	// which a service with many thousands of schedules cannot afford.
	ScheduleLabel bool

	// InstanceQueues keeps the per-instance names of isolated queues
	// ("isolated:<instance ID>") in the queue label, which versions before
	// in-process isolated schedules reported; by default they are reported
	// as "isolated".
	//
	// Deprecated: isolated tasks now run in process and report the one
	// queue chronos.LocalQueue; only servers of older versions send the
	// per-instance names.
	InstanceQueues bool

	// TaskBuckets are the upper bounds, in seconds, of the task duration
	// and wait histograms (default 5 ms to about 22 min, ×4 per bucket).
	TaskBuckets []float64

	// LagBuckets are the upper bounds, in seconds, of the trigger lag
	// histogram (default 1 ms to about 24 s, ×2.5 per bucket).
	LagBuckets []float64
}

// Default histogram buckets.
var (
	DefaultTaskBuckets = prom.ExponentialBuckets(0.005, 4, 10)
	DefaultLagBuckets  = prom.ExponentialBuckets(0.001, 2.5, 12)
)

// Metrics records what chronos reports through chronos.Metrics into
// Prometheus collectors. It is a prometheus.Collector: register it once.
// One Metrics may serve several Servers and one Scheduler of a process;
// the chronos_leader gauge assumes a single Scheduler.
type Metrics struct {
	opts Options

	tasks        *prom.CounterVec
	taskDuration *prom.HistogramVec
	taskWait     *prom.HistogramVec
	triggerLag   *prom.HistogramVec
	triggers     *prom.CounterVec
	misfires     *prom.CounterVec
	dropped      prom.Counter
	leader       prom.Gauge
	terms        prom.Counter
	renewFails   prom.Counter
	lost         prom.Counter
	reseeded     prom.Counter
}

var (
	_ chronos.Metrics = (*Metrics)(nil)
	_ prom.Collector  = (*Metrics)(nil)
)

// New returns Metrics with its collectors created, not yet registered.
func New(opts Options) *Metrics {
	if len(opts.TaskBuckets) == 0 {
		opts.TaskBuckets = DefaultTaskBuckets
	}
	if len(opts.LagBuckets) == 0 {
		opts.LagBuckets = DefaultLagBuckets
	}
	firing := func(labels ...string) []string {
		if opts.ScheduleLabel {
			return append([]string{"schedule"}, labels...)
		}
		return labels
	}
	return &Metrics{
		opts: opts,
		tasks: prom.NewCounterVec(prom.CounterOpts{
			Name: "chronos_tasks_total",
			Help: "Task runs whose outcome was recorded, by outcome: success, retry (failed, will run again) or dead (sent to the dead letters).",
		}, []string{"queue", "kind", "outcome"}),
		taskDuration: prom.NewHistogramVec(prom.HistogramOpts{
			Name:    "chronos_task_duration_seconds",
			Help:    "How long task handlers ran.",
			Buckets: opts.TaskBuckets,
		}, []string{"queue", "kind"}),
		taskWait: prom.NewHistogramVec(prom.HistogramOpts{
			Name:    "chronos_task_wait_seconds",
			Help:    "How long tasks were ready before a handler started: from enqueue, or from falling due, to start.",
			Buckets: opts.TaskBuckets,
		}, []string{"queue"}),
		triggerLag: prom.NewHistogramVec(prom.HistogramOpts{
			Name:    "chronos_trigger_lag_seconds",
			Help:    "From when a firing should have run to when its task was enqueued, per enqueued job.",
			Buckets: opts.LagBuckets,
		}, firing("source")),
		triggers: prom.NewCounterVec(prom.CounterOpts{
			Name: "chronos_trigger_results_total",
			Help: "Firing results per job: enqueued, buffered, skipped, cleared; or per firing that enqueued nothing: duplicate, stale, gone, fenced, error.",
		}, firing("source", "result")),
		misfires: prom.NewCounterVec(prom.CounterOpts{
			Name: "chronos_misfires_total",
			Help: "Catch-up evaluations that applied a schedule's misfire policy or dropped fires beyond MaxCatchup.",
		}, firing("policy")),
		dropped: prom.NewCounter(prom.CounterOpts{
			Name: "chronos_catchup_dropped_total",
			Help: "Missed fires dropped by the MaxCatchup cap of a catch-up.",
		}),
		leader: prom.NewGauge(prom.GaugeOpts{
			Name: "chronos_leader",
			Help: "1 while this instance leads a partition of the scheduler (the leader, with a single partition), else 0.",
		}),
		terms: prom.NewCounter(prom.CounterOpts{
			Name: "chronos_leader_changes_total",
			Help: "Times this instance started leading while it led no partition (with a single partition: terms it won).",
		}),
		renewFails: prom.NewCounter(prom.CounterOpts{
			Name: "chronos_lease_renew_failures_total",
			Help: "Leader lease renewals that failed, each ending this instance's term of a partition.",
		}),
		lost: prom.NewCounter(prom.CounterOpts{
			Name: "chronos_registry_lost_total",
			Help: "Times this instance found the registry lost (Redis lost its data) and put its schedules back.",
		}),
		reseeded: prom.NewCounter(prom.CounterOpts{
			Name: "chronos_registry_reseeded_schedules_total",
			Help: "Schedules this instance put back, with their last state, after Redis lost its data.",
		}),
	}
}

func (m *Metrics) collectors() []prom.Collector {
	return []prom.Collector{m.tasks, m.taskDuration, m.taskWait, m.triggerLag, m.triggers, m.misfires,
		m.dropped, m.leader, m.terms, m.renewFails, m.lost, m.reseeded}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prom.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prom.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
}

// Register registers m with reg.
func (m *Metrics) Register(reg prom.Registerer) error { return reg.Register(m) }

// MustRegister registers m with reg and panics if that fails.
func (m *Metrics) MustRegister(reg prom.Registerer) { reg.MustRegister(m) }

// queue is the queue label value of q.
func (m *Metrics) queue(q string) string {
	if !m.opts.InstanceQueues && strings.HasPrefix(q, "isolated:") {
		return "isolated"
	}
	return q
}

// TaskStarted implements chronos.Metrics.
func (m *Metrics) TaskStarted(queue, kind string, wait time.Duration) {
	m.taskWait.WithLabelValues(m.queue(queue)).Observe(wait.Seconds())
}

// TaskFinished implements chronos.Metrics.
func (m *Metrics) TaskFinished(queue, kind, outcome string, took time.Duration) {
	q := m.queue(queue)
	m.tasks.WithLabelValues(q, kind, outcome).Inc()
	m.taskDuration.WithLabelValues(q, kind).Observe(took.Seconds())
}

// TriggerFired implements chronos.Metrics. Only enqueued jobs observe the
// lag: the other results did not enqueue anything to measure.
func (m *Metrics) TriggerFired(f chronos.FiredTrigger) {
	if m.opts.ScheduleLabel {
		m.triggers.WithLabelValues(f.Schedule, f.Source, f.Result).Inc()
		if f.Result == chronos.TriggerEnqueued {
			m.triggerLag.WithLabelValues(f.Schedule, f.Source).Observe(f.Lag.Seconds())
		}
		return
	}
	m.triggers.WithLabelValues(f.Source, f.Result).Inc()
	if f.Result == chronos.TriggerEnqueued {
		m.triggerLag.WithLabelValues(f.Source).Observe(f.Lag.Seconds())
	}
}

// Misfired implements chronos.Metrics.
func (m *Metrics) Misfired(schedule, policy string, dropped int) {
	if m.opts.ScheduleLabel {
		m.misfires.WithLabelValues(schedule, policy).Inc()
	} else {
		m.misfires.WithLabelValues(policy).Inc()
	}
	m.dropped.Add(float64(dropped))
}

// LeaderChanged implements chronos.Metrics.
func (m *Metrics) LeaderChanged(leading bool) {
	if leading {
		m.leader.Set(1)
		m.terms.Inc()
	} else {
		m.leader.Set(0)
	}
}

// LeaseRenewFailed implements chronos.Metrics.
func (m *Metrics) LeaseRenewFailed() { m.renewFails.Inc() }

// RegistryLost implements chronos.Metrics.
func (m *Metrics) RegistryLost(reseeded int) {
	m.lost.Inc()
	m.reseeded.Add(float64(reseeded))
}
