package main

import (
	"context"
	"strings"
	"testing"

	chronos "github.com/chronos-go/chronos/runtime"
)

// A namespace that holds nothing is a mistyped -ns (or -redis): every
// command that reads it says so rather than print an empty answer.
func TestAnUnknownNamespaceIsAnErrorNotAnEmptyAnswer(t *testing.T) {
	c := startCluster(t)
	c.waitLeader()
	want := `namespace "nope" has no schedules, queues or instances in ` + c.redis.URL() + " (check -ns)"
	for _, args := range [][]string{
		{"schedules"}, {"schedule", "reports.daily"}, {"leader"}, {"instances"}, {"queues"}, {"dead"},
		{"runs", "report"}, {"requeue", "01ABC"}, {"delete", "01ABC"}, {"pause", "reports.daily"},
		{"queue", "pause", "default"}, {"clear-overlap", "reports.daily"}, {"resume", "reports.daily"},
		{"trigger", "reports.daily"}, {"backfill", "reports.daily", "-from", "2026-01-01T00:00:00Z", "-to", "2026-01-02T00:00:00Z"},
	} {
		r := c.chronos(append([]string{"-ns", "nope"}, args...)...)
		if w := "chronos " + args[0] + ": " + want + "\n"; r.code != exitFail || r.stderr != w || r.stdout != "" {
			t.Errorf("chronos -ns nope %s: exit %d, stdout %q, stderr %q; want 1 and %q",
				strings.Join(args, " "), r.code, r.stdout, r.stderr, w)
		}
	}
}

// A namespace whose only keys are a queue's (a server runs there, no
// scheduler) exists: its empty listings are answers.
func TestANamespaceWithOnlyAQueueExists(t *testing.T) {
	c := startCluster(t)
	srv := chronos.NewServer(c.redis.NewClient(nil), chronos.ServerConfig{Namespace: "workers", Logger: quiet, TaskLogger: quiet})
	must(t, srv.Start(context.Background(), chronos.NewMux()))
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	eventually(t, "the queue of the workers", func() bool {
		return c.chronos("-ns", "workers", "queues").code == exitOK
	})
	if out := c.ok("-ns", "workers", "schedules"); strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "ID ") {
		t.Fatalf("schedules printed %q, want the header alone", out)
	}
	if out := c.ok("-ns", "workers", "leader"); out != "no leader in namespace \"workers\"\n" {
		t.Fatalf("leader printed %q", out)
	}
	lineOf(t, c.ok("-ns", "workers", "queues"), "default")
}
