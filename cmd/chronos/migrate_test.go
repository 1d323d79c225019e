package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

// legacyNamespace marks namespace ns on c as one of a version before
// partitions, by the leader epoch counter those versions write (a key
// runtime/internal/keyspace detects layout 1 by, spelled here because this
// package cannot import the runtime's internal packages), and starts a
// scheduler with two schedules in it, which the caller shuts down.
func legacyNamespace(t *testing.T, c redis.UniversalClient, ns string) *chronos.Scheduler {
	t.Helper()
	ctx := context.Background()
	must(t, c.Set(ctx, "{"+ns+"}:leader:epoch", 41, 0).Err())
	s := chronos.NewScheduler(c, chronos.SchedulerConfig{Namespace: ns, InstanceID: "old-a", LeaderTTL: time.Second, Logger: quiet})
	must(t, chronos.RegisterInterval(s, time.Hour, report{Format: "csv"}, chronos.WithScheduleID("hourly")))
	must(t, chronos.RegisterCron(s, "0 0 2 * * ?", report{Format: "pdf"}, chronos.WithScheduleID("reports.daily")))
	must(t, s.Start(ctx))
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	cl := chronos.NewClient(c, chronos.WithNamespace(ns))
	for range 3 {
		_, err := cl.Enqueue(ctx, report{Format: "x"})
		must(t, err)
	}
	_, err := cl.Enqueue(ctx, report{Format: "later"}, chronos.WithProcessIn(time.Hour))
	must(t, err)
	return s
}

