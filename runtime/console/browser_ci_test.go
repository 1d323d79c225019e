package console_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Where no Chromium can be found the browser test skips, saying why,
// except in CI (CI set, as .ci/run sets it), where it fails: a CI run must
// not pass without having driven the browser. The test binary is run
// again with a PATH that holds redis-server and no browser.
func TestTheBrowserTestFailsWithoutChromiumInCI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the browser test in a child process")
	}
	redisServer, err := exec.LookPath("redis-server")
	if err != nil && os.Getenv("REDIS_URL") == "" {
		t.Skip("no redis-server on PATH")
	}
	bin := t.TempDir()
	if redisServer != "" {
		must(t, os.Symlink(redisServer, filepath.Join(bin, "redis-server")))
	}
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "PATH", "CI", "CHRONOS_CHROMIUM", "CHRONOS_ARTIFACTS":
		default:
			env = append(env, kv)
		}
	}
	run := func(ci bool) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConsoleInARealBrowser$", "-test.count=1", "-test.v")
		cmd.Env = append(env, "PATH="+bin)
		if ci {
			cmd.Env = append(cmd.Env, "CI=1")
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run(true)
	if err == nil || !strings.Contains(out, "--- FAIL: TestConsoleInARealBrowser") || !strings.Contains(out, "headless Chromium is not installed") {
		t.Errorf("in CI without Chromium: err %v, output:\n%s", err, out)
	}
	out, err = run(false)
	if err != nil || !strings.Contains(out, "--- SKIP: TestConsoleInARealBrowser") || !strings.Contains(out, "CHRONOS_CHROMIUM") {
		t.Errorf("outside CI without Chromium: err %v, output:\n%s", err, out)
	}
}
