package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

func TestSchedulesListsEveryScheduleWithItsTriggerAndState(t *testing.T) {
	c := startCluster(t)
	out := c.ok("schedules")

	header := strings.Fields(strings.SplitN(out, "\n", 2)[0])
	want := []string{"ID", "TRIGGER", "ZONE", "QUEUE", "NEXT", "FIRE", "LAST", "FIRED", "LAST", "OUTCOME", "PAUSED", "HEALTH", "SOURCE"}
	if strings.Join(header, " ") != strings.Join(want, " ") {
		t.Fatalf("header %q, want %q", header, want)
	}
	daily := lineOf(t, out, "reports.daily")
	for _, part := range []string{"cron 0 0 2 * * ?", "Asia/Seoul", " default ", "T17:00:00Z", " no ", " ok ", "jobs.go:42"} {
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
	if h := d.Health; h == nil || h.State != "ok" || h.LateAfter != "1m0s" || h.FailingAfter != 3 {
		t.Fatalf("reports.daily health = %+v, want ok with the default thresholds", h)
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

// A pause whose -until has passed stays stored until the next resume, but
// the scheduler fires the schedule again: the CLI shows it as ended, and
// a request does not warn about it.
func TestAPauseWhoseEndHasPassedIsShownAsEnded(t *testing.T) {
	c := startCluster(t)
	c.waitLeader()
	c.ok("pause", "reports.daily", "-until", "1s", "-who", "alice")
	c.ok("pause", "nightly", "-job", "orders", "-until", "1s")
	var s, n scheduleView
	eventually(t, "both pauses to end", func() bool {
		c.okJSON(&s, "schedule", "reports.daily")
		c.okJSON(&n, "schedule", "nightly")
		return s.Paused == nil && n.Jobs[1].Paused == nil
	})
	if s.EndedPause == nil || s.EndedPause.Who != "alice" || s.EndedPause.Until.After(time.Now()) {
		t.Fatalf("paused %+v, ended_pause %+v; want alice's pause as ended", s.Paused, s.EndedPause)
	}
	until := s.EndedPause.Until.Format(time.RFC3339)
	if row := lineOf(t, c.ok("schedules"), "reports.daily"); !strings.Contains(row, " no (ended "+until+") ") {
		t.Fatalf("schedules row %q, want the pause shown as ended at %s", row, until)
	}
	if row := lineOf(t, c.ok("schedules"), "nightly"); !strings.Contains(row, " no ") {
		t.Fatalf("nightly row %q: its job's pause has ended", row)
	}
	want := "Paused: no: the pause by alice ended at " + until + "; it fires again"
	if out := c.ok("schedule", "reports.daily"); !hasFields(out, want) {
		t.Fatalf("schedule lacks %q:\n%s", want, out)
	}
	c.okJSON(&n, "schedule", "nightly")
	if n.Jobs[1].Paused != nil || n.Jobs[1].EndedPause == nil {
		t.Fatalf("orders job: paused %+v, ended_pause %+v", n.Jobs[1].Paused, n.Jobs[1].EndedPause)
	}
	if r := c.chronos("trigger", "nightly"); r.code != exitOK || r.stderr != "" {
		t.Fatalf("trigger after the pause ended: exit %d, stderr %q; want no warning", r.code, r.stderr)
	}
}

// An isolated schedule fires on every live instance, its tasks running in
// process: its queue is "local", its next fire comes from its trigger, and
// its last firing names the instance.
func TestAnIsolatedScheduleShowsQueueLocalAndTheInstanceThatFiredIt(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(context.Context, *chronos.Task[report]) error { return nil })
	srv := chronos.NewServer(c.redis.NewClient(nil), chronos.ServerConfig{Namespace: "iso", Logger: quiet, TaskLogger: quiet})
	must(t, srv.Start(ctx, mux))
	t.Cleanup(func() { _ = srv.Shutdown(ctx) })
	sched := chronos.NewScheduler(c.redis.NewClient(nil), chronos.SchedulerConfig{
		Namespace: "iso", InstanceID: "iso-a", LeaderTTL: time.Second, Logger: quiet, Server: srv,
	})
	must(t, chronos.RegisterInterval(sched, time.Second, report{Format: "local"},
		chronos.WithScheduleID("local.tick"), chronos.WithIsolated(true)))
	must(t, sched.Start(ctx))
	t.Cleanup(func() { _ = sched.Shutdown(ctx) })

	var s scheduleView
	eventually(t, "a firing of the isolated schedule", func() bool {
		r := c.chronos("-ns", "iso", "-json", "schedule", "local.tick")
		return r.code == exitOK && json.Unmarshal([]byte(r.stdout), &s) == nil && s.LastInstance == "iso-a"
	})
	if !s.Isolated || s.Jobs[0].Queue != "local" || s.NextFire.IsZero() || s.LastFired.IsZero() {
		t.Fatalf("schedule = %+v", s)
	}
	row := lineOf(t, c.ok("-ns", "iso", "schedules"), "local.tick")
	if !hasFields(row, "- local 20") || !strings.Contains(row, " fired on iso-a ") {
		t.Fatalf("row %q, want queue local and the last firing on iso-a", row)
	}
	out := c.ok("-ns", "iso", "schedule", "local.tick")
	for _, part := range []string{"Isolated: yes", "Last instance: iso-a", "main report local"} {
		if !hasFields(out, part) {
			t.Errorf("schedule lacks %q:\n%s", part, out)
		}
	}
	var runs []struct {
		Queue    string `json:"queue"`
		Instance string `json:"instance"`
	}
	eventually(t, "a local run record", func() bool {
		c.okJSON(&runs, "-ns", "iso", "runs", "local.tick")
		return len(runs) > 0
	})
	if runs[0].Queue != "local" || runs[0].Instance != "iso-a" {
		t.Fatalf("runs = %+v", runs)
	}
}

// The requests the leader has not carried out show under their schedule,
// a backfill with how far it got.
func TestScheduleShowsItsPendingRequests(t *testing.T) {
	c := startCluster(t)
	c.waitLeader()
	must(t, c.sched.Shutdown(t.Context())) // nobody carries the requests out
	c.chronos("trigger", "reports.daily", "-who", "bob")
	c.chronos("backfill", "reports.daily", "-from", "2026-01-10T00:00:00Z", "-to", "2026-01-12T23:59:59Z", "-who", "carol")

	var d scheduleDetail
	c.okJSON(&d, "schedule", "reports.daily")
	if len(d.Requests) != 2 {
		t.Fatalf("pending_requests = %+v, want the trigger and the backfill", d.Requests)
	}
	tr, bf := d.Requests[0], d.Requests[1]
	if tr.Kind != "trigger" || tr.Who != "bob" || bf.Kind != "backfill" || bf.Who != "carol" || bf.Planned != 3 || bf.Fired != 0 ||
		!bf.From.Equal(time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("pending_requests = %+v", d.Requests)
	}
	out := c.ok("schedule", "reports.daily")
	for _, part := range []string{"Pending requests (oldest first):", tr.ID + " trigger bob", "waiting for the leader",
		bf.ID + " backfill carol", "0 of 3 fired"} {
		if !hasFields(out, part) {
			t.Errorf("schedule lacks %q:\n%s", part, out)
		}
	}
	var other scheduleDetail
	c.okJSON(&other, "schedule", "health")
	if other.Requests == nil || len(other.Requests) != 0 {
		t.Fatalf("health lists requests %+v, want []", other.Requests)
	}
	if out := c.ok("schedule", "health"); !strings.Contains(out, "Pending requests (oldest first):\n  none\n") {
		t.Fatalf("schedule health:\n%s", out)
	}
}

func TestProgressSaysHowFarABackfillGot(t *testing.T) {
	next := time.Date(2026, 1, 11, 17, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		r    chronos.OperatorRequest
		want string
	}{
		{chronos.OperatorRequest{Kind: "trigger"}, "waiting for the leader"},
		{chronos.OperatorRequest{Kind: "backfill", Planned: 3}, "0 of 3 fired"},
		{chronos.OperatorRequest{Kind: "backfill", Planned: 3, Fired: 1, Next: next}, "1 of 3 fired, next 2026-01-11T17:00:00Z"},
	} {
		if got := progressText(&tc.r); got != tc.want {
			t.Errorf("progressText(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}
