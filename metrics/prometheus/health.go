package prometheus

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	prom "github.com/prometheus/client_golang/prometheus"

	chronos "github.com/chronos-go/chronos/runtime"
)

// DefaultMaxHealthSchedules is the default of HealthOptions.MaxSchedules.
const DefaultMaxHealthSchedules = 1000

// HealthOptions configures HealthCollector. The zero value exports every
// schedule of the namespace, with series of their own for up to
// DefaultMaxHealthSchedules of them.
type HealthOptions struct {
	// Schedules limits the export to these schedule IDs; default every
	// schedule of the namespace.
	Schedules []string

	// MaxSchedules bounds the schedules that get series of their own
	// (default DefaultMaxHealthSchedules; negative: none, only the counts
	// by state). Late and failing schedules come first, then the others
	// by ID; chronos_schedule_health_omitted says how many were left out.
	// Each exported schedule costs up to five series.
	MaxSchedules int
}

// healthCollector reads schedule health from Redis at scrape time.
type healthCollector struct {
	insp *chronos.Inspector
	opts HealthOptions

	count, omitted, state, lateness, lastSuccess, lastOutcome, failures *prom.Desc
}

// healthStates are the chronos_schedules label values, always all of them.
var healthStates = []chronos.HealthState{
	chronos.HealthOK, chronos.HealthLate, chronos.HealthFailing, chronos.HealthPaused, chronos.HealthRetired,
}

// HealthCollector returns a collector that reads, at each scrape, the
// health of the namespace's schedules (chronos.Inspector.ScheduleHealth:
// one call, a fixed number of round trips whatever the number of
// schedules) and exports the number of schedules in each state and, per
// schedule, its state, lateness, last success, last run outcome and
// failures in a row (see docs/metrics.md and docs/health.md). Like
// QueueCollector it records nothing between scrapes, so export it from
// one process or a sidecar. A failed read fails the scrape's health
// metrics with the error.
func HealthCollector(insp *chronos.Inspector, opts HealthOptions) prom.Collector {
	if opts.MaxSchedules == 0 {
		opts.MaxSchedules = DefaultMaxHealthSchedules
	}
	s := []string{"schedule"}
	return &healthCollector{
		insp: insp,
		opts: opts,
		count: prom.NewDesc("chronos_schedules",
			"Schedules in each health state: ok, late, failing, paused, retired.", []string{"state"}, nil),
		omitted: prom.NewDesc("chronos_schedule_health_omitted",
			"Schedules left out of the per-schedule health series by HealthOptions.MaxSchedules.", nil, nil),
		state: prom.NewDesc("chronos_schedule_health",
			"1 with the schedule's health state as the state label: ok, late, failing, paused or retired.", []string{"schedule", "state"}, nil),
		lateness: prom.NewDesc("chronos_schedule_lateness_seconds",
			"How long ago the fire time the schedule waits for passed with nothing enqueued; 0 when not due, paused, retired or complete.", s, nil),
		lastSuccess: prom.NewDesc("chronos_schedule_last_success_timestamp_seconds",
			"When the schedule's newest successful run ended, in Unix seconds; absent when the run records read hold none.", s, nil),
		lastOutcome: prom.NewDesc("chronos_schedule_last_run_outcome",
			"1 with the outcome of the schedule's newest finished run as the outcome label: success, retry or dead; absent when none is recorded.", []string{"schedule", "outcome"}, nil),
		failures: prom.NewDesc("chronos_schedule_consecutive_failures",
			"Failed runs in a row, newest first, of the schedule's task kind with the longest such streak.", s, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *healthCollector) Describe(ch chan<- *prom.Desc) {
	for _, d := range []*prom.Desc{c.count, c.omitted, c.state, c.lateness, c.lastSuccess, c.lastOutcome, c.failures} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *healthCollector) Collect(ch chan<- prom.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	hs, err := c.insp.ScheduleHealth(ctx, c.opts.Schedules...)
	if err != nil {
		ch <- prom.NewInvalidMetric(c.count, fmt.Errorf("chronos schedule health: %w", err))
		return
	}
	counts := map[chronos.HealthState]int{}
	for _, h := range hs {
		counts[h.State]++
	}
	for _, st := range healthStates {
		ch <- prom.MustNewConstMetric(c.count, prom.GaugeValue, float64(counts[st]), string(st))
	}

	ids := slices.SortedFunc(maps.Keys(hs), func(a, b string) int {
		if pa, pb := hs[a].State.Problem(), hs[b].State.Problem(); pa != pb {
			if pa {
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	})
	keep := min(max(c.opts.MaxSchedules, 0), len(ids))
	ch <- prom.MustNewConstMetric(c.omitted, prom.GaugeValue, float64(len(ids)-keep))
	for _, id := range ids[:keep] {
		h := hs[id]
		ch <- prom.MustNewConstMetric(c.state, prom.GaugeValue, 1, id, string(h.State))
		ch <- prom.MustNewConstMetric(c.lateness, prom.GaugeValue, h.Lateness.Seconds(), id)
		ch <- prom.MustNewConstMetric(c.failures, prom.GaugeValue, float64(h.Failures), id)
		if !h.LastSuccess.IsZero() {
			ch <- prom.MustNewConstMetric(c.lastSuccess, prom.GaugeValue, float64(h.LastSuccess.UnixMilli())/1000, id)
		}
		if h.LastOutcome != "" {
			ch <- prom.MustNewConstMetric(c.lastOutcome, prom.GaugeValue, 1, id, h.LastOutcome)
		}
	}
}
