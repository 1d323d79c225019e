package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// contains fails the test unless body has every one of wants.
func contains(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
	if t.Failed() {
		t.Logf("%s:\n%s", what, body)
		t.FailNow()
	}
}

func TestEveryPageHasAStableURL(t *testing.T) {
	f := start(t, fixtureOptions{})
	f.waitLeader()
	b := f.browser()
	contains(t, "overview", b.ok("/"), "sched-a", `id="leader-instance"`, "v1.2.3", "alive")
	contains(t, "schedules", b.ok("/schedules"), "tick", "reports.daily", "nightly", "at 02:00 every day",
		"Asia/Seoul", "jobs.go:42", "group nightly", "every second")
	contains(t, "schedule", b.ok("/schedules/reports.daily"), "Definition in force", "sched-a", "v1.2.3",
		"Next 10 fire times", "KST", "Firing history", "Runs")
	contains(t, "backfill form", b.ok("/schedules/reports.daily/backfill"), "Dry run")
	contains(t, "queues", b.ok("/queues"), `data-queue="default"`, `data-queue="exports"`)
	contains(t, "tasks", b.ok("/tasks"), "ready tasks of queue")
	contains(t, "tasks delayed", b.ok("/tasks?queue=exports&state=delayed"), "delayed tasks of queue")
	contains(t, "dead letters", b.ok("/dead"), "0 dead letters")
	if r := b.get("/static/console.css"); r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/css") {
		t.Errorf("console.css: %d %s", r.status, r.header.Get("Content-Type"))
	}
	if r := b.get("/static/console.js"); r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/javascript") {
		t.Errorf("console.js: %d %s", r.status, r.header.Get("Content-Type"))
	}
}

func TestScheduleIDsAreEscapedInLinks(t *testing.T) {
	f := start(t, fixtureOptions{noSched: true})
	s := chronos.NewScheduler(f.redis.NewClient(nil), chronos.SchedulerConfig{InstanceID: "x", Logger: f.consoleLogger()})
	// The default ID holds spaces, '?', '@' and '/': "report@cron:0 0 2 * * ?@Europe/Paris".
	must(t, chronos.RegisterCron(s, "0 0 2 * * ?", report{}, chronos.WithTimeZone("Europe/Paris")))
	must(t, s.Start(context.Background()))
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	id := "report@cron:0 0 2 * * ?@Europe/Paris"
	b := f.browser()
	contains(t, "schedules", b.ok("/schedules"), `href="/schedules/report@cron:0%200%202%20%2A%20%2A%20%3F@Europe%2FParis"`)
	contains(t, "schedule", b.ok("/schedules/"+url.PathEscape(id)), "Europe/Paris", "CET")
}

func TestOverviewShowsNoLeaderAndStaleInstances(t *testing.T) {
	// The console's clock runs 12 s ahead: past StaleAfter (10 s) since the
	// last heartbeat, which Redis still counts as live.
	later := time.Now().Add(12 * time.Second)
	f := start(t, fixtureOptions{console: optsNow(func() time.Time { return later })})
	f.waitLeader()
	b := f.browser()
	contains(t, "overview a little in the future", b.ok("/"), "stale", `id="leader-since"`)

	g := start(t, fixtureOptions{noSched: true})
	contains(t, "overview without a scheduler", g.browser().ok("/"), "nobody leads", "No live scheduler instance.")
}

func TestQueuesPauseAndResumeClusterWide(t *testing.T) {
	f := start(t, fixtureOptions{noSched: true})
	b := f.browser()
	ctx := context.Background()
	r := b.submit("/queues", "/queues/exports/pause", nil)
	contains(t, "after pausing", r.body, "Paused queue exports")
	if info, _ := f.insp.QueueInfo(ctx, "exports"); !info.Paused {
		t.Fatal("queue exports is not paused in Redis")
	}
	contains(t, "queues", b.ok("/queues"), `<span class="paused">paused</span>`)
	b.submit("/queues", "/queues/exports/resume", nil)
	if info, _ := f.insp.QueueInfo(ctx, "exports"); info.Paused {
		t.Fatal("queue exports is still paused")
	}
}

