package console_test

import (
	"context"
	"flag"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/console"
)

// updateDocs rewrites the screenshot the README and docs/console.md show.
var updateDocs = flag.Bool("update-screenshot", false, "write docs/console.png from the browser test")

// chromium finds the browser: $CHRONOS_CHROMIUM, else Debian's chromium or
// another Chrome on PATH.
func chromium() (string, bool) {
	if p := os.Getenv("CHRONOS_CHROMIUM"); p != "" {
		return p, true
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// newTab starts a headless Chromium for the test and returns a tab in it.
// Without Chromium the test is skipped, saying so, except in CI, where
// the test setup installs it and its absence is a failure.
func newTab(t *testing.T) context.Context {
	t.Helper()
	path, ok := chromium()
	if !ok {
		msg := "headless Chromium is not installed, so the browser test cannot run: install Debian's chromium " +
			"(scripts/ensure-chromium.sh, run by `make test` as root) or set CHRONOS_CHROMIUM to a Chrome binary"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	profile := t.TempDir()
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1440, 1000),
	)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelTab)
	// The first action starts the browser; it must not run under a timeout.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start Chromium (%s): %v", path, err)
	}
	return ctx
}

// artifacts is where the test saves its screenshots: $CHRONOS_ARTIFACTS
// (make test sets artifacts/console), else a new temporary directory. When
// the test ends it writes index.html there, listing the screenshots of
// this run with the step that took each, and says where on stderr as well
// as in the log: go test hides the log of a test that passed.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CHRONOS_ARTIFACTS")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "chronos-console-screenshots-"); err != nil {
			t.Fatal(err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	t.Logf("screenshots in %s", dir)
	t.Cleanup(func() {
		index := filepath.Join(dir, "index.html")
		if err := os.WriteFile(index, screenshotIndex(t), 0o644); err != nil {
			t.Errorf("write the screenshot index: %v", err)
			return
		}
		fmt.Fprintf(os.Stderr, "%s: screenshots in %s\n", t.Name(), index)
	})
	return dir
}

// shot is a screenshot the test saved: its file and the step that took it.
type shot struct{ file, step string }

var (
	shotsMu sync.Mutex
	shots   []shot
)

// screenshotIndex is index.html for the screenshots of this run.
func screenshotIndex(t *testing.T) []byte {
	shotsMu.Lock()
	defer shotsMu.Unlock()
	outcome := "passed"
	if t.Failed() {
		outcome = "failed"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html>\n<meta charset=utf-8>\n<title>%s</title>\n<h1>%s: %s, %s</h1>\n",
		html.EscapeString(t.Name()), html.EscapeString(t.Name()), outcome, time.Now().UTC().Format(time.RFC3339))
	for _, s := range shots {
		fmt.Fprintf(&b, "<h2>%s</h2>\n<p>%s</p>\n<img src=\"%s\" style=\"max-width:100%%;border:1px solid #ccc\">\n",
			html.EscapeString(s.file), html.EscapeString(s.step), html.EscapeString(s.file))
	}
	return []byte(b.String())
}

