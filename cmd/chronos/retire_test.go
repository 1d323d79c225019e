package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// declareAndLeave declares schedule id in namespace ns from an instance
// that then shuts down, as a deploy that dropped it from the code leaves
// it: stored, declared by no live instance. No other instance runs in ns,
// so no leader retires it behind the test's back.
func (c *cluster) declareAndLeave(ns, id string) {
	c.t.Helper()
	s := chronos.NewScheduler(c.redis.NewClient(nil), chronos.SchedulerConfig{
		Namespace: ns, InstanceID: "old-a", LeaderTTL: time.Second, Logger: quiet,
	})
	must(c.t, chronos.RegisterInterval(s, time.Hour, report{Format: "old"}, chronos.WithScheduleID(id)))
	must(c.t, chronos.RegisterInterval(s, time.Hour, report{Format: "kept"}, chronos.WithScheduleID("kept")))
	must(c.t, s.Start(context.Background()))
	must(c.t, s.Shutdown(context.Background()))
}

func TestRetireStopsAnUndeclaredScheduleAndSchedulesHidesIt(t *testing.T) {
	c := startCluster(t)
	c.declareAndLeave("legacy", "old")
	if row := lineOf(t, c.ok("-ns", "legacy", "schedules"), "old"); strings.Contains(row, "retired") {
		t.Fatalf("before retire: %q", row)
	}

	out := c.ok("-ns", "legacy", "retire", "old", "-who", "ops")
	if !strings.HasPrefix(out, "retired schedule old: it no longer fires;") || !strings.Contains(out, "chronos delete-schedule old -yes") {
		t.Fatalf("retire printed %q", out)
	}

	// Hidden by default, with a line saying so; -all shows it as retired.
	out = c.ok("-ns", "legacy", "schedules")
	if strings.Contains(out, "\nold ") || !strings.HasSuffix(out, "(1 retired schedule not shown; -all lists them)\n") {
		t.Fatalf("schedules lists the retired schedule or does not say it hid it:\n%s", out)
	}
	lineOf(t, out, "kept")
	row := lineOf(t, c.ok("-ns", "legacy", "schedules", "-all"), "old")
	if !hasFields(row, "default retired") || !strings.Contains(row, " retired ") || strings.Count(row, "retired") != 2 {
		t.Fatalf("schedules -all row %q, want retired as its next fire and its health", row)
	}
	var list []scheduleView
	c.okJSON(&list, "-ns", "legacy", "schedules")
	if len(list) != 1 || list[0].ID != "kept" {
		t.Fatalf("schedules -json = %+v, want only kept", list)
	}
	c.okJSON(&list, "-ns", "legacy", "schedules", "-all")
	if len(list) != 2 || list[1].ID != "old" || list[1].RetiredBy != "ops" || list[1].Retired.IsZero() ||
		list[1].Health == nil || list[1].Health.State != "retired" {
		t.Fatalf("schedules -json -all = %+v", list)
	}
	if out := c.ok("-ns", "legacy", "schedule", "old"); !hasFields(out, "Retired: retired") || !strings.Contains(out, " by ops; it does not fire") {
		t.Fatalf("schedule old:\n%s", out)
	}

	// Retiring it again does nothing, and says so.
	if out := c.ok("-ns", "legacy", "retire", "old"); !strings.HasPrefix(out, "schedule old was retired already, retired 20") ||
		!strings.HasSuffix(out, " by ops\n") {
		t.Fatalf("second retire printed %q", out)
	}
	var res struct {
		Retired   bool   `json:"retired"`
		RetiredBy string `json:"retired_by"`
	}
	c.okJSON(&res, "-ns", "legacy", "retire", "old")
	if res.Retired || res.RetiredBy != "ops" {
		t.Fatalf("retire -json of a retired schedule = %+v", res)
	}
}

func TestRetireAndDeleteRefuseAScheduleALiveInstanceDeclares(t *testing.T) {
	c := startCluster(t)
	for _, args := range [][]string{{"retire", "health"}, {"delete-schedule", "health", "-yes"}} {
		r := c.chronos(args...)
		verb := map[string]string{"retire": "retire", "delete-schedule": "delete"}[args[0]]
		want := "chronos " + args[0] + ": cannot " + verb + " schedule health: it is still declared by live instance sched-a, " +
			"so it would be back in force at once; to stop it while the code declares it, pause it (chronos pause health), " +
			"or deploy a build that no longer declares it: once no live instance does, the leader retires it by itself\n"
		if r.code != exitFail || r.stderr != want || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr\n%q, want\n%q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	if h := lineOf(t, c.ok("schedules"), "health"); strings.Contains(h, "retired") {
		t.Fatalf("health after the refusals: %q", h)
	}
	for _, args := range [][]string{{"retire", "nope"}, {"delete-schedule", "nope", "-yes"}} {
		r := c.chronos(args...)
		if want := "chronos " + args[0] + ": no schedule \"nope\" in namespace \"chronos\"\n"; r.code != exitFail || r.stderr != want {
			t.Errorf("%v: exit %d, stderr %q, want %q", args, r.code, r.stderr, want)
		}
	}
}

func TestDeleteScheduleWantsYesThenDeletesStateAndHistory(t *testing.T) {
	c := startCluster(t)
	c.declareAndLeave("legacy", "old")

	r := c.chronos("-ns", "legacy", "delete-schedule", "old")
	want := "chronos delete-schedule: schedule old (every 1h0m0s) not deleted: deleting is final (its state and history go, " +
		"and an instance that declares it again starts it afresh), so add -yes (or keep its state: chronos retire old)\n"
	if r.code != exitFail || r.stderr != want || r.stdout != "" {
		t.Fatalf("delete-schedule without -yes: exit %d, stdout %q, stderr\n%q, want\n%q", r.code, r.stdout, r.stderr, want)
	}
	lineOf(t, c.ok("-ns", "legacy", "schedules"), "old")

	if out := c.ok("-ns", "legacy", "delete-schedule", "old", "-yes"); out != "deleted schedule old (every 1h0m0s)\n" {
		t.Fatalf("delete-schedule -yes printed %q", out)
	}
	r = c.chronos("-ns", "legacy", "schedule", "old")
	if r.code != exitFail || r.stderr != "chronos schedule: no schedule \"old\" in namespace \"legacy\"\n" {
		t.Fatalf("schedule old after the delete: exit %d, stderr %q", r.code, r.stderr)
	}
	if out := c.ok("-ns", "legacy", "schedules", "-all"); strings.Contains(out, "\nold ") || strings.Contains(out, "not shown") {
		t.Fatalf("schedules -all after the delete:\n%s", out)
	}
}

// The error names every instance that still declares the schedule.
func TestRetireErrNamesEveryDeclaringInstance(t *testing.T) {
	err := fmt.Errorf("chronos: retire %q: %w: %w", "x", chronos.ErrScheduleDeclared,
		errors.New(`schedstore: retire "x": schedstore: schedule is declared by a live instance: a-1, b-2`))
	got := retireErr(err, "retire", "x").Error()
	if !strings.Contains(got, "still declared by live instances a-1, b-2, so") || strings.Contains(got, "schedstore") {
		t.Fatalf("retireErr = %q", got)
	}
}
