package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/console"
)

func TestPauseOneJobOfAGroupWithANoteAndAnEnd(t *testing.T) {
	f := start(t, fixtureOptions{console: console.Options{Who: func(*http.Request) string { return "bob" }}})
	b := f.browser()
	ctx := context.Background()
	r := b.submit("/schedules/nightly", "/schedules/nightly/pause", url.Values{
		"job": {"orders"}, "note": {"orders DB migration"}, "until": {"6h"}, "return": {"/schedules/nightly"}})
	if r.status != http.StatusOK || !strings.HasSuffix(r.url, "/schedules/nightly") {
		t.Fatalf("pause: %d at %s\n%s", r.status, r.url, r.body)
	}
	contains(t, "the schedule page after the pause", r.body, "Paused job orders of schedule nightly until", "orders DB migration", "by <b>bob</b>")
	s, _ := f.insp.Schedule(ctx, "nightly")
	if s.Paused != nil || s.Jobs[1].Paused == nil || s.Jobs[1].Paused.Who != "bob" ||
		s.Jobs[1].Paused.Until.Before(time.Now().Add(5*time.Hour)) {
		t.Fatalf("after pausing job orders: schedule %+v, job %+v", s.Paused, s.Jobs[1].Paused)
	}
	contains(t, "schedule list", b.ok("/schedules?status=paused"), "jobs paused: orders", `data-schedule="nightly"`)

	r = b.submit("/schedules/nightly", "/schedules/nightly/resume", url.Values{"job": {"orders"}})
	contains(t, "after resuming", r.body, "Resumed job orders of schedule nightly")
	if s, _ := f.insp.Schedule(ctx, "nightly"); s.Jobs[1].Paused != nil {
		t.Fatal("job orders is still paused")
	}
	r = b.submit("/schedules/nightly", "/schedules/nightly/resume", nil)
	contains(t, "resuming what is not paused", r.body, "Schedule nightly was not paused.")

	for _, c := range []struct {
		form   url.Values
		status int
		says   string
	}{
		{url.Values{"job": {"invoices"}}, http.StatusNotFound, "has no job &#34;invoices&#34; (its jobs: users, orders)"},
		{url.Values{"until": {"yesterday"}}, http.StatusBadRequest, "want a duration such as 6h"},
		{url.Values{"until": {"2001-01-01T00:00:00Z"}}, http.StatusBadRequest, "is in the past"},
	} {
		r := b.submit("/schedules/nightly", "/schedules/nightly/pause", c.form)
		if r.status != c.status || !strings.Contains(r.body, c.says) {
			t.Errorf("pause %v: %d, want %d saying %q\n%s", c.form, r.status, c.status, c.says, r.body)
		}
	}
	if s, _ := f.insp.Schedule(ctx, "nightly"); s.Paused != nil {
		t.Fatal("a refused pause paused the schedule")
	}
}

func TestTriggerNowAsksTheLeaderOnce(t *testing.T) {
	f := start(t, fixtureOptions{})
	f.waitLeader()
	b := f.browser()
	r := b.submit("/schedules/manual", "/schedules/manual/trigger", url.Values{"return": {"/schedules/manual"}})
	contains(t, "after trigger", r.body, "Asked the leader to fire schedule manual once now")
	eventually(t, "the requested firing", func() bool { return len(f.firings("manual", "request")) == 1 })
	eventually(t, "its run", func() bool { return f.ranOf("report") == 1 })
	job := f.firings("manual", "request")[0].Jobs[0]
	contains(t, "schedule page", b.ok("/schedules/manual"), "request", job.TaskID, `href="/tasks/`+job.TaskID+`?kind=report"`)
	eventually(t, "the run record on the schedule page", func() bool {
		return strings.Contains(b.ok("/schedules/manual"), `<span class="status s-success">success</span>`)
	})
}