func TestQueuesShowDepthDeadAndRates(t *testing.T) {
	f := start(t, fixtureOptions{noSched: true})
	ctx := context.Background()
	_, err := f.client.Enqueue(ctx, report{}, chronos.WithQueue("exports"), chronos.WithProcessIn(time.Hour))
	must(t, err)
	_, err = f.client.Enqueue(ctx, doomed{})
	must(t, err)
	_, err = f.client.Enqueue(ctx, report{})
	must(t, err)
	eventually(t, "a dead letter and a success", func() bool { return f.ranOf("doomed") == 1 && f.ranOf("report") == 1 })
	eventually(t, "their run records", func() bool {
		r, _ := f.insp.QueueRates(ctx, time.Minute)
		return r["default"] != nil && r["default"].Dead == 1 && r["default"].Succeeded == 1
	})
	body := f.browser().ok("/queues")
	row := between(body, `data-queue="default"`, "</tr>")
	contains(t, "default row", row, `<td class="num">1 / 0 / 1</td>`, `>1</a></td>`) // ok / retried / dead; 1 dead letter
	contains(t, "exports row", between(body, `data-queue="exports"`, "</tr>"), `state=delayed">1</a>`)
}

// between returns the part of s from the first from up to the next to.
func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	in, _, _ := strings.Cut(rest, to)
	return in
}

func TestWrongMethodsAndUnknownPathsGetPages(t *testing.T) {
	f := start(t, fixtureOptions{noSched: true})
	b := f.browser()
	r := b.get("/nope")
	if r.status != http.StatusNotFound || !strings.Contains(r.body, "No page at /nope") {
		t.Errorf("GET /nope: %d\n%s", r.status, r.body)
	}
	r = b.get("/schedules/x/pause")
	if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" || !strings.Contains(r.body, "Method not allowed") {
		t.Errorf("GET of an action: %d Allow=%q\n%s", r.status, r.header.Get("Allow"), r.body)
	}
	r = b.post("/schedules", nil)
	if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST of a page: %d Allow=%q", r.status, r.header.Get("Allow"))
	}
	for path, want := range map[string]string{
		"/schedules?status=weird":                     "Unknown status filter",
		"/tasks?state=dead":                           "Unknown state",
		"/tasks?offset=-1":                            "Offset",
		"/schedules/x/backfill?from=yesterday&to=now": "No such schedule",
	} {
		r := b.get(path)
		if r.status/100 != 4 || !strings.Contains(r.body, want) {
			t.Errorf("GET %s: %d, want a 4xx page saying %q\n%s", path, r.status, want, r.body)
		}
	}
}

func TestNewQueuesAppearWithinFiveSeconds(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f := start(t, fixtureOptions{noSched: true, console: optsNow(clock)})
	b := f.browser()
	if strings.Contains(b.ok("/queues"), `data-queue="fresh"`) {
		t.Fatal("queue fresh listed before it exists")
	}
	_, err := f.client.Enqueue(context.Background(), report{}, chronos.WithQueue("fresh"))
	must(t, err)
	if strings.Contains(b.ok("/queues"), `data-queue="fresh"`) {
		t.Fatal("the queue names were scanned again within 5 s")
	}
	mu.Lock()
	now = now.Add(5 * time.Second)
	mu.Unlock()
	contains(t, "queues 5 s later", b.ok("/queues"), `data-queue="fresh"`)
}

// The overview names the leader of every partition of a partitioned
// namespace, with its epoch and the start of its term, and the partitions
// each instance leads; a namespace of a single partition has no table.
func TestOverviewShowsTheLeaderOfEveryPartition(t *testing.T) {
	f := start(t, fixtureOptions{})
	f.waitLeader()
	ls, err := f.insp.SchedulerLeaders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	body := f.browser().ok("/")
	if len(ls) == 1 {
		if strings.Contains(body, `id="partitions"`) {
			t.Fatal("a partitions table for a namespace of a single partition")
		}
		return
	}
	var want []string
	for _, l := range ls {
		want = append(want, fmt.Sprintf(`<tr data-partition="%d"><td>%d</td><td><code>sched-a</code></td><td>%d</td><td><time datetime="%s">`,
			l.Partition, l.Partition, l.Epoch, l.Since.UTC().Format(time.RFC3339)))
	}
	contains(t, "overview", body, append(want, "leads partition 0 of 12", `<td class="leads">0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11</td>`)...)
}
