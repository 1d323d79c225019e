package upgrade

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

// PreviousVersion is the last commit before partitions: its runtime names
// every key with the single tag {ns} and knows no meta key (git log: the
// next commits on the main line merge the partitioned queue and
// scheduler).
const PreviousVersion = "b762f5a"

// Environment of a child process (both versions).
const (
	childEnv    = "CHRONOS_UPGRADE_CHILD" // instance ID; set in children only
	redisEnv    = "CHRONOS_UPGRADE_REDIS"
	ranKey      = "upgrade:ran" // a list outside any namespace: "<schedule> <trigger unix> <task ID> <instance>"
	startedLine = "started"
)

// childSource is the program of a process of the previous version, built
// inside its tree. child below is the same program in this version: keep
// them alike.
const childSource = `package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	chronos "github.com/chronos-go/chronos/runtime"
)

type Tick struct{}

func (Tick) Kind() string { return "upgrade.tick" }

func main() {
	id := os.Getenv("` + childEnv + `")
	opt, err := redis.ParseURL(os.Getenv("` + redisEnv + `"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	c := redis.NewClient(opt)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("instance", id)
	s := chronos.NewScheduler(c, chronos.SchedulerConfig{InstanceID: id, Version: "previous", LeaderTTL: time.Second, Logger: log})
	if err := chronos.RegisterCron(s, "* * * * * ?", Tick{}, chronos.WithScheduleID("upgrade.cron")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := chronos.RegisterInterval(s, time.Second, Tick{}, chronos.WithScheduleID("upgrade.interval")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[Tick]) error {
		return c.RPush(ctx, "` + ranKey + `", fmt.Sprintf("%s %d %s %s", t.ScheduleID, t.TriggerTime.Unix(), t.ID, id)).Err()
	})
	srv := chronos.NewServer(c, chronos.ServerConfig{Logger: log})
	ctx := context.Background()
	if err := srv.Start(ctx, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := s.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("` + startedLine + `")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}
`

// Tick is the task of the schedules.
type Tick struct{}

// Kind returns the task kind.
func (Tick) Kind() string { return "upgrade.tick" }

func TestMain(m *testing.M) {
	if id := os.Getenv(childEnv); id != "" {
		os.Exit(child(id))
	}
	os.Exit(m.Run())
}

// child is childSource in this version.
func child(id string) int {
	opt, err := redis.ParseURL(os.Getenv(redisEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	c := redis.NewClient(opt)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("instance", id)
	s := chronos.NewScheduler(c, chronos.SchedulerConfig{InstanceID: id, Version: "this", LeaderTTL: time.Second, Logger: log})
	if err := chronos.RegisterCron(s, "* * * * * ?", Tick{}, chronos.WithScheduleID("upgrade.cron")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := chronos.RegisterInterval(s, time.Second, Tick{}, chronos.WithScheduleID("upgrade.interval")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, t *chronos.Task[Tick]) error {
		return c.RPush(ctx, ranKey, fmt.Sprintf("%s %d %s %s", t.ScheduleID, t.TriggerTime.Unix(), t.ID, id)).Err()
	})
	srv := chronos.NewServer(c, chronos.ServerConfig{Logger: log})
	ctx := context.Background()
	if err := srv.Start(ctx, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := s.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(startedLine)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return 0
}

// unavailable skips the test, or fails it in CI, where nothing may skip for
// want of a tool.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set, so this fails instead of skipping)", msg)
	}
	t.Skip(msg)
}

// buildPrevious extracts PreviousVersion from git into a temporary tree,
// adds childSource to it and builds it. It returns the binary.
func buildPrevious(t *testing.T) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			unavailable(t, "no go command to build the previous version with")
		}
	}
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		unavailable(t, "not in a git checkout (%v): cannot build the previous version %s", err, PreviousVersion)
	}
	repo := strings.TrimSpace(string(root))
	if err := exec.Command("git", "-C", repo, "cat-file", "-e", PreviousVersion+"^{commit}").Run(); err != nil {
		unavailable(t, "commit %s, the previous version, is not in this clone (a shallow clone?): fetch it with git fetch --unshallow", PreviousVersion)
	}
	dir := t.TempDir()
	archive := exec.Command("git", "-C", repo, "archive", "--format=tar", PreviousVersion)
	untar := exec.Command("tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	var archiveErr, untarErr bytes.Buffer
	archive.Stderr, untar.Stderr = &archiveErr, &untarErr
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v: %s", PreviousVersion, err, archiveErr.String())
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("tar -x: %v: %s", err, untarErr.String())
	}
	main := filepath.Join(dir, "cmd", "upgradeprevious")
	if err := os.MkdirAll(main, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(main, "main.go"), []byte(childSource), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "previous")
	// Without -trimpath: the standard library and the dependencies then
	// come from the build cache the test's own build filled (about 12 s
	// on two cores for the previous version's packages; with -trimpath,
	// a minute the first time).
	build := exec.Command(goBin, "build", "-o", bin, "./cmd/upgradeprevious")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	start := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the previous version: %v\n%s", err, out)
	}
	t.Logf("built %s in %v", PreviousVersion, time.Since(start).Round(time.Millisecond))
	return bin
}

// proc is one child process.
type proc struct {
	id   string
	cmd  *exec.Cmd
	done chan struct{}
}

// procs starts and stops the children and keeps their stderr.
type procs struct {
	t      *testing.T
	url    string
	mu     sync.Mutex
	stderr bytes.Buffer
	all    []*proc
}

