package errtext

import (
	"errors"
	"fmt"
	"testing"
)

func TestCleanKeepsTheCauseAndItsContextWithoutTheCallChain(t *testing.T) {
	for in, want := range map[string]string{
		// Bare operation names go with their package prefixes.
		"chronos: list schedules: schedstore: list: boom": "boom",
		"console: schedule health: chronos: schedule health: schedstore: list: dial tcp 10.0.0.5:6379: connect: connection refused": "dial tcp 10.0.0.5:6379: connect: connection refused",
		"keyspace: read the layout: LOADING Redis is loading the dataset in memory":                                                 "LOADING Redis is loading the dataset in memory",
		// An operation that names what it acted on is context.
		`chronos: backfill "x": chronos: not supported for an isolated schedule`: `backfill "x": not supported for an isolated schedule`,
		"rdb: dead letter 1: rdb: not found":                                     "dead letter 1: not found",
		"schedstore: heartbeat sched-a: NOPERM this user has no permissions":     "heartbeat sched-a: NOPERM this user has no permissions",
		// The same context twice is said once.
		`chronos: pause "x": schedstore: pause "x": nope`:         `pause "x": nope`,
		`chronos: schedule "x": schedstore: get "x": i/o timeout`: `schedule "x": i/o timeout`,
		`chronos: schedule "x": chronos: schedule not found`:      `schedule "x": schedule not found`,
		`chronos: retire "a": chronos: schedule is still declared by a live instance: schedstore: retire "a": schedstore: schedule is declared by a live instance: n-1`: `retire "a": schedule is still declared by a live instance: schedule is declared by a live instance: n-1`,
		// Not chronos's: left as it is.
		"chronos web: listen tcp: address in use": "chronos web: listen tcp: address in use",
		"redis: connection pool timeout":          "redis: connection pool timeout",
		"boom":                                    "boom",
		"":                                        "",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

func TestCleanReadsWrappedErrors(t *testing.T) {
	err := fmt.Errorf("chronos: list schedules: %w", fmt.Errorf("schedstore: list: %w", errors.New("READONLY You can't write against a read only replica.")))
	if got := Clean(err.Error()); got != "READONLY You can't write against a read only replica." {
		t.Fatalf("Clean = %q", got)
	}
}

// The migration's errors lose their call chain like the others'.
func TestCleanDropsTheMigrationsChain(t *testing.T) {
	in := `chronos: migrate namespace "legacy": migrate: queue "default": tasks kept arriving in layout 1 through 100 passes: stop the processes that enqueue them and run it again`
	want := `migrate namespace "legacy": queue "default": tasks kept arriving in layout 1 through 100 passes: stop the processes that enqueue them and run it again`
	if got := Clean(in); got != want {
		t.Errorf("Clean(%q) =\n%q, want\n%q", in, got, want)
	}
}
