package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chronos-go/chronos/runtime/console"
)

func TestEveryResponseCarriesTheSecurityHeaders(t *testing.T) {
	f := start(t, fixtureOptions{noSched: true})
	b := f.browser()
	want := map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
			"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		"X-Content-Type-Options": "nosniff",
		"X-Frame-Options":        "DENY",
		"Referrer-Policy":        "same-origin",
	}
	for _, path := range []string{"/", "/schedules/nope", "/static/console.js", "/nope"} {
		r := b.get(path)
		for h, v := range want {
			if got := r.header.Get(h); got != v {
				t.Errorf("GET %s (%d): %s = %q, want %q", path, r.status, h, got, v)
			}
		}
	}
	if cc := b.get("/schedules").header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("a page has Cache-Control %q, want no-store", cc)
	}
	// No inline script or style for the policy to forbid.
	body := b.ok("/")
	for _, bad := range []string{"<script>", "style=", "onclick", "javascript:"} {
		if strings.Contains(body, bad) {
			t.Errorf("the overview contains %q, which the CSP refuses", bad)
		}
	}
}

func TestAPostWithoutTheCSRFTokenIsRefusedAndChangesNothing(t *testing.T) {
	f := start(t, fixtureOptions{})
	b := f.browser()
	ctx := context.Background()
	// A real session: the first page sets the CSRF cookie, out of reach of
	// scripts and of other sites.
	first := b.get("/schedules")
	if ck := first.header.Get("Set-Cookie"); !strings.HasPrefix(ck, "chronos_csrf=") || !strings.Contains(ck, "HttpOnly") ||
		!strings.Contains(ck, "SameSite=Strict") || !strings.Contains(ck, "Path=/") {
		t.Fatalf("CSRF cookie: %q", ck)
	}

	r := b.post("/schedules/tick/pause", url.Values{"note": {"no token"}})
	if r.status != http.StatusForbidden || !strings.Contains(r.body, "Missing CSRF token") {
		t.Fatalf("POST without a token: %d\n%s", r.status, r.body)
	}
	r = b.post("/schedules/tick/pause", url.Values{"csrf_token": {"forged"}})
	if r.status != http.StatusForbidden || !strings.Contains(r.body, "Stale form") {
		t.Fatalf("POST with a forged token: %d\n%s", r.status, r.body)
	}
	// A console restarted without Options.CSRFKey has a new key: the forms
	// of pages rendered by the old one are stale.
	stale := b.token("/schedules")
	restarted := console.New(f.insp, console.Options{Logger: f.consoleLogger()})
	req, _ := http.NewRequest(http.MethodPost, "/schedules/tick/pause", strings.NewReader(url.Values{"csrf_token": {stale}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range b.c.Jar.Cookies(mustURL(f.base)) {
		req.AddCookie(c)
	}
	w := &recorder{header: http.Header{}}
	restarted.ServeHTTP(w, req)
	if w.status != http.StatusForbidden || !strings.Contains(w.body.String(), "Reload the page") {
		t.Fatalf("POST with a token of another key: %d\n%s", w.status, w.body.String())
	}
	// A request from another site is refused even with a token.
	req, _ = http.NewRequest(http.MethodPost, f.base+"/schedules/tick/pause",
		strings.NewReader(url.Values{"csrf_token": {b.token("/schedules")}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if r := b.do(req); r.status != http.StatusForbidden || !strings.Contains(r.body, "Cross-origin request refused") {
		t.Fatalf("cross-site POST: %d\n%s", r.status, r.body)
	}
	if s, _ := f.insp.Schedule(ctx, "tick"); s.Paused != nil {
		t.Fatalf("a refused request paused the schedule: %+v", s.Paused)
	}
	// The same form with the page's token goes through.
	r = b.submit("/schedules", "/schedules/tick/pause", url.Values{"note": {"with token"}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "Paused schedule tick") {
		t.Fatalf("POST with the token: %d\n%s", r.status, r.body)
	}
	if s, _ := f.insp.Schedule(ctx, "tick"); s.Paused == nil || s.Paused.Note != "with token" || s.Paused.Who != "console" {
		t.Fatalf("pause = %+v", s.Paused)
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func TestCSRFKeySharedByReplicasAcceptsEachOthersForms(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	f := start(t, fixtureOptions{console: console.Options{CSRFKey: key}})
	b := f.browser()
	tok := b.token("/queues")
	other := console.New(f.insp, console.Options{CSRFKey: key, Logger: f.consoleLogger()})
	req, _ := http.NewRequest(http.MethodPost, "/queues/default/pause", strings.NewReader(url.Values{"csrf_token": {tok}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range b.c.Jar.Cookies(mustURL(f.base)) {
		req.AddCookie(c)
	}
	w := &recorder{header: http.Header{}}
	other.ServeHTTP(w, req)
	if w.status != http.StatusSeeOther {
		t.Fatalf("a replica with the same key answered %d", w.status)
	}
}

// recorder is a minimal http.ResponseWriter.
type recorder struct {
	header http.Header
	status int
	body   strings.Builder
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(s int) { r.status = s }

func TestReadOnlyConsoleShowsNoActionAndRefusesThem(t *testing.T) {
	f := start(t, fixtureOptions{console: console.Options{ReadOnly: true}})
	f.waitLeader()
	b := f.browser()
	for _, path := range []string{"/", "/schedules", "/schedules/nightly", "/queues", "/dead"} {
		body := b.ok(path)
		if strings.Contains(body, `method="post"`) || strings.Contains(body, "csrf_token") {
			t.Errorf("read-only page %s has a form that changes something", path)
		}
		contains(t, path, body, `id="read-only"`)
	}
	r := b.post("/schedules/tick/pause", url.Values{"csrf_token": {"x"}})
	if r.status != http.StatusForbidden || !strings.Contains(r.body, "read-only") {
		t.Fatalf("POST to a read-only console: %d\n%s", r.status, r.body)
	}
}

func TestBasicAndBearerAuthGuardEveryPageAndAreNeverLogged(t *testing.T) {
	const pass, token = "s3cret-pass", "t0ken-value"
	f := start(t, fixtureOptions{console: console.Options{BasicAuth: console.BasicAuth{User: "alice", Password: pass}, BearerToken: token}})
	b := f.browser()
	for _, path := range []string{"/", "/static/console.css", "/schedules/tick"} {
		r := b.get(path)
		if r.status != http.StatusUnauthorized || !strings.Contains(r.header.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("GET %s without credentials: %d %q", path, r.status, r.header.Get("WWW-Authenticate"))
		}
	}
	b.user, b.pass = "alice", "wrong"
	if r := b.get("/"); r.status != http.StatusUnauthorized {
		t.Errorf("wrong password: %d", r.status)
	}
	b.pass = pass
	b.ok("/")
	// The operator is named after the basic-auth user.
	r := b.submit("/schedules", "/schedules/tick/pause", url.Values{"note": {"maintenance"}})
	if r.status != http.StatusOK {
		t.Fatalf("pause: %d", r.status)
	}
	if s, _ := f.insp.Schedule(context.Background(), "tick"); s.Paused == nil || s.Paused.Who != "alice" {
		t.Fatalf("pause by %+v, want alice", s.Paused)
	}

	req, _ := http.NewRequest(http.MethodGet, f.base+"/queues", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if r := f.browser().do(req); r.status != http.StatusOK {
		t.Errorf("bearer token: %d", r.status)
	}
	req.Header.Set("Authorization", "Bearer nope")
	if r := f.browser().do(req); r.status != http.StatusUnauthorized {
		t.Errorf("wrong bearer token: %d", r.status)
	}
	if logs := f.logs.String(); strings.Contains(logs, pass) || strings.Contains(logs, token) || strings.Contains(logs, "wrong") {
		t.Fatalf("a credential reached the log:\n%s", logs)
	}
	if !strings.Contains(f.logs.String(), "who=alice") {
		t.Fatalf("the pause is not in the log with its operator:\n%s", f.logs.String())
	}
}