// step runs browser actions under a timeout, failing the test with what
// it was doing.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitJS waits until the JavaScript expression is true in the page. It
// evaluates it every 50 ms, so it survives the navigation of a form
// submission; an expression that throws (its element is not there yet)
// counts as false.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	var last error
	for time.Now().Before(deadline) {
		ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, err := chromedp.Run(ectx, chromedp.Evaluate[bool]("!!("+expr+")"))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	body, _ := chromedp.Run(ectx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	t.Fatalf("timed out waiting for %s (%s; last error %v); page text:\n%s", what, expr, last, body)
}

func evalJS[T any](t *testing.T, ctx context.Context, expr string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	shotsMu.Lock()
	shots = append(shots, shot{file: name, step: t.Name()})
	shotsMu.Unlock()
	return png
}

// rowSel is the CSS selector of schedule id's row on the schedule list.
func rowSel(id string) string { return fmt.Sprintf(`tr[data-schedule=%q]`, id) }

// openActions opens the actions of schedule id's row, as an operator
// clicks "Actions". A live update may replace the row just before the
// click; the click lands on the replacement, and is retried until the
// actions are open (an open row is not replaced).
func openActions(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	sel := rowSel(id) + " details.actions"
	for try := 0; ; try++ {
		step(t, ctx, "click Actions of "+id, chromedp.Click(chromedp.CSS(sel+" summary"), chromedp.NodeVisible))
		if evalJS[bool](t, ctx, fmt.Sprintf(`document.querySelector(%q).open`, sel)) {
			return
		}
		if try == 5 {
			t.Fatalf("the actions of %s do not open", id)
		}
	}
}

// flash waits for the message an action left on the page it returned to.
func flash(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	waitJS(t, ctx, "the message "+text, fmt.Sprintf(`document.getElementById("flash").textContent.includes(%q)`, text))
}

// TestConsoleInARealBrowser drives the console in headless Chromium
// against a real Scheduler and Server on a real redis-server, as an
// operator would, and saves screenshots of what they saw.
func TestConsoleInARealBrowser(t *testing.T) {
	f := start(t, fixtureOptions{console: console.Options{Namespace: "chronos", RefreshInterval: 500 * time.Millisecond}})
	ctx := context.Background()
	dead, err := f.client.Enqueue(ctx, flaky{N: 1})
	must(t, err)
	eventually(t, "a dead letter to requeue", func() bool { _, err := f.insp.GetDead(ctx, dead.ID); return err == nil })
	f.waitLeader()
	tab := newTab(t)
	dir := artifacts(t)

	t.Run("the overview shows the leader", func(t *testing.T) {
		step(t, tab, "open the overview", chromedp.Navigate(f.base+"/"))
		waitJS(t, tab, "the leader", `document.getElementById("leader-instance").textContent === "sched-a"`)
		waitJS(t, tab, "the live instance", `document.querySelector('tr[data-instance="sched-a"]').textContent.includes("alive")`)
		waitJS(t, tab, "live updates running", `document.getElementById("live-status").textContent.startsWith("live")`)
		screenshot(t, tab, dir, "overview.png")
	})

	// witnessed waits until the witness schedule (every second, never
	// paused) has n more firings than now: proof that the leader kept
	// firing meanwhile.
	witnessed := func(t *testing.T, n int) {
		t.Helper()
		base := len(f.firings("witness", "trigger"))
		eventually(t, fmt.Sprintf("%d more firings of the witness", n), func() bool { return len(f.firings("witness", "trigger")) >= base+n })
	}

	t.Run("pausing a schedule stops the leader enqueuing it", func(t *testing.T) {
		step(t, tab, "open the schedules", chromedp.Navigate(f.base+"/schedules"), chromedp.WaitVisible(chromedp.CSS(rowSel("tick"))))
		eventually(t, "tick to fire", func() bool { return len(f.firings("tick", "trigger")) > 0 })
		openActions(t, tab, "tick")
		// While its actions are open the row is left alone; other rows of
		// the same table keep updating.
		evalJS[bool](t, tab, fmt.Sprintf(`document.querySelector(%q).__kept = true`, rowSel("tick")+" details.actions"))
		witnessLast := evalJS[string](t, tab, fmt.Sprintf(`document.querySelector(%q).cells[3].textContent`, rowSel("witness")))
		waitJS(t, tab, "the witness row to update", fmt.Sprintf(`document.querySelector(%q).cells[3].textContent !== %q`, rowSel("witness"), witnessLast))
		if !evalJS[bool](t, tab, fmt.Sprintf(`document.querySelector(%q).__kept === true`, rowSel("tick")+" details.actions")) {
			t.Fatal("the row with open actions was replaced by a live update")
		}
		form := rowSel("tick") + " form.pause"
		step(t, tab, "fill in and submit the pause form",
			chromedp.SendKeys(chromedp.CSS(form+` input[name="note"]`), "browser test"),
			chromedp.Click(chromedp.CSS(form+" button"), chromedp.NodeVisible))
		flash(t, tab, "Paused schedule tick")
		waitJS(t, tab, "the row to show the pause", fmt.Sprintf(`document.querySelector(%q).textContent.includes("browser test")`, rowSel("tick")+" .pause-cell"))
		if s, _ := f.insp.Schedule(ctx, "tick"); s.Paused == nil || s.Paused.Note != "browser test" {
			t.Fatalf("pause in Redis: %+v", s.Paused)
		}
		// The leader reads the pause within a second; a firing it had in
		// flight may still land. After that, while the witness fires three
		// more times, tick must not fire at all.
		witnessed(t, 2)
		before := f.firings("tick", "")
		witnessed(t, 3)
		if after := f.firings("tick", ""); len(after) != len(before) {
			t.Fatalf("tick fired %d times while paused (last: %v)", len(after)-len(before), after[0].Trigger)
		}
		screenshot(t, tab, dir, "schedules-paused.png")
	})

	t.Run("resuming it makes it fire again", func(t *testing.T) {
		resumed := time.Now()
		openActions(t, tab, "tick")
		step(t, tab, "click Resume", chromedp.Click(chromedp.CSS(rowSel("tick")+" form.resume button"), chromedp.NodeVisible))
		flash(t, tab, "Resumed schedule tick")
		eventually(t, "tick to fire after the resume", func() bool {
			fs := f.firings("tick", "")
			return len(fs) > 0 && fs[0].At.After(resumed)
		})
		waitJS(t, tab, "the row to show it unpaused", fmt.Sprintf(`!document.querySelector(%q).textContent.includes("browser test")`, rowSel("tick")+" .pause-cell"))
	})

	t.Run("a change made elsewhere shows without a reload", func(t *testing.T) {
		evalJS[bool](t, tab, `window.__notReloaded = true`)
		must(t, f.insp.PauseSchedule(ctx, "reports.daily", chronos.PauseOptions{Note: "paused from the CLI", Who: "carol"}))
		waitJS(t, tab, "the pause made elsewhere", fmt.Sprintf(`document.querySelector(%q).textContent.includes("paused from the CLI")`, rowSel("reports.daily")))
		if !evalJS[bool](t, tab, `window.__notReloaded === true`) {
			t.Fatal("the page reloaded")
		}
		if *updateDocs {
			evalJS[bool](t, tab, `(window.scrollTo(0, 0), true)`)
			png := screenshot(t, tab, dir, "schedules.png")
			must(t, os.WriteFile(filepath.Join("..", "..", "docs", "console.png"), png, 0o644))
		} else {
			screenshot(t, tab, dir, "schedules.png")
		}
		_, err := f.insp.ResumeSchedule(ctx, "reports.daily", "")
		must(t, err)
	})

	t.Run("live updates can be paused", func(t *testing.T) {
		step(t, tab, "open the schedules", chromedp.Navigate(f.base+"/schedules"), chromedp.WaitVisible(chromedp.CSS(rowSel("nightly"))))
		waitJS(t, tab, "live updates running", `document.getElementById("live-status").textContent.startsWith("live ·")`)
		step(t, tab, "click Pause live updates", chromedp.Click(chromedp.ID("live-toggle"), chromedp.NodeVisible))
		waitJS(t, tab, "the paused state", `document.getElementById("live-status").textContent === "live updates paused"`)
		must(t, f.insp.PauseSchedule(ctx, "nightly", chronos.PauseOptions{Note: "while live is off"}))
		witnessed(t, 2) // two seconds: four refresh intervals
		if evalJS[bool](t, tab, fmt.Sprintf(`document.querySelector(%q).textContent.includes("while live is off")`, rowSel("nightly"))) {
			t.Fatal("the page updated while live updates were paused")
		}
		step(t, tab, "click Resume live updates", chromedp.Click(chromedp.ID("live-toggle"), chromedp.NodeVisible))
		waitJS(t, tab, "the update", fmt.Sprintf(`document.querySelector(%q).textContent.includes("while live is off")`, rowSel("nightly")))
		_, err := f.insp.ResumeSchedule(ctx, "nightly", "")
		must(t, err)
	})

	t.Run("trigger now fires a schedule once", func(t *testing.T) {
		step(t, tab, "open schedule manual", chromedp.Navigate(f.base+"/schedules/manual"), chromedp.WaitVisible(chromedp.ID("history")))
		step(t, tab, "open its actions", chromedp.Click(chromedp.CSS("#state details.actions summary"), chromedp.NodeVisible))
		step(t, tab, "click Trigger now", chromedp.Click(chromedp.CSS("#state form.trigger button"), chromedp.NodeVisible))
		flash(t, tab, "Asked the leader to fire schedule manual once now")
		// The firing appears in the history by itself (live update).
		waitJS(t, tab, "the requested firing in the history", `document.querySelector("#history tbody").textContent.includes("request")`)
		waitJS(t, tab, "its successful run", `document.querySelector("#runs tbody").textContent.includes("success")`)
		if n := len(f.firings("manual", "request")); n != 1 {
			t.Fatalf("%d requested firings, want 1", n)
		}
		step(t, tab, "open the run's task", chromedp.Click(chromedp.CSS("#history a.task-link"), chromedp.NodeVisible))
		waitJS(t, tab, "the task page", `document.getElementById("task-state").textContent.includes("finished")`)
		screenshot(t, tab, dir, "task-finished.png")
		step(t, tab, "open schedule manual again", chromedp.Navigate(f.base+"/schedules/manual"), chromedp.WaitVisible(chromedp.ID("runs")))
		screenshot(t, tab, dir, "schedule.png")
	})

	t.Run("requeueing a dead task runs it again", func(t *testing.T) {
		row := fmt.Sprintf(`tr[data-task=%q]`, dead.ID)
		step(t, tab, "open the dead letters", chromedp.Navigate(f.base+"/dead"), chromedp.WaitVisible(chromedp.CSS(row)))
		screenshot(t, tab, dir, "dead.png")
		step(t, tab, "click Requeue", chromedp.Click(chromedp.CSS(row+" form.requeue button"), chromedp.NodeVisible))
		flash(t, tab, "Requeued "+dead.ID)
		eventually(t, "the requeued task to run", func() bool { return f.ranOf("flaky") == 2 })
		waitJS(t, tab, "the row to go", fmt.Sprintf(`document.querySelector(%q) === null`, row))
		step(t, tab, "open the queues", chromedp.Navigate(f.base+"/queues"), chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="default"]`)))
		screenshot(t, tab, dir, "queues.png")
	})

	t.Run("a POST without the CSRF token is refused", func(t *testing.T) {
		step(t, tab, "open the schedules", chromedp.Navigate(f.base+"/schedules"), chromedp.WaitVisible(chromedp.CSS(rowSel("tick"))))
		// Same origin, with the session cookie, but without the token.
		got := evalJS[string](t, tab, `fetch(`+fmt.Sprintf("%q", f.base+"/schedules/tick/pause")+`, {method: "POST",
			headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "note=forged"})
			.then(r => r.text().then(t => r.status + " " + t))`, chromedp.EvalAwaitPromise)
		if !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "Missing CSRF token") {
			t.Fatalf("POST without the token: %.300s", got)
		}
		if s, _ := f.insp.Schedule(ctx, "tick"); s.Paused != nil {
			t.Fatalf("the refused POST paused tick: %+v", s.Paused)
		}
	})
	t.Run("a failed update says why and keeps the page", func(t *testing.T) {
		if f.redis.External() {
			t.Skip("REDIS_URL is set: this step must stop its Redis")
		}
		step(t, tab, "open the schedules", chromedp.Navigate(f.base+"/schedules"), chromedp.WaitVisible(chromedp.CSS(rowSel("tick"))))
		f.redis.Stop()
		waitJS(t, tab, "the failure in the header", `document.getElementById("live-status").textContent.startsWith("update failed: 503 Redis is unavailable")`)
		if !evalJS[bool](t, tab, fmt.Sprintf(`document.querySelector(%q) !== null`, rowSel("tick"))) {
			t.Fatal("the failed update emptied the page")
		}
		screenshot(t, tab, dir, "redis-down.png")
		f.redis.Restart()
		waitJS(t, tab, "updates to resume", `document.getElementById("live-status").textContent.startsWith("live ·")`)
	})
}
