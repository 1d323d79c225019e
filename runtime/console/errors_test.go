package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/console"
)

// noStack fails the test if a page shows a Go stack or panic.
func noStack(t *testing.T, what, body string) {
	t.Helper()
	for _, s := range []string{"goroutine ", "runtime/debug", ".go:", "panic("} {
		if strings.Contains(body, s) {
			t.Errorf("%s shows %q:\n%s", what, s, body)
		}
	}
}

func TestBadIDsGetANotFoundPage(t *testing.T) {
	f := start(t, fixtureOptions{noSched: true})
	b := f.browser()
	for path, want := range map[string]string{
		"/schedules/nope":                         "No such schedule",
		"/schedules/nope/backfill":                "No such schedule",
		"/schedules/nope/retire":                  "No such schedule",
		"/tasks/01M8PTDD629YQSSEH54S6ZHNPK":       "No such task",
		"/tasks/not-an-id":                        "No such task",
		"/dead/01M8PTDD629YQSSEH54S6ZHNPK/delete": "No such dead task",
	} {
		r := b.get(path)
		if r.status != http.StatusNotFound || !strings.Contains(r.body, want) {
			t.Errorf("GET %s: %d, want 404 %q\n%s", path, r.status, want, r.body)
		}
		noStack(t, path, r.body)
	}
	for path, want := range map[string]string{
		"/schedules/nope/pause":   "No such schedule",
		"/schedules/nope/resume":  "No such schedule",
		"/schedules/nope/trigger": "No such schedule",
		"/dead/NOPE/requeue":      "No such dead task",
	} {
		r := b.submit("/queues", path, url.Values{})
		if r.status != http.StatusNotFound || !strings.Contains(r.body, want) {
			t.Errorf("POST %s: %d, want 404 %q\n%s", path, r.status, want, r.body)
		}
	}
}

func TestARedisOutageGetsAServiceUnavailablePage(t *testing.T) {
	f := start(t, fixtureOptions{noSched: true, console: console.Options{Timeout: 2 * time.Second}})
	if f.redis.External() {
		t.Skip("REDIS_URL is set: this test must stop its Redis")
	}
	b := f.browser()
	tok := b.token("/queues")
	f.redis.Stop()
	for _, path := range []string{"/", "/schedules", "/schedules/tick", "/queues", "/tasks", "/dead", "/tasks/X"} {
		r := b.get(path)
		if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "Redis is unavailable") {
			t.Errorf("GET %s with Redis down: %d\n%s", path, r.status, r.body)
		}
		noStack(t, path, r.body)
	}
	// An action that fails says why, and the live script gets one line.
	r := b.post("/queues/default/pause", url.Values{"csrf_token": {tok}})
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "could not read or write Redis") {
		t.Errorf("POST with Redis down: %d\n%s", r.status, r.body)
	}
	req, _ := http.NewRequest(http.MethodGet, f.base+"/", nil)
	req.Header.Set("X-Chronos-Live", "1")
	if r := b.do(req); r.status != http.StatusServiceUnavailable || !strings.HasPrefix(r.body, "Redis is unavailable: ") ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Errorf("live update with Redis down: %d %q", r.status, r.body)
	}
	f.redis.Restart()
	eventually(t, "the console to recover", func() bool { return b.get("/queues").status == http.StatusOK })
}

// panicky is a health source with a bug.
type panicky struct{}

func (panicky) ScheduleHealth(context.Context, []string) (map[string]console.Health, error) {
	panic("health source bug")
}

func TestAPanicRendersAnErrorPageWithoutAStack(t *testing.T) {
	f := start(t, fixtureOptions{noSched: true, console: console.Options{Health: panicky{}}})
	r := f.browser().get("/")
	if r.status != http.StatusInternalServerError || !strings.Contains(r.body, "Internal error") {
		t.Fatalf("GET / with a panicking handler: %d\n%s", r.status, r.body)
	}
	noStack(t, "the panic page", r.body)
	if !strings.Contains(f.logs.String(), "health source bug") || !strings.Contains(f.logs.String(), "stack=") {
		t.Fatalf("the panic and its stack are not in the log:\n%s", f.logs.String())
	}
}
