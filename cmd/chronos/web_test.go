package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// lockedBuffer is a buffer the command writes to while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// webRun is one "chronos web" running in the background.
type webRun struct {
	url            string // the console's address, as the command printed it
	stdout, stderr *lockedBuffer
	stop           func() int // interrupts the command and returns its exit code
}

var consoleAt = regexp.MustCompile(`console at (http://\S+/)`)

// startWeb runs "chronos web" with args until the test stops it.
func startWeb(t *testing.T, args ...string) *webRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &webRun{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"web", "-addr", "127.0.0.1:0"}, args...), w.stdout, w.stderr) }()
	var once sync.Once
	code := -1
	w.stop = func() int {
		once.Do(func() { cancel(); code = <-done })
		return code
	}
	t.Cleanup(func() { w.stop() })
	eventually(t, "the console to listen", func() bool {
		select {
		case code = <-done:
			t.Fatalf("chronos web exited %d early: %s%s", code, w.stdout, w.stderr)
		default:
		}
		m := consoleAt.FindStringSubmatch(w.stdout.String())
		if m != nil {
			w.url = m[1]
		}
		return m != nil
	})
	return w
}

func httpGet(t *testing.T, url string, tweak func(*http.Request)) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if tweak != nil {
		tweak(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestWebServesTheConsoleOnLoopbackUntilInterrupted(t *testing.T) {
	c := startCluster(t)
	c.waitLeader()
	w := startWeb(t, "-redis", c.redis.URL())
	if !strings.HasPrefix(w.url, "http://127.0.0.1:") {
		t.Fatalf("console at %s, want loopback", w.url)
	}
	status, body := httpGet(t, w.url, nil)
	if status != http.StatusOK || !strings.Contains(body, "sched-a") {
		t.Fatalf("overview: %d\n%s", status, body)
	}
	status, body = httpGet(t, w.url+"schedules/reports.daily", nil)
	if status != http.StatusOK || !strings.Contains(body, "Asia/Seoul") {
		t.Fatalf("schedule page: %d", status)
	}
	if code := w.stop(); code != exitOK {
		t.Fatalf("exit %d after the interrupt; stderr: %s", code, w.stderr)
	}
	if !strings.Contains(w.stdout.String(), "chronos web: stopped") {
		t.Fatalf("stdout: %s", w.stdout)
	}
}

func TestWebTakesCredentialsFromTheEnvironmentAndNeverPrintsThem(t *testing.T) {
	c := startCluster(t)
	t.Setenv(envBasicAuth, "ops:hunter2-secret")
	w := startWeb(t, "-redis", c.redis.URL(), "-read-only", "-prefix", "/chronos", "-refresh", "0")
	if !strings.HasSuffix(w.url, "/chronos/") || !strings.Contains(w.stdout.String(), "(read-only)") {
		t.Fatalf("stdout: %s", w.stdout)
	}
	if status, _ := httpGet(t, w.url, nil); status != http.StatusUnauthorized {
		t.Fatalf("without credentials: %d", status)
	}
	status, body := httpGet(t, w.url+"schedules", func(r *http.Request) { r.SetBasicAuth("ops", "hunter2-secret") })
	if status != http.StatusOK || strings.Contains(body, `method="post"`) || !strings.Contains(body, `data-refresh="0"`) {
		t.Fatalf("read-only schedules with credentials and no refresh: %d\n%s", status, body)
	}
	w.stop()
	help := invoke("web", "-h")
	for _, out := range []string{w.stdout.String(), w.stderr.String(), help.stdout, help.stderr} {
		if strings.Contains(out, "hunter2") {
			t.Fatalf("the password was printed:\n%s", out)
		}
	}
}

func TestWebWarnsWhenReachableFromElsewhereWithoutAuth(t *testing.T) {
	c := startCluster(t)
	w := startWeb(t, "-redis", c.redis.URL(), "-addr", "0.0.0.0:0")
	if !strings.Contains(w.stderr.String(), "without -basic-auth or -bearer-token") {
		t.Fatalf("no warning; stderr: %s", w.stderr)
	}
}

func TestWebRejectsBadFlagsBeforeListening(t *testing.T) {
	for _, args := range [][]string{
		{"web", "-basic-auth", "no-colon"},
		{"web", "-prefix", "chronos"},
		{"web", "extra"},
	} {
		r := invoke(args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "usage: chronos web") {
			t.Errorf("chronos %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}

func TestWebRedactsTheRedisPasswordAndSaysWhenRedisRefusesIt(t *testing.T) {
	c := startCluster(t)
	// The server now wants another password than the console's. (The
	// cluster's pooled connections are authenticated already.)
	ctx := context.Background()
	must(t, c.rdb.ConfigSet(ctx, "requirepass", "the-real-one").Err())
	t.Cleanup(func() {
		admin := c.redis.NewClient(func(o *redis.Options) { o.Password = "the-real-one" })
		_ = admin.ConfigSet(ctx, "requirepass", "").Err()
	})
	w := startWeb(t, "-redis", strings.Replace(c.redis.URL(), "redis://", "redis://:pw-not-shown@", 1))
	status, body := httpGet(t, w.url, nil)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "Redis is unavailable") {
		t.Fatalf("overview with its AUTH refused: %d\n%s", status, body)
	}
	w.stop()
	if !strings.Contains(w.stdout.String(), "redis://:xxxxx@") {
		t.Errorf("stdout does not name the Redis with its password redacted: %s", w.stdout)
	}
	for _, out := range []string{w.stdout.String(), w.stderr.String(), body} {
		if strings.Contains(out, "pw-not-shown") {
			t.Fatalf("the Redis password was shown:\n%s", out)
		}
	}
}
