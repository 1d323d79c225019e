package prometheus

import (
	"context"
	"fmt"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	chronos "github.com/chronos-go/chronos/runtime"
)

// scrapeTimeout bounds the Redis reads of one scrape, below Prometheus's
// default scrape timeout of 10 s, so a slow Redis fails the scrape's queue
// metrics instead of the whole scrape.
const scrapeTimeout = 5 * time.Second

// queueCollector reads the state of queues from Redis at scrape time.
type queueCollector struct {
	insp   *chronos.Inspector
	queues []string

	ready, running, delayed, paused, oldest, dead *prom.Desc
}

// QueueCollector returns a collector that reads, at each scrape, the
// depth of the named queues (default: "default") and the namespace's dead
// letters through insp. It costs two round trips per queue and one for the
// dead letters per scrape; it records nothing between scrapes, so any one
// process (or a sidecar) may export it: exporting it from every replica
// only repeats the same numbers. A failed read is reported as a scrape
// error for that metric.
func QueueCollector(insp *chronos.Inspector, queues ...string) prom.Collector {
	if len(queues) == 0 {
		queues = []string{chronos.DefaultQueue}
	}
	q := []string{"queue"}
	return &queueCollector{
		insp:    insp,
		queues:  queues,
		ready:   prom.NewDesc("chronos_queue_ready", "Tasks waiting for a worker.", q, nil),
		running: prom.NewDesc("chronos_queue_running", "Tasks taken by a worker and not finished, including those whose worker died and that await recovery.", q, nil),
		delayed: prom.NewDesc("chronos_queue_delayed", "Tasks waiting for their time: delayed enqueues and retries.", q, nil),
		paused:  prom.NewDesc("chronos_queue_paused", "1 while the queue is paused, else 0.", q, nil),
		oldest:  prom.NewDesc("chronos_queue_oldest_ready_age_seconds", "Age of the oldest task waiting for a worker, since it became ready (0 if none).", q, nil),
		dead:    prom.NewDesc("chronos_dead_tasks", "Tasks in the dead letters of the namespace.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *queueCollector) Describe(ch chan<- *prom.Desc) {
	for _, d := range []*prom.Desc{c.ready, c.running, c.delayed, c.paused, c.oldest, c.dead} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *queueCollector) Collect(ch chan<- prom.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	for _, q := range c.queues {
		info, err := c.insp.QueueInfo(ctx, q)
		if err != nil {
			err = fmt.Errorf("chronos queue %q: %w", q, err)
			for _, d := range []*prom.Desc{c.ready, c.running, c.delayed, c.paused} {
				ch <- prom.NewInvalidMetric(d, err)
			}
		} else {
			ch <- prom.MustNewConstMetric(c.ready, prom.GaugeValue, float64(info.Ready), q)
			ch <- prom.MustNewConstMetric(c.running, prom.GaugeValue, float64(info.Running), q)
			ch <- prom.MustNewConstMetric(c.delayed, prom.GaugeValue, float64(info.Delayed), q)
			ch <- prom.MustNewConstMetric(c.paused, prom.GaugeValue, bool01(info.Paused), q)
		}
		at, err := c.insp.OldestReady(ctx, q)
		switch {
		case err != nil:
			ch <- prom.NewInvalidMetric(c.oldest, fmt.Errorf("chronos queue %q: %w", q, err))
		case at.IsZero():
			ch <- prom.MustNewConstMetric(c.oldest, prom.GaugeValue, 0, q)
		default:
			// Redis stamped the entry; a host clock behind it must not
			// report a negative age.
			ch <- prom.MustNewConstMetric(c.oldest, prom.GaugeValue, max(time.Since(at).Seconds(), 0), q)
		}
	}
	n, err := c.insp.CountDead(ctx)
	if err != nil {
		ch <- prom.NewInvalidMetric(c.dead, fmt.Errorf("chronos dead letters: %w", err))
		return
	}
	ch <- prom.MustNewConstMetric(c.dead, prom.GaugeValue, float64(n))
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
