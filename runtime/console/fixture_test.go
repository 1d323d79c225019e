package console_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/console"
	"github.com/chronos-go/chronos/runtime/internal/leader"
)

// The task kinds of the fixture's schedules and tasks.
type (
	tick    struct{}
	witness struct{}
	report  struct {
		Format string `json:"format"`
	}
	flaky  struct{ N int }
	doomed struct{}
)

func (tick) Kind() string    { return "tick" }
func (witness) Kind() string { return "witness" }
func (report) Kind() string  { return "report" }
func (flaky) Kind() string   { return "flaky" }
func (doomed) Kind() string  { return "doomed" }

// waitTimeout bounds every wait; reaching it is a failure, never a
// measurement.
const waitTimeout = 30 * time.Second

// fixture is a private redis-server with a running Scheduler (instance
// "sched-a", version v1.2.3, 1 s lease) and a worker Server, and the
// console over them behind an httptest server on 127.0.0.1.
//
// Its schedules:
//
//	tick           every 1s                     (paused and resumed by the tests)
//	witness        every 1s                     (never paused: proves the leader fires)
//	reports.daily  cron 0 0 2 * * ? Asia/Seoul  declared at jobs.go:42
//	nightly        group "users", "orders"      cron 0 30 3 * * ?
//	manual         cron in 2099                 (fired only by "trigger now")
//
// flaky tasks fail their first run without retry (so they die) and
// succeed after; doomed tasks always die.
type fixture struct {
	t       *testing.T
	redis   *redistest.Server
	rdb     redis.UniversalClient
	insp    *chronos.Inspector
	client  *chronos.Client
	sched   *chronos.Scheduler
	console *console.Console
	http    *httptest.Server
	logs    *syncBuffer // the console's log
	base    string      // http.URL + prefix

	mu    sync.Mutex
	flaky int
	runs  map[string]int // by kind
}

type fixtureOptions struct {
	console console.Options
	noSched bool // no scheduler: for tests that need none running
}

func start(t *testing.T, fo fixtureOptions) *fixture {
	t.Helper()
	s := redistest.Start(t)
	markTestLayout(t, s.Client())
	f := &fixture{t: t, redis: s, rdb: s.Client(), runs: map[string]int{}, logs: &syncBuffer{}}
	f.insp = chronos.NewInspector(f.rdb)
	f.client = chronos.NewClient(f.rdb)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	if !fo.noSched {
		f.sched = chronos.NewScheduler(s.NewClient(nil), chronos.SchedulerConfig{
			InstanceID: "sched-a", Version: "v1.2.3", LeaderTTL: time.Second, Logger: quiet,
		})
		must(t, chronos.RegisterInterval(f.sched, time.Second, tick{}, chronos.WithScheduleID("tick"), chronos.WithSource("ticks.go", 7)))
		must(t, chronos.RegisterInterval(f.sched, time.Second, witness{}, chronos.WithScheduleID("witness")))
		must(t, chronos.RegisterCron(f.sched, "0 0 2 * * ?", report{Format: "pdf"}, chronos.WithScheduleID("reports.daily"),
			chronos.WithTimeZone("Asia/Seoul"), chronos.WithMisfire("doNothing"), chronos.WithSource("jobs.go", 42)))
		g := chronos.NewGroup(f.sched, "nightly", chronos.CronTrigger("0 30 3 * * ?"))
		must(t, chronos.AddJob(g, "users", report{Format: "users"}))
		must(t, chronos.AddJob(g, "orders", report{Format: "orders"}, chronos.WithQueue("exports")))
		must(t, chronos.RegisterCron(f.sched, "0 0 0 1 1 ? 2099", report{Format: "manual"}, chronos.WithScheduleID("manual")))
	}

	mux := chronos.NewMux()
	count := func(kind string) {
		f.mu.Lock()
		f.runs[kind]++
		f.mu.Unlock()
	}
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[tick]) error { count("tick"); return nil })
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[witness]) error { count("witness"); return nil })
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[report]) error { count("report"); return nil })
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[flaky]) error {
		count("flaky")
		f.mu.Lock()
		defer f.mu.Unlock()
		f.flaky++
		if f.flaky == 1 {
			return fmt.Errorf("disk full: %w", chronos.ErrSkipRetry)
		}
		return nil
	})
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[doomed]) error {
		count("doomed")
		return fmt.Errorf("always fails: %w", chronos.ErrSkipRetry)
	})
	srv := chronos.NewServer(s.NewClient(nil), chronos.ServerConfig{
		Logger: quiet, TaskLogger: quiet, Queues: map[string]int{"default": 2, "exports": 1},
	})
	must(t, srv.Start(context.Background(), mux))
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	if f.sched != nil {
		must(t, f.sched.Start(context.Background()))
		t.Cleanup(func() { _ = f.sched.Shutdown(context.Background()) })
	}

	opts := fo.console
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	f.console = console.New(f.insp, opts)
	root := http.NewServeMux()
	root.Handle(strings.TrimRight(opts.Prefix, "/")+"/", f.console)
	f.http = httptest.NewServer(root)
	t.Cleanup(f.http.Close)
	f.base = f.http.URL + strings.TrimRight(opts.Prefix, "/")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("console log:\n%s", f.logs.String())
		}
	})
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) ranOf(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[kind]
}

