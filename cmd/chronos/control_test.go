package main

import (
	"context"
	"strings"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

func TestPauseShowsUpInSchedulesAndResumeClearsIt(t *testing.T) {
	c := startCluster(t)
	if out := c.ok("pause", "reports.daily", "-note", "DB migration", "-who", "alice", "-until", "6h"); !strings.HasPrefix(out, "paused schedule reports.daily until 20") {
		t.Fatalf("pause printed %q", out)
	}
	if row := lineOf(t, c.ok("schedules"), "reports.daily"); !strings.Contains(row, " until ") {
		t.Fatalf("schedules row after pause %q, want paused until a time", row)
	}
	var s scheduleView
	c.okJSON(&s, "schedule", "reports.daily")
	if p := s.Paused; p == nil || p.Note != "DB migration" || p.Who != "alice" ||
		p.Until.Sub(time.Now()) < 5*time.Hour || p.Until.Sub(time.Now()) > 7*time.Hour {
		t.Fatalf("paused = %+v, want alice's note until about 6h from now", s.Paused)
	}
	if out := c.ok("schedule", "reports.daily"); !strings.Contains(out, "by alice until ") || !strings.Contains(out, "(DB migration)") {
		t.Fatalf("schedule does not describe the pause:\n%s", out)
	}

	if out := c.ok("resume", "reports.daily"); out != "resumed schedule reports.daily\n" {
		t.Fatalf("resume printed %q", out)
	}
	if row := lineOf(t, c.ok("schedules"), "reports.daily"); !strings.Contains(row, " no ") {
		t.Fatalf("schedules row after resume %q, want not paused", row)
	}
	if out := c.ok("resume", "reports.daily"); out != "schedule reports.daily was not paused\n" {
		t.Fatalf("second resume printed %q", out)
	}
}

func TestPauseOfOneJobOfAGroup(t *testing.T) {
	c := startCluster(t)
	// Flags may come before or after the ID.
	if out := c.ok("pause", "-job", "orders", "nightly", "-until", "2099-01-01T00:00:00Z"); out != "paused job orders of schedule nightly until 2099-01-01T00:00:00Z\n" {
		t.Fatalf("pause printed %q", out)
	}
	if row := lineOf(t, c.ok("schedules"), "nightly"); !strings.Contains(row, "jobs orders") {
		t.Fatalf("schedules row %q, want the paused job named", row)
	}
	var s scheduleView
	c.okJSON(&s, "schedule", "nightly")
	if s.Paused != nil || s.Jobs[0].Paused != nil || s.Jobs[1].Paused == nil ||
		!s.Jobs[1].Paused.Until.Equal(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("pauses = schedule %+v, jobs %+v %+v", s.Paused, s.Jobs[0].Paused, s.Jobs[1].Paused)
	}
	var resumed struct {
		ID      string `json:"id"`
		Job     string `json:"job"`
		Resumed bool   `json:"resumed"`
	}
	c.okJSON(&resumed, "resume", "nightly", "-job", "orders")
	if resumed.ID != "nightly" || resumed.Job != "orders" || !resumed.Resumed {
		t.Fatalf("resume -json = %+v", resumed)
	}
	c.okJSON(&s, "schedule", "nightly")
	if s.Jobs[1].Paused != nil {
		t.Fatalf("job still paused after resume: %+v", s.Jobs[1].Paused)
	}
	// With -json, pause prints the schedule it paused.
	c.okJSON(&s, "pause", "nightly", "-note", "all of it")
	if s.ID != "nightly" || s.Paused == nil || s.Paused.Note != "all of it" {
		t.Fatalf("pause -json = %+v", s)
	}
}

func TestPauseAndResumeOfAnUnknownScheduleFail(t *testing.T) {
	c := startCluster(t)
	for _, cmd := range []string{"pause", "resume", "trigger"} {
		r := c.chronos(cmd, "nope")
		if r.code != exitFail || !strings.HasSuffix(r.stderr, "no schedule \"nope\" in namespace \"chronos\"\n") {
			t.Errorf("%s nope: exit %d, stderr %q", cmd, r.code, r.stderr)
		}
	}
}

func TestPauseAndResumeOfAnUnknownJobNameTheJobs(t *testing.T) {
	c := startCluster(t)
	for _, cmd := range []string{"pause", "resume"} {
		r := c.chronos(cmd, "nightly", "-job", "billing")
		want := "chronos " + cmd + ": schedule \"nightly\" has no job \"billing\" (its jobs: users, orders)\n"
		if r.code != exitFail || r.stderr != want {
			t.Errorf("%s -job billing: exit %d, stderr %q; want 1 and %q", cmd, r.code, r.stderr, want)
		}
	}
}

func TestTriggerProducesAFiringThatRuns(t *testing.T) {
	c := startCluster(t)
	c.waitLeader()
	out := c.ok("trigger", "reports.daily", "-who", "bob")
	if !strings.HasPrefix(out, "requested ") || !strings.Contains(out, "for schedule reports.daily") {
		t.Fatalf("trigger printed %q", out)
	}

	var fs []firingView
	eventually(t, "the triggered firing in the history", func() bool {
		fs = c.firings("reports.daily", "request")
		return len(fs) == 1
	})
	h := fs[0]
	if len(h.Jobs) != 1 || h.Jobs[0].Result != "enqueued" || h.Jobs[0].TaskID == "" {
		t.Fatalf("firing = %+v", h)
	}
	if detail := c.ok("schedule", "reports.daily"); !strings.Contains(detail, "main enqueued "+h.Jobs[0].TaskID) {
		t.Fatalf("schedule does not show the firing:\n%s", detail)
	}

	var runs []struct {
		TaskID     string `json:"task_id"`
		Status     string `json:"status"`
		ScheduleID string `json:"schedule_id"`
	}
	eventually(t, "the triggered task's run", func() bool {
		c.okJSON(&runs, "runs", "report")
		return len(runs) > 0 && runs[0].TaskID == h.Jobs[0].TaskID
	})
	if r := runs[0]; r.TaskID != h.Jobs[0].TaskID || r.Status != "success" || r.ScheduleID != "reports.daily" {
		t.Fatalf("run = %+v", r)
	}
	if row := lineOf(t, c.ok("runs", "report"), h.Jobs[0].TaskID); !strings.Contains(row, "success") {
		t.Fatalf("runs row %q", row)
	}
}

func TestBackfillFiresEachFireTimeInTheRange(t *testing.T) {
	c := startCluster(t)
	c.waitLeader()
	// 02:00 in Seoul is 17:00 UTC the day before.
	var req struct {
		ID        string `json:"id"`
		RequestID string `json:"request_id"`
		Leader    string `json:"leader"`
	}
	c.okJSON(&req, "backfill", "reports.daily", "-from", "2026-01-10T00:00:00Z", "-to", "2026-01-12T23:59:59Z")
	if req.ID != "reports.daily" || req.RequestID == "" || req.Leader != "sched-a" {
		t.Fatalf("backfill answered %+v", req)
	}
	var fs []firingView
	eventually(t, "three backfilled firings", func() bool {
		fs = c.firings("reports.daily", "backfill")
		return len(fs) == 3
	})
	var got []string
	for _, h := range fs {
		got = append(got, h.Trigger.Format(time.RFC3339))
	}
	want := "2026-01-12T17:00:00Z 2026-01-11T17:00:00Z 2026-01-10T17:00:00Z"
	if strings.Join(got, " ") != want {
		t.Fatalf("backfilled triggers %v, want %s (newest first)", got, want)
	}
}

// A dry run counts the range and asks for nothing; a range past the limit
// is refused before anything is enqueued, naming the limit and the flag.
func TestBackfillDryRunAndLimit(t *testing.T) {
	c := startCluster(t)
	out := c.ok("backfill", "reports.daily", "-from", "2026-01-01T00:00:00Z", "-to", "2026-12-31T23:00:00Z", "-dry-run", "-max", "100")
	want := "backfill of reports.daily from 2026-01-01T00:00:00Z to 2026-12-31T23:00:00Z: 365 fire times, " +
		"first 2026-01-01T17:00:00Z, last 2026-12-31T17:00:00Z\nmore than the limit of 100: raise it with -max to ask for it\n"
	if out != want {
		t.Fatalf("dry run printed %q, want %q", out, want)
	}
	r := c.chronos("backfill", "reports.daily", "-from", "2026-01-01T00:00:00Z", "-to", "2026-12-31T23:00:00Z", "-max", "100")
	if r.code != exitFail || !strings.Contains(r.stderr, "365 fire times, more than the limit of 100") || !strings.Contains(r.stderr, "-max") {
		t.Fatalf("backfill past the limit: exit %d, stderr %q", r.code, r.stderr)
	}
	if n := len(c.firings("reports.daily", "backfill")); n != 0 {
		t.Fatalf("%d firings after a refused backfill", n)
	}
}

// The leader leaves a group's paused jobs out of an operator's request, as
// its timer does; the CLI says so, so that nobody waits for them.
func TestTriggerSaysItLeavesPausedJobsOut(t *testing.T) {
	c := startCluster(t)
	c.waitLeader()
	if out := c.ok("pause", "nightly", "-job", "orders"); out != "paused job orders of schedule nightly until resumed\n" {
		t.Fatalf("pause printed %q", out)
	}
	r := c.chronos("trigger", "nightly")
	if want := "chronos: job orders of schedule nightly is paused; the request leaves it out\n"; r.code != exitOK || r.stderr != want {
		t.Fatalf("exit %d, stderr %q; want 0 and %q", r.code, r.stderr, want)
	}
	var fs []firingView
	eventually(t, "the triggered firing", func() bool {
		fs = c.firings("nightly", "request")
		return len(fs) == 1
	})
	if n := len(fs[0].Jobs); n != 1 {
		t.Fatalf("firing %+v has %d jobs; the paused one should be left out", fs[0], n)
	}
}

// A pause of the whole schedule does not stop a request: the operator
// named the schedule. The CLI warns.
func TestTriggerOfAPausedScheduleWarnsThatItFiresAnyway(t *testing.T) {
	c := startCluster(t)
	c.waitLeader()
	c.ok("pause", "nightly")
	r := c.chronos("trigger", "nightly")
	if want := "chronos: warning: schedule nightly is paused; the request fires it anyway\n"; r.code != exitOK || r.stderr != want {
		t.Fatalf("exit %d, stderr %q; want 0 and %q", r.code, r.stderr, want)
	}
	var fs []firingView
	eventually(t, "the triggered firing", func() bool {
		fs = c.firings("nightly", "request")
		return len(fs) == 1
	})
	if n := len(fs[0].Jobs); n != 2 {
		t.Fatalf("firing %+v has %d jobs; want both", fs[0], n)
	}
}

func TestTriggerWithoutALeaderWarnsThatTheRequestWaits(t *testing.T) {
	c := startCluster(t)
	c.waitLeader()
	if err := c.sched.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if out := c.ok("leader"); out != "no leader in namespace \"chronos\"\n" {
		t.Fatalf("leader printed %q", out)
	}
	r := c.chronos("trigger", "reports.daily")
	if r.code != exitOK || !strings.Contains(r.stderr, "warning: no scheduler leads namespace") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// A job's overlap marker counts a run that is queued; once an operator
// knows it is gone and clears the marker, the next firing enqueues again.
func TestClearOverlapLetsTheNextFiringEnqueue(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	// No server serves namespace "ovl": its first run stays queued.
	sched := chronos.NewScheduler(c.redis.NewClient(nil), chronos.SchedulerConfig{
		Namespace: "ovl", InstanceID: "ovl-a", LeaderTTL: time.Second, Logger: quiet,
	})
	must(t, chronos.RegisterInterval(sched, time.Second, report{Format: "slow"},
		chronos.WithScheduleID("slow"), chronos.WithOverlap(chronos.OverlapSkip)))
	must(t, sched.Start(ctx))
	t.Cleanup(func() { _ = sched.Shutdown(ctx) })
	results := func() []string { // newest first
		var d scheduleDetail
		c.okJSON(&d, "-ns", "ovl", "schedule", "slow")
		var out []string
		for _, h := range d.History {
			out = append(out, h.Jobs[0].Result)
		}
		return out
	}
	eventually(t, "a firing skipped by the overlap policy", func() bool {
		r := results()
		return len(r) >= 2 && r[0] == "skipped"
	})
	if out := c.ok("-ns", "ovl", "clear-overlap", "slow"); out !=
		"cleared the overlap marker of schedule slow: its next firing counts no earlier run\n" {
		t.Fatalf("clear-overlap printed %q", out)
	}
	eventually(t, "a firing enqueued after the clear", func() bool { return results()[0] == "enqueued" })
}

func TestClearOverlapOfAGroupNeedsTheJob(t *testing.T) {
	c := startCluster(t)
	r := c.chronos("clear-overlap", "nightly")
	if want := "chronos clear-overlap: schedule \"nightly\" is a group: name the job with -job (its jobs: users, orders)\n"; r.code != exitFail || r.stderr != want {
		t.Fatalf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}
	r = c.chronos("clear-overlap", "nightly", "-job", "billing")
	if want := "chronos clear-overlap: schedule \"nightly\" has no job \"billing\" (its jobs: users, orders)\n"; r.code != exitFail || r.stderr != want {
		t.Fatalf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}
	if out := c.ok("clear-overlap", "nightly", "-job", "orders"); out != "cleared the overlap marker of job orders of schedule nightly: "+
		"its next firing counts no earlier run (its overlap policy is allow: markers do not hold it back)\n" {
		t.Fatalf("clear-overlap printed %q", out)
	}
}