func TestBackfillShowsADryRunCountBeforeAskingForIt(t *testing.T) {
	f := start(t, fixtureOptions{})
	f.waitLeader()
	b := f.browser()
	to := time.Now().UTC().Truncate(24 * time.Hour).Add(-24 * time.Hour).Add(17 * time.Hour) // 02:00 KST, yesterday
	from := to.Add(-2 * 24 * time.Hour)
	q := "?from=" + url.QueryEscape(from.Format(time.RFC3339)) + "&to=" + url.QueryEscape(to.Format(time.RFC3339))
	body := b.ok("/schedules/reports.daily/backfill" + q)
	contains(t, "dry run", body, `data-count="3"`, "makes <b>3</b> firings", "Backfill 3 firings")
	if n := len(f.firings("reports.daily", "backfill")); n != 0 {
		t.Fatalf("the dry run fired %d times", n)
	}
	form := url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}}
	r := b.submit("/schedules/reports.daily/backfill"+q, "/schedules/reports.daily/backfill", form)
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "run the dry run first") {
		t.Fatalf("backfill without the dry-run count: %d\n%s", r.status, r.body)
	}
	form.Set("planned", "2")
	r = b.submit("/schedules/reports.daily/backfill"+q, "/schedules/reports.daily/backfill", form)
	if r.status != http.StatusConflict || !strings.Contains(r.body, "Stale dry run") {
		t.Fatalf("backfill with a stale count: %d\n%s", r.status, r.body)
	}
	form.Set("planned", strconv.Itoa(3))
	r = b.submit("/schedules/reports.daily/backfill"+q, "/schedules/reports.daily/backfill", form)
	contains(t, "after the backfill", r.body, "backfill schedule reports.daily with 3 firings")
	eventually(t, "three backfilled firings", func() bool { return len(f.firings("reports.daily", "backfill")) == 3 })

	r = b.get("/schedules/reports.daily/backfill?from=" + url.QueryEscape(to.Format(time.RFC3339)) + "&to=" + url.QueryEscape(from.Format(time.RFC3339)))
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "before it starts") {
		t.Fatalf("a reversed range: %d", r.status)
	}
}

func TestTasksAreListedSearchedAndShownWithPayloadAndHistory(t *testing.T) {
	f := start(t, fixtureOptions{noSched: true})
	ctx := context.Background()
	b := f.browser()
	later, err := f.client.Enqueue(ctx, report{Format: "later"}, chronos.WithProcessIn(time.Hour))
	must(t, err)
	body := b.ok("/tasks?queue=default&state=delayed")
	contains(t, "delayed tasks", body, later.ID, "report")
	if strings.Contains(b.ok("/tasks?queue=default&state=delayed&kind=doomed"), later.ID) {
		t.Fatal("a kind filter kept a task of another kind")
	}
	// Search by ID leads to the task page.
	r := b.get("/tasks?id=" + later.ID)
	if !strings.HasSuffix(strings.Split(r.url, "?")[0], "/tasks/"+later.ID) {
		t.Fatalf("search by ID landed on %s", r.url)
	}
	contains(t, "task page", r.body, `id="task-state">delayed`, "&#34;format&#34;: &#34;later&#34;")

	dead, err := f.client.Enqueue(ctx, doomed{})
	must(t, err)
	eventually(t, "the task to die", func() bool { _, err := f.insp.GetDead(ctx, dead.ID); return err == nil })
	contains(t, "dead letters", b.ok("/dead"), dead.ID, "always fails", "1 dead letter")
	contains(t, "dead letters of doomed", b.ok("/dead?kind=doomed&queue=default"), dead.ID)
	contains(t, "dead task page", b.ok("/tasks/"+dead.ID), `id="task-state">dead`, "Failed attempts", "always fails: chronos: skip retry", "Requeue")

	// Delete asks for confirmation first.
	r = b.submit("/tasks/"+dead.ID, "/dead/"+dead.ID+"/delete", nil)
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "confirmation page") {
		t.Fatalf("delete without confirmation: %d", r.status)
	}
	contains(t, "confirmation", b.ok("/dead/"+dead.ID+"/delete"), "Delete dead task "+dead.ID+"?", "always fails")
	r = b.submit("/dead/"+dead.ID+"/delete", "/dead/"+dead.ID+"/delete", url.Values{"confirm": {"yes"}})
	contains(t, "after delete", r.body, "Deleted dead task "+dead.ID)
	if _, err := f.insp.GetDead(ctx, dead.ID); err == nil {
		t.Fatal("the dead task is still there")
	}
	// The same form again is stale: it says why and changes nothing.
	r = b.submit("/queues", "/dead/"+dead.ID+"/delete", url.Values{"confirm": {"yes"}})
	if r.status != http.StatusNotFound || !strings.Contains(r.body, "requeued or deleted meanwhile") {
		t.Fatalf("deleting twice: %d\n%s", r.status, r.body)
	}
}

