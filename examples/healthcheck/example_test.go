package healthcheck_test

import (
	"context"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/examples/healthcheck"
	chronos "github.com/chronos-go/chronos/runtime"
)

// Every replica runs the same wiring: the generated RegisterChronosJobs
// puts the handlers on the mux and the schedules on the scheduler, and
// SchedulerConfig.Server names the server that runs this instance's
// isolated schedules (the local check) in process.
func ExampleRegisterChronosJobs() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})

	srv := chronos.NewServer(rdb, chronos.ServerConfig{})
	sched := chronos.NewScheduler(rdb, chronos.SchedulerConfig{Server: srv})
	mux := chronos.NewMux()
	monitor := &healthcheck.Monitor{
		Instance: "web-1",
		Ping:     func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
	}
	if err := healthcheck.RegisterChronosJobs(sched, mux, monitor); err != nil {
		log.Fatal(err)
	}
	if err := srv.Start(ctx, mux); err != nil {
		log.Fatal(err)
	}
	if err := sched.Start(ctx); err != nil {
		log.Fatal(err)
	}
	// On SIGTERM: the scheduler first (a leader hands over at once), then
	// the server (running checks finish).
	defer srv.Shutdown(ctx)
	defer sched.Shutdown(ctx)
}
