package chronos_test

import (
	"context"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	chronos "github.com/chronos-go/chronos/runtime"
)

type HealthCheck struct{}

func (HealthCheck) Kind() string { return "health_check" }

type DailyReport struct {
	Format string `json:"format"`
}

func (DailyReport) Kind() string { return "daily_report" }

type Export struct {
	Table string `json:"table"`
}

func (Export) Kind() string { return "export" }

// Every replica of a service runs the same code: one of them is elected
// and fires each trigger exactly once; the others stand by and take over
// within the lease TTL if it dies, or at once if it shuts down.
func ExampleNewScheduler() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})

	sched := chronos.NewScheduler(rdb, chronos.SchedulerConfig{Version: "v1.4.2"})
	if err := chronos.RegisterInterval(sched, 30*time.Second, HealthCheck{}); err != nil {
		log.Fatal(err)
	}
	err := chronos.RegisterCron(sched, "0 0 * * *", DailyReport{Format: "pdf"},
		chronos.WithScheduleID("reports.daily"),
		chronos.WithTimeZone("Europe/Paris"),
		chronos.WithMisfire("fireOnceNow"),
		chronos.WithOverlap(chronos.OverlapSkip),
		chronos.WithQueue("reports"))
	if err != nil {
		log.Fatal(err)
	}
	if err := sched.Start(ctx); err != nil { // on every instance
		log.Fatal(err)
	}
	defer sched.Shutdown(ctx) // resigns leadership: the next leader continues at once
}

// A group fires several jobs from one trigger; each can be paused alone.
func ExampleNewGroup() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	sched := chronos.NewScheduler(rdb, chronos.SchedulerConfig{})

	g := chronos.NewGroup(sched, "nightly", chronos.CronTrigger("0 0 2 * * ?"),
		chronos.WithTimeZone("America/New_York"), chronos.WithMisfire("doNothing"))
	for _, table := range []string{"users", "orders"} {
		if err := chronos.AddJob(g, "export-"+table, Export{Table: table}, chronos.WithQueue("batch")); err != nil {
			log.Fatal(err)
		}
	}
	if err := sched.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// Operators pause, trigger and inspect schedules from any process; the
// requests are stored in Redis and carried out by whichever instance leads.
func ExampleInspector_PauseSchedule() {
	ctx := context.Background()
	insp := chronos.NewInspector(redis.NewClient(&redis.Options{Addr: "localhost:6379"}))

	err := insp.PauseSchedule(ctx, "nightly", chronos.PauseOptions{
		Job: "export-orders", Note: "orders DB migration", Who: "alice", Until: time.Now().Add(6 * time.Hour),
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := insp.TriggerSchedule(ctx, "reports.daily", "alice"); err != nil {
		log.Fatal(err)
	}
	list, err := insp.Schedules(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range list {
		log.Printf("%s %s %q next %v last %v (%s)", s.ID, s.Trigger, s.Spec, s.NextFire, s.LastFired, s.LastOutcome)
	}
}
