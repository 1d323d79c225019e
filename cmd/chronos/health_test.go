package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// A paused schedule is an operator's decision, not a problem.
func TestHealthSaysSoAndExitsZeroWhenNothingIsLateOrFailing(t *testing.T) {
	c := startCluster(t)
	c.ok("pause", "nightly", "-who", "alice")
	r := c.chronos("health")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if want := "no schedule is late or failing (3 schedules: 2 ok, 1 paused)\n"; r.stdout != want {
		t.Fatalf("stdout %q, want %q", r.stdout, want)
	}
	var rep healthReport
	c.okJSON(&rep, "health")
	if !rep.Healthy || rep.Counts["ok"] != 2 || rep.Counts["paused"] != 1 || rep.Counts["late"] != 0 ||
		len(rep.Schedules) != 3 || rep.Schedules[0].ID != "health" {
		t.Fatalf("health -json = %+v", rep)
	}
}

func TestHealthFailsWhenRedisCannotBeReached(t *testing.T) {
	r := invoke("-redis", "redis://127.0.0.1:1/0", "-timeout", "2s", "health")
	if r.code != exitFail || r.stdout != "" || !strings.HasPrefix(r.stderr, "chronos health: ") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and one line on stderr", r.code, r.stdout, r.stderr)
	}
}

// The two cases, as a probe sees them: a handler that keeps
// failing, then a scheduler that is stopped.
func TestHealthReportsFailingAndLateSchedulesAndExitsOne(t *testing.T) {
	c := startCluster(t)
	b := chronos.NewScheduler(c.redis.NewClient(nil), chronos.SchedulerConfig{
		InstanceID: "sched-b", Version: "v1.2.3", LeaderTTL: time.Second, Logger: quiet,
	})
	must(t, chronos.RegisterInterval(b, time.Second, report{Format: "tick"}, chronos.WithScheduleID("ticker"), chronos.WithLateAfter(2*time.Second)))
	must(t, chronos.RegisterInterval(b, time.Second, doomed{}, chronos.WithScheduleID("doomed"), chronos.WithFailingAfter(2)))
	must(t, b.Start(context.Background()))
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })

	var r result
	eventually(t, "doomed to be failing", func() bool { r = c.chronos("health"); return r.code == exitFail })
	line := lineOf(t, r.stdout, "failing")
	for _, part := range []string{"doomed", "last 2 runs of doomed failed", "dead at", "always"} {
		if !strings.Contains(line, part) {
			t.Errorf("failing line %q lacks %q", line, part)
		}
	}
	if n := strings.Count(r.stdout, "\n"); n != 1 {
		t.Errorf("%d lines, want one per problem:\n%s", n, r.stdout)
	}
	if want := "chronos health: 1 of 5 schedules need attention: 0 late, 1 failing\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}

	// Every scheduler stops: ticker is late two seconds after its next
	// fire time; doomed, with the default one minute, not yet.
	must(t, b.Shutdown(context.Background()))
	must(t, c.sched.Shutdown(context.Background()))
	eventually(t, "ticker to be late", func() bool { r = c.chronos("health"); return strings.Contains(r.stdout, "late") })
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "late") || !strings.HasPrefix(lines[1], "failing") {
		t.Fatalf("want the late line, then the failing one:\n%s", r.stdout)
	}
	for _, part := range []string{"ticker", "passed", "nothing was enqueued", "(late after 2s)"} {
		if !strings.Contains(lines[0], part) {
			t.Errorf("late line %q lacks %q", lines[0], part)
		}
	}
	if r.code != exitFail || !strings.Contains(r.stderr, "2 of 5 schedules need attention: 1 late, 1 failing") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}

	// -o json and the global -json print the same report, with the same
	// exit status.
	for _, args := range [][]string{{"health", "-o", "json"}, {"-json", "health"}} {
		r := c.chronos(args...)
		var rep healthReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != exitFail {
			t.Fatalf("%v: exit %d, %v in %s", args, r.code, err, r.stdout)
		}
		byID := map[string]healthView{}
		for _, h := range rep.Schedules {
			byID[h.ID] = h
		}
		if rep.Healthy || rep.Counts["late"] != 1 || rep.Counts["failing"] != 1 || rep.Counts["ok"] != 3 {
			t.Errorf("%v: %+v", args, rep)
		}
		if h := byID["ticker"]; h.State != "late" || h.LateAfter != "2s" || h.Since.IsZero() || h.LastOutcome != "success" {
			t.Errorf("%v: ticker %+v", args, h)
		}
		if h := byID["doomed"]; h.State != "failing" || h.Failures < 2 || h.LastOutcome != "dead" || !h.LastSuccess.IsZero() {
			t.Errorf("%v: doomed %+v", args, h)
		}
	}
}

func TestHealthRejectsAnUnknownFormat(t *testing.T) {
	r := invoke("health", "-o", "yaml")
	if r.code != exitUsage || !strings.Contains(r.stderr, `-o "yaml": want text or json`) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}