func TestRequeueingADeadTaskRunsItAgain(t *testing.T) {
	f := start(t, fixtureOptions{noSched: true})
	ctx := context.Background()
	b := f.browser()
	info, err := f.client.Enqueue(ctx, flaky{})
	must(t, err)
	eventually(t, "the first run to die", func() bool { _, err := f.insp.GetDead(ctx, info.ID); return err == nil })
	r := b.submit("/dead", "/dead/"+info.ID+"/requeue", url.Values{"return": {"/dead"}})
	contains(t, "after requeue", r.body, "Requeued "+info.ID+" (flaky) to queue default")
	eventually(t, "the second run", func() bool { return f.ranOf("flaky") == 2 })
	eventually(t, "the task page to show it finished", func() bool {
		body := b.ok("/tasks/" + info.ID + "?kind=flaky")
		return strings.Contains(body, "it finished") && strings.Contains(body, "s-success") && strings.Contains(body, "disk full")
	})
	r = b.submit("/queues", "/dead/"+info.ID+"/requeue", nil)
	if r.status != http.StatusNotFound || !strings.Contains(r.body, "No such dead task") {
		t.Fatalf("requeueing twice: %d", r.status)
	}
}

func TestConsoleMountsUnderAPrefix(t *testing.T) {
	f := start(t, fixtureOptions{console: console.Options{Prefix: "/ops/chronos/"}})
	b := f.browser()
	body := b.ok("/")
	contains(t, "overview", body, `href="/ops/chronos/schedules"`, `src="/ops/chronos/static/console.js?v=`)
	r := b.get("") // /ops/chronos without the slash
	if !strings.HasSuffix(r.url, "/ops/chronos/") || r.status != 200 {
		t.Fatalf("GET /ops/chronos: %d at %s", r.status, r.url)
	}
	r = b.submit("/queues", "/queues/default/pause", url.Values{"return": {"/ops/chronos/queues"}})
	if r.status != http.StatusOK || !strings.HasSuffix(r.url, "/ops/chronos/queues") {
		t.Fatalf("pause under a prefix: %d at %s", r.status, r.url)
	}
	for _, c := range b.c.Jar.Cookies(mustURL(f.http.URL + "/ops/chronos/")) {
		if c.Name == "chronos_csrf" {
			return
		}
	}
	t.Fatal("no CSRF cookie for the prefix")
}

func TestAReturnAddressOutsideTheConsoleIsIgnored(t *testing.T) {
	f := start(t, fixtureOptions{noSched: true})
	b := f.browser()
	// Redirects are not followed: the test reads where they point.
	b.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, ret := range []string{"https://elsewhere.invalid/", "//elsewhere.invalid/x", "javascript:alert(1)", "/queues"} {
		r := b.submit("/queues", "/queues/default/resume", url.Values{"return": {ret}})
		want := "/queues"
		if r.status != http.StatusSeeOther || r.header.Get("Location") != want {
			t.Errorf("return %q: %d to %q, want %d to %q", ret, r.status, r.header.Get("Location"), http.StatusSeeOther, want)
		}
	}
}

func TestTriggerSaysHowPausesAndAMissingLeaderShapeTheRequest(t *testing.T) {
	f := start(t, fixtureOptions{})
	f.waitLeader()
	ctx := context.Background()
	b := f.browser()
	must(t, f.insp.PauseSchedule(ctx, "nightly", chronos.PauseOptions{Job: "orders"}))
	must(t, f.insp.PauseSchedule(ctx, "reports.daily", chronos.PauseOptions{}))
	contains(t, "trigger of a group with a paused job", b.submit("/schedules", "/schedules/nightly/trigger", nil).body,
		"Paused jobs are left out: orders.")
	contains(t, "trigger of a paused schedule", b.submit("/schedules", "/schedules/reports.daily/trigger", nil).body,
		"The schedule is paused; a request fires it anyway.")
	must(t, f.sched.Shutdown(ctx))
	contains(t, "trigger without a leader", b.submit("/schedules", "/schedules/manual/trigger", nil).body,
		"No scheduler leads now: the request waits until one does.")
}
