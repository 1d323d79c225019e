package main

import (
	"net"
	"strings"
	"testing"
	"time"
)

func TestUsageErrorsExitTwoBeforeTouchingRedis(t *testing.T) {
	// Port 1 refuses connections: a case that reached Redis would exit 1.
	const nowhere = "redis://127.0.0.1:1"
	cases := []struct {
		args   []string
		stderr string // a part of it
	}{
		{nil, "usage: chronos"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"-bogus", "schedules"}, "flag provided but not defined: -bogus"},
		{[]string{"schedules", "extra"}, `unexpected argument "extra"`},
		{[]string{"schedule"}, "missing ID\nusage: chronos schedule ID"},
		{[]string{"schedule", ""}, "empty ID"},
		{[]string{"pause", "x", "-until", "soon"}, `-until "soon": want an RFC 3339 time`},
		{[]string{"pause", "x", "-until", "-1h"}, "want a positive duration"},
		{[]string{"pause", "x", "-until", "2001-01-01T00:00:00Z"}, "is in the past"},
		{[]string{"backfill", "x", "-to", "2026-01-01T00:00:00Z"}, "-from is required"},
		{[]string{"backfill", "x", "-from", "2026-01-02T00:00:00Z", "-to", "2026-01-01T00:00:00Z"}, "is before -from"},
		{[]string{"backfill", "x", "-from", "yesterday", "-to", "2026-01-01T00:00:00Z"}, `-from "yesterday"`},
		{[]string{"dead", "-n", "0"}, "-n 0: want a positive number"},
		{[]string{"runs"}, "missing ID|KIND"},
		{[]string{"requeue", "a", "b"}, `unexpected argument "b"`},
		{[]string{"-redis", "mysql://x", "leader"}, "-redis mysql://x"},
	}
	for _, tc := range cases {
		args := tc.args
		if len(args) == 0 || !strings.HasPrefix(args[0], "-redis") {
			args = append([]string{"-redis", nowhere}, args...)
		}
		r := invoke(args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.stderr) || r.stdout != "" {
			t.Errorf("chronos %s: exit %d, stdout %q, stderr %q; want 2 and %q",
				strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, tc.stderr)
		}
	}
}

func TestHelpExitsZero(t *testing.T) {
	t.Setenv("REDIS_URL", "redis://:hunter2@127.0.0.1:1")
	if r := invoke("help"); r.code != exitOK || !strings.Contains(r.stdout, "requeue TASK_ID") {
		t.Fatalf("help: exit %d, stdout %q", r.code, r.stdout)
	}
	for _, args := range [][]string{{"-h"}, {"pause", "-h"}} {
		r := invoke(args...)
		if r.code != exitOK || !strings.Contains(r.stderr, "usage: chronos") {
			t.Errorf("chronos %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "hunter2") {
			t.Errorf("chronos %s shows the password of REDIS_URL:\n%s", strings.Join(args, " "), r.stderr)
		}
	}
}

func TestUnreachableRedisFailsWithOneLine(t *testing.T) {
	t.Parallel()
	r := invoke("-redis", "redis://:secret@127.0.0.1:1", "-timeout", "5s", "schedules")
	if r.code != exitFail || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing", r.code, r.stdout)
	}
	if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "chronos schedules: ") {
		t.Fatalf("stderr %q, want one line about the command", r.stderr)
	}
	if strings.Contains(r.stderr, "secret") {
		t.Fatalf("stderr %q shows the password", r.stderr)
	}
}

func TestRedisURLComesFromTheEnvironmentUnlessGiven(t *testing.T) {
	t.Setenv("REDIS_URL", "redis://127.0.0.1:1/0")
	r := invoke("-timeout", "5s", "leader")
	if r.code != exitFail || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Fatalf("exit %d, stderr %q; want a failure to reach REDIS_URL", r.code, r.stderr)
	}
	r = invoke("-redis", "mysql://elsewhere", "leader")
	if r.code != exitUsage || !strings.Contains(r.stderr, "mysql://elsewhere") {
		t.Fatalf("exit %d, stderr %q; want -redis to win over REDIS_URL", r.code, r.stderr)
	}
}

func TestFlagsAndArgumentsMayComeInAnyOrder(t *testing.T) {
	cases := [][]string{
		{"ID", "-job", "j", "-note", "n"},
		{"-job", "j", "ID", "-note", "n"},
		{"-job", "j", "-note", "n", "ID"},
		{"-job", "j", "-note", "n", "--", "ID"},
	}
	for _, args := range cases {
		c := &cli{cmd: &command{name: "pause"}}
		fs := c.flagSet("pause")
		job, note := fs.String("job", "", ""), fs.String("note", "", "")
		pos, err := c.parse(fs, args, "ID")
		if err != nil || len(pos) != 1 || pos[0] != "ID" || *job != "j" || *note != "n" {
			t.Errorf("parse %q = %q, %v (job %q note %q)", args, pos, err, *job, *note)
		}
	}
	// After "--" even a dash is an argument.
	c := &cli{cmd: &command{name: "runs"}}
	pos, err := c.parse(c.flagSet("runs"), []string{"--", "-odd-kind"}, "KIND")
	if err != nil || pos[0] != "-odd-kind" {
		t.Fatalf("parse after -- = %q, %v", pos, err)
	}
}

func TestGlobalFlagsMayFollowTheCommand(t *testing.T) {
	c := &cli{cmd: &command{name: "schedules"}, ns: "before"}
	fs := c.flagSet("schedules")
	if _, err := c.parse(fs, []string{"-json", "-ns", "after"}); err != nil {
		t.Fatal(err)
	}
	if !c.json || c.ns != "after" {
		t.Fatalf("json %v ns %q", c.json, c.ns)
	}
	c = &cli{cmd: &command{name: "schedules"}, ns: "before"}
	if _, err := c.parse(c.flagSet("schedules"), nil); err != nil || c.ns != "before" {
		t.Fatalf("a global given before the command was reset: ns %q, %v", c.ns, err)
	}
}

func TestUntilIsADurationFromNowOrAnInstant(t *testing.T) {
	now := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"6h":                        now.Add(6 * time.Hour),
		"90m":                       now.Add(90 * time.Minute),
		"2026-12-01T06:00:00Z":      time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC),
		"2026-12-01T15:00:00+09:00": time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC),
	} {
		got, err := parseUntil(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseUntil(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestTimeoutBoundsARedisThatDoesNotAnswer(t *testing.T) {
	// A listener that accepts connections and never replies.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // ends when ln is closed
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	// -timeout after the command counts too.
	r := invoke("-redis", "redis://"+ln.Addr().String(), "leader", "-timeout", "50ms")
	want := "chronos leader: redis://" + ln.Addr().String() + ": no answer within 50ms (-timeout)\n"
	if r.code != exitFail || r.stderr != want {
		t.Fatalf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}
}
