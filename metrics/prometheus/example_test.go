package prometheus_test

import (
	"context"
	"log"
	"net/http"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	chronosprom "github.com/chronos-go/chronos/metrics/prometheus"
	chronos "github.com/chronos-go/chronos/runtime"
)

// Example wires one Metrics into a Server and a Scheduler, adds the queue
// and schedule health collectors, and serves everything on /metrics.
func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	reg := prom.NewRegistry()

	m := chronosprom.New(chronosprom.Options{}) // one per process
	m.MustRegister(reg)
	// Queue depths are read from Redis at scrape time; the numbers are the
	// same from every replica, so one exporter of them is enough.
	insp := chronos.NewInspector(rdb)
	reg.MustRegister(chronosprom.QueueCollector(insp, "default", "critical"))
	// So is schedule health: late and failing schedules, per schedule.
	reg.MustRegister(chronosprom.HealthCollector(insp, chronosprom.HealthOptions{}))

	srv := chronos.NewServer(rdb, chronos.ServerConfig{
		Queues:  map[string]int{"critical": 6, "default": 1},
		Metrics: m,
	})
	sched := chronos.NewScheduler(rdb, chronos.SchedulerConfig{Metrics: m})
	// ... register handlers on a Mux and schedules on sched ...
	if err := sched.Start(ctx); err != nil {
		log.Fatal(err)
	}
	if err := srv.Start(ctx, chronos.NewMux()); err != nil {
		log.Fatal(err)
	}

	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	log.Fatal(http.ListenAndServe(":9090", nil))
}
