package main

import (
	"context"
	"strings"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

func TestSchedulesListsEveryScheduleWithItsTriggerAndState(t *testing.T) {
	c := startCluster(t)
	out := c.ok("schedules")

	header := strings.Fields(strings.SplitN(out, "\n", 2)[0])
	want := []string{"ID", "TRIGGER", "ZONE", "NEXT", "FIRE", "LAST", "FIRED", "LAST", "OUTCOME", "PAUSED", "SOURCE"}
	if strings.Join(header, " ") != strings.Join(want, " ") {
		t.Fatalf("header %q, want %q", header, want)
	}
	daily := lineOf(t, out, "reports.daily")
	for _, part := range []string{"cron 0 0 2 * * ?", "Asia/Seoul", "T17:00:00Z", " no ", "jobs.go:42"} {
		if !strings.Contains(daily, part) {
			t.Errorf("reports.daily row %q lacks %q", daily, part)
		}
	}
	if health := lineOf(t, out, "health"); !strings.Contains(health, "every 1h0m0s") {
		t.Errorf("health row %q lacks its interval", health)
	}
	lineOf(t, out, "nightly")
}

func TestSchedulesJSONIsTheStoredDefinitionAndState(t *testing.T) {
	c := startCluster(t)
	var list []scheduleView
	c.okJSON(&list, "schedules")
	if len(list) != 3 {
		t.Fatalf("%d schedules, want 3: %+v", len(list), list)
	}
	byID := map[string]scheduleView{}
	for _, s := range list {
		byID[s.ID] = s
	}
	d := byID["reports.daily"]
	if d.Trigger != "cron" || d.Spec != "0 0 2 * * ?" || d.TimeZone != "Asia/Seoul" || d.Misfire != "doNothing" ||
		d.Source != "jobs.go:42" || d.Paused != nil || len(d.Jobs) != 1 || d.Jobs[0].Kind != "report" {
		t.Fatalf("reports.daily = %+v", d)
	}
	if d.NextFire.Location() != time.UTC || d.NextFire.Hour() != 17 || !d.NextFire.After(time.Now()) {
		t.Fatalf("next fire %v, want the next 17:00 UTC (02:00 in Seoul), in UTC", d.NextFire)
	}
	if n := byID["nightly"]; len(n.Jobs) != 2 || n.Jobs[0].Name != "users" || n.Jobs[1].Name != "orders" {
		t.Fatalf("nightly jobs = %+v", n.Jobs)
	}
}

func TestScheduleShowsNextFireTimesInItsZoneAndItsHistory(t *testing.T) {
	c := startCluster(t)
	out := c.ok("schedule", "reports.daily")
	for _, part := range []string{
		"ID:", "reports.daily", "Zone:", "Asia/Seoul (DST quartz)", "Misfire:", "doNothing",
		"Source:", "jobs.go:42", "Declared by:", "sched-a v1.2.3", "Paused:", "Next 5 fire times:",
		"Last 10 firings (newest first):", "none yet",
	} {
		if !strings.Contains(out, part) {
			t.Errorf("output lacks %q:\n%s", part, out)
		}
	}
	if n := strings.Count(out, "02:00:00 KST"); n != 5 {
		t.Errorf("%d fire times at 02:00 KST, want 5:\n%s", n, out)
	}

	var d scheduleDetail
	c.okJSON(&d, "schedule", "reports.daily")
	if len(d.NextFires) != 5 || len(d.History) != 0 {
		t.Fatalf("next_fires %v, history %v; want 5 and none", d.NextFires, d.History)
	}
	for k := 1; k < len(d.NextFires); k++ {
		if got := d.NextFires[k].Sub(d.NextFires[k-1]); got != 24*time.Hour {
			t.Fatalf("fire times %v are not a day apart", d.NextFires)
		}
	}
}

func TestScheduleOfAnUnknownIDFailsWithOneLine(t *testing.T) {
	c := startCluster(t)
	r := c.chronos("schedule", "nope")
	if r.code != exitFail || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing", r.code, r.stdout)
	}
	if want := "chronos schedule: no schedule \"nope\" in namespace \"chronos\"\n"; r.stderr != want {
		t.Fatalf("stderr %q, want %q", r.stderr, want)
	}
}

func TestNamespacesAreSeparate(t *testing.T) {
	c := startCluster(t)
	// "other" holds a paused queue and no schedules.
	must(t, chronos.NewInspector(c.rdb, chronos.WithNamespace("other")).PauseQueue(context.Background(), "imports"))
	var list []scheduleView
	c.okJSON(&list, "-ns", "other", "schedules")
	if list == nil || len(list) != 0 {
		t.Fatalf("namespace other lists %v, want an empty array", list)
	}
	if r := c.chronos("schedule", "reports.daily", "-ns", "other"); r.code != exitFail ||
		!strings.Contains(r.stderr, `in namespace "other"`) {
		t.Fatalf("schedule in another namespace: exit %d, stderr %q", r.code, r.stderr)
	}
}