// waitLeader waits until the scheduler leads.
func (f *fixture) waitLeader() {
	f.t.Helper()
	eventually(f.t, "sched-a to lead every partition", func() bool {
		ls, err := f.insp.SchedulerLeaders(context.Background())
		for _, l := range ls {
			if l.InstanceID != "sched-a" {
				return false
			}
		}
		return err == nil && len(ls) > 0
	})
}

// markTestLayout marks the default namespace as one written by a version
// before partitions (layout 1, the single hash tag), with the leader epoch
// counter those versions write, when the tests run with
// CHRONOS_TEST_LAYOUT=1; by default they run in a new namespace's 12
// partitions.
func markTestLayout(t *testing.T, c redis.UniversalClient) {
	t.Helper()
	if os.Getenv("CHRONOS_TEST_LAYOUT") != "1" {
		return
	}
	if err := c.SetNX(context.Background(), leader.KeysFor("").Epoch, 0, 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// firings returns the firing records of schedule id with source src
// ("" for any), newest first.
func (f *fixture) firings(id, src string) []*chronos.FiringRecord {
	f.t.Helper()
	hist, err := f.insp.ScheduleHistory(context.Background(), id, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []*chronos.FiringRecord
	for _, h := range hist {
		if src == "" || h.Source == src {
			out = append(out, h)
		}
	}
	return out
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// browser is an HTTP client with a cookie jar, as a browser without
// JavaScript would use the console.
type browser struct {
	t    *testing.T
	f    *fixture
	c    *http.Client
	user string // basic auth, if set
	pass string
}

func (f *fixture) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: f.t, f: f, c: &http.Client{Jar: jar, Timeout: waitTimeout}}
}

// response is what a request got, after redirects.
type response struct {
	status int
	header http.Header
	body   string
	url    string // after redirects
}

func (b *browser) do(req *http.Request) response {
	b.t.Helper()
	if b.user != "" {
		req.SetBasicAuth(b.user, b.pass)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(body), url: resp.Request.URL.String()}
}

// get fetches a console path (relative to the prefix).
func (b *browser) get(path string) response {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.f.base+path, nil)
	return b.do(req)
}

// ok fetches path and fails the test unless it answers 200.
func (b *browser) ok(path string) string {
	b.t.Helper()
	r := b.get(path)
	if r.status != http.StatusOK {
		b.t.Fatalf("GET %s: %d\n%s", path, r.status, r.body)
	}
	return r.body
}

var tokenRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// token is the CSRF token of the forms of the page at path.
func (b *browser) token(path string) string {
	b.t.Helper()
	m := tokenRE.FindStringSubmatch(b.ok(path))
	if m == nil {
		b.t.Fatalf("page %s has no CSRF token", path)
	}
	return m[1]
}

// post submits form values to a console path, as a form would.
func (b *browser) post(path string, values url.Values) response {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.f.base+path, strings.NewReader(values.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// submit posts values with the CSRF token of the page at from.
func (b *browser) submit(from, path string, values url.Values) response {
	b.t.Helper()
	if values == nil {
		values = url.Values{}
	}
	values.Set("csrf_token", b.token(from))
	return b.post(path, values)
}

// syncBuffer is a bytes.Buffer safe for concurrent writers (log handlers).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (f *fixture) consoleLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(f.logs, nil))
}

func optsNow(now func() time.Time) console.Options { return console.Options{Now: now} }
