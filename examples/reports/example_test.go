package reports_test

import (
	"context"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/examples/reports"
	chronos "github.com/chronos-go/chronos/runtime"
)

// The month-end export group enqueues on the "batch" queue, so the server
// serves it beside the default queue.
func ExampleRegisterChronosJobs() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})

	sched := chronos.NewScheduler(rdb, chronos.SchedulerConfig{})
	srv := chronos.NewServer(rdb, chronos.ServerConfig{
		Queues: map[string]int{chronos.DefaultQueue: 3, "batch": 1},
	})
	mux := chronos.NewMux()
	jobs := &reports.Reports{Source: reports.SampleSource{}, Dir: "/var/lib/reports"}
	if err := reports.RegisterChronosJobs(sched, mux, jobs); err != nil {
		log.Fatal(err)
	}
	if err := srv.Start(ctx, mux); err != nil {
		log.Fatal(err)
	}
	if err := sched.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown(ctx)
	defer sched.Shutdown(ctx)
}