func TestMigrateMovesALayoutOneNamespaceAndSaysWhat(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	c := srv.Client()
	s := legacyNamespace(t, c, "legacy")
	run := func(args ...string) result {
		return invoke(append([]string{"-redis", srv.URL(), "-ns", "legacy", "migrate"}, args...)...)
	}

	// Refused while the scheduler runs, naming it and the way out.
	r := run()
	if r.code != exitFail || strings.Count(r.stderr, "\n") != 1 ||
		!strings.HasPrefix(r.stderr, `chronos migrate: namespace "legacy" is in use: live scheduler instances old-a (`) ||
		!strings.Contains(r.stderr, "holds the leader lease") || !strings.HasSuffix(r.stderr, "or add -force if they crashed\n") {
		t.Fatalf("migrate with a live scheduler: exit %d, stderr %q", r.code, r.stderr)
	}
	must(t, s.Shutdown(context.Background()))

	r = run("-dry-run")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("dry run: exit %d, stderr %q", r.code, r.stderr)
	}
	t.Logf("dry run:\n%s", r.stdout)
	if !strings.HasPrefix(r.stdout, `dry run: namespace "legacy" is in layout 1 (the single tag of versions before partitions); chronos migrate would move to 12 partitions:`) ||
		!hasFields(lineOf(t, r.stdout, "KIND"), "KIND TO MOVE") || !hasFields(lineOf(t, r.stdout, "schedules"), "schedules 2") ||
		!hasFields(r.stdout, "ready tasks 3") || !hasFields(r.stdout, "delayed tasks 1") || !hasFields(r.stdout, "leader epoch 42") ||
		!strings.HasSuffix(r.stdout, "queues: default\n") {
		t.Fatalf("dry run printed:\n%s", r.stdout)
	}
	var dry migrateView
	c2 := &cluster{t: t, redis: srv, rdb: c}
	c2.okJSON(&dry, "-ns", "legacy", "migrate", "-dry-run")
	if !dry.DryRun || dry.Found != "layout 1" || dry.Partitions != 12 || dry.Moved["schedules"] != 2 {
		t.Fatalf("dry run -json: %+v", dry)
	}

	r = run("-partitions", "6")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("migrate: exit %d, stderr %q", r.code, r.stderr)
	}
	t.Logf("migrate:\n%s", r.stdout)
	if !strings.HasPrefix(r.stdout, `migrated namespace "legacy" from layout 1 to 6 partitions:`) || !hasFields(r.stdout, "schedules 2") ||
		!hasFields(lineOf(t, r.stdout, "KIND"), "KIND MOVED") ||
		strings.Contains(r.stdout, "history records") || // none: kinds with nothing moved are left out
		!strings.HasSuffix(r.stdout, "the layout-1 stream and delayed set of queues default are markers now: a process still using layout 1 reads the layout again at its next enqueue\n") {
		t.Fatalf("migrate printed:\n%s", r.stdout)
	}

	// Done: running it again moves nothing; another count is refused.
	if out := c2.ok("-ns", "legacy", "migrate"); out != "namespace \"legacy\" is partitioned already (6 partitions): nothing to move\n" {
		t.Fatalf("second run printed %q", out)
	}
	r = run("-partitions", "12")
	if r.code != exitFail || !strings.Contains(r.stderr, "run it again with 6 partitions (or without a count)") {
		t.Fatalf("migrate -partitions 12 of a namespace of 6: exit %d, stderr %q", r.code, r.stderr)
	}
	// The other commands read the partitioned namespace.
	if out := c2.ok("-ns", "legacy", "schedules"); !strings.Contains(out, "hourly") || !strings.Contains(out, "reports.daily") {
		t.Fatalf("schedules after the migration:\n%s", out)
	}
	if row := lineOf(t, c2.ok("-ns", "legacy", "queues"), "default"); !hasFields(row, "default 3 0 1") {
		t.Fatalf("queues after the migration: %q", row)
	}

	r = invoke("-redis", srv.URL(), "-ns", "nothing", "migrate")
	if r.code != exitFail || !strings.HasPrefix(r.stderr, `chronos migrate: namespace "nothing" has no schedules, queues or instances in`) {
		t.Fatalf("migrate of an empty namespace: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A migration that stopped after marking the namespace as migrating: the
// other commands say so and how to end it, and the next migrate finishes
// it with the count it recorded, and says so.
func TestAnInterruptedMigrationIsReportedAndFinished(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	must(t, legacyNamespace(t, c, "half").Shutdown(ctx))
	// What chronos migrate writes first (runtime/internal/keyspace's meta
	// key, spelled here because this package cannot import it).
	must(t, c.HSet(ctx, "{half}:meta", "layout", "migrating", "partitions", "6").Err())

	r := invoke("-redis", srv.URL(), "-ns", "half", "schedules")
	if r.code != exitFail || r.stderr != `chronos schedules: namespace "half" is moving to 6 partitions: let chronos migrate finish (run it again if it was interrupted)`+"\n" {
		t.Fatalf("schedules during a migration: exit %d, stderr %q", r.code, r.stderr)
	}
	r = invoke("-redis", srv.URL(), "-ns", "half", "migrate", "-partitions", "12")
	if r.code != exitFail || !strings.Contains(r.stderr, "run it again with 6 partitions") {
		t.Fatalf("migrate -partitions 12 of a migration to 6: exit %d, stderr %q", r.code, r.stderr)
	}
	c2 := &cluster{t: t, redis: srv, rdb: c}
	if out := c2.ok("-ns", "half", "migrate"); !strings.HasPrefix(out, `finished the migration of namespace "half" to 6 partitions, which an earlier run had begun:`) ||
		!hasFields(out, "schedules 2") {
		t.Fatalf("migrate of an interrupted migration printed:\n%s", out)
	}
	if out := c2.ok("-ns", "half", "schedules"); !strings.Contains(out, "hourly") {
		t.Fatalf("schedules after the migration:\n%s", out)
	}
}

// migrate runs without the default 30 s limit unless -timeout is given,
// before or after the command. Not parallel: it sets a hook of the
// package.
func TestMigrateHasNoTimeLimitUnlessOneIsGiven(t *testing.T) {
	srv := redistest.Start(t)
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"migrate", "-dry-run"}, 0},
		{[]string{"migrate", "-dry-run", "-timeout", "5s"}, 5 * time.Second},
		{[]string{"-timeout", "7s", "migrate", "-dry-run"}, 7 * time.Second},
	} {
		var timeout time.Duration
		migrateConnected = func(c *cli) { timeout = c.timeout }
		r := invoke(append([]string{"-redis", srv.URL(), "-ns", "nothing"}, tc.args...)...)
		migrateConnected = nil
		if timeout != tc.want {
			t.Errorf("%v: timeout %v, want %v (exit %d, %s)", tc.args, timeout, tc.want, r.code, r.stderr)
		}
	}
}