func (ps *procs) Write(b []byte) (int, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.stderr.Write(b)
}

// start runs bin (with args) as instance id and waits until it says it
// started.
func (ps *procs) start(id, bin string, args ...string) *proc {
	ps.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), childEnv+"="+id, redisEnv+"="+ps.url)
	cmd.Stderr = ps
	out, err := cmd.StdoutPipe()
	if err != nil {
		ps.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		ps.t.Fatal(err)
	}
	p := &proc{id: id, cmd: cmd, done: make(chan struct{})}
	ps.all = append(ps.all, p)
	started := make(chan struct{})
	go func() { // ends when the process closes its stdout
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == startedLine {
				close(started)
			}
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	select {
	case <-started:
	case <-p.done:
		ps.t.Fatalf("%s exited before it started:\n%s", id, ps.stderrText())
	case <-time.After(20 * time.Second):
		ps.t.Fatalf("%s did not start within 20s:\n%s", id, ps.stderrText())
	}
	return p
}

// stop sends SIGTERM and waits for the graceful exit.
func (ps *procs) stop(p *proc) {
	ps.t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		ps.t.Fatalf("%s did not exit within 20s of SIGTERM", p.id)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		ps.t.Errorf("%s exited with %d", p.id, code)
	}
}

func (ps *procs) stderrText() string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.stderr.String()
}

// TestARollingDeployFromThePreviousVersionRunsEveryTriggerOnce deploys this
// version over the previous one, one process at a time, on one Redis:
// two processes of the previous version, each a scheduler and a server,
// run per-second schedules; a process of this version starts, the first
// old one stops, a second new one starts, the second old one stops. The
// namespace stays in layout 1 (the new processes find the old keys and
// write no meta key), the instances of both versions elect one leader
// among them, and every trigger second from the start of the deploy to
// its end ran exactly once, some by old processes, some by new ones.
func TestARollingDeployFromThePreviousVersionRunsEveryTriggerOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous version and runs processes")
	}
	redistest.Parallel(t)
	began := time.Now()
	previous := buildPrevious(t)
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	ps := &procs{t: t, url: srv.URL()}
	t.Cleanup(func() {
		for _, p := range ps.all {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("children's stderr:\n%s", ps.stderrText())
		}
	})
	self := []string{"-test.run=^$"}

	old1 := ps.start("previous-1", previous)
	old2 := ps.start("previous-2", previous)
	time.Sleep(2 * time.Second)
	deployStart := time.Now()
	new1 := ps.start("this-1", os.Args[0], self...)
	time.Sleep(1500 * time.Millisecond)
	ps.stop(old1)
	time.Sleep(1500 * time.Millisecond)
	new2 := ps.start("this-2", os.Args[0], self...)
	time.Sleep(1500 * time.Millisecond)
	ps.stop(old2)
	deployEnd := time.Now()
	time.Sleep(2 * time.Second)
	ps.stop(new1)
	ps.stop(new2)

	lines, err := c.LRange(ctx, ranKey, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	type run struct{ task, instance string }
	runs := map[string]map[int64][]run{}
	byVersion := map[string]int{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 4 {
			t.Fatalf("run record %q", l)
		}
		sec, _ := strconv.ParseInt(f[1], 10, 64)
		if runs[f[0]] == nil {
			runs[f[0]] = map[int64][]run{}
		}
		runs[f[0]][sec] = append(runs[f[0]][sec], run{f[2], f[3]})
		byVersion[strings.Split(f[3], "-")[0]]++
	}
	for _, id := range []string{"upgrade.cron", "upgrade.interval"} {
		for sec, rs := range runs[id] {
			if len(rs) > 1 {
				t.Errorf("%s: trigger %v ran %d times: %v", id, time.Unix(sec, 0).UTC(), len(rs), rs)
			}
		}
		// From the deploy's start to a second after the last old process
		// left, when the new ones fire alone.
		for sec := deployStart.Unix(); sec <= deployEnd.Unix()+1; sec++ {
			if len(runs[id][sec]) == 0 {
				t.Errorf("%s: trigger %v (during the deploy) never ran", id, time.Unix(sec, 0).UTC())
			}
		}
		secs := slices.Sorted(func(yield func(int64) bool) {
			for s := range runs[id] {
				if !yield(s) {
					return
				}
			}
		})
		t.Logf("%s ran triggers %v to %v, %d of them", id, time.Unix(secs[0], 0).UTC().Format(time.TimeOnly),
			time.Unix(secs[len(secs)-1], 0).UTC().Format(time.TimeOnly), len(secs))
	}
	t.Logf("runs by version: %v; deploy from %v to %v; whole test %v", byVersion,
		deployStart.UTC().Format(time.TimeOnly), deployEnd.UTC().Format(time.TimeOnly), time.Since(began).Round(time.Millisecond))
	if byVersion["previous"] == 0 || byVersion["this"] == 0 {
		t.Errorf("runs by version %v: want some by each", byVersion)
	}
	if n, _ := c.Exists(ctx, keyspace.Meta("")).Result(); n != 0 {
		t.Error("the new version wrote a meta key into the previous version's namespace")
	}
	if ks, _ := c.Keys(ctx, "{chronos:p*").Result(); len(ks) != 0 {
		t.Errorf("partition keys in the previous version's namespace: %v", ks)
	}
	if s := ps.stderrText(); strings.Contains(s, "level=ERROR") || strings.Contains(s, "DATA RACE") {
		t.Errorf("children logged errors:\n%s", s)
	}
}
