package chronos_test

import (
	"context"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// A namespace exists once anything is stored under it: a registered
// schedule, a dead letter, a paused queue or any task of a queue.
func TestNamespaceExistsOnceAnythingIsStoredUnderIt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	exists := func(ns string) bool {
		t.Helper()
		ok, err := chronos.NewInspector(e.rdb, chronos.WithNamespace(ns)).NamespaceExists(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if exists("sched") || exists("queue") || exists("paused") {
		t.Fatal("a namespace exists before anything is stored under it")
	}
	s := chronos.NewScheduler(e.rdb, chronos.SchedulerConfig{Namespace: "sched", Logger: quietLogger, LeaderTTL: time.Second})
	if err := chronos.RegisterInterval(s, time.Hour, Greet{}, chronos.WithScheduleID("hourly")); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(ctx) })
	eventually(t, "the registered namespace", func() bool { return exists("sched") })
	if _, err := chronos.NewClient(e.rdb, chronos.WithNamespace("queue")).Enqueue(ctx, Greet{}, chronos.WithProcessIn(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := chronos.NewInspector(e.rdb, chronos.WithNamespace("paused")).PauseQueue(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	if !exists("queue") || !exists("paused") || exists("other") {
		t.Fatalf("queue %v, paused %v, other %v; want true, true, false", exists("queue"), exists("paused"), exists("other"))
	}
}
