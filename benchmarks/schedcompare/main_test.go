package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chronos-go/chronos/benchmarks/internal/redisproc"
)

// TestRunSmall runs the whole program with a handful of schedules and a
// short window: both systems must fire and the table must show them.
func TestRunSmall(t *testing.T) {
	var out bytes.Buffer
	cfg := config{schedules: 20, rate: 10, window: 2 * time.Second}
	rs, err := run(context.Background(), cfg, &out)
	if errors.Is(err, redisproc.ErrNoRedisServer) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	for _, want := range []string{"chronos", "asynq", "last of burst lag p99 ms", "lag p99 ms (per trigger)", "round trips/fire",
		"start-up s (to first firing)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	for _, r := range rs {
		if r.fires == 0 || r.bursts == 0 {
			t.Errorf("%s: nothing fired in the window (%d fires, %d bursts)", r.name, r.fires, r.bursts)
		}
		if r.unforwarded != 0 {
			t.Errorf("%s: %d tasks of the window never reached the stream", r.name, r.unforwarded)
		}
	}
	if c := rs[0]; c.name != "chronos" || c.startup <= 0 || c.startup > c.registerTime+5*time.Second {
		t.Errorf("chronos start-up %v (setup %v): want the time to the leader's first firing", c.startup, c.registerTime)
	}
}

func TestTheLastTriggerOfABurstIsItsLatest(t *testing.T) {
	s := func(sec, ms int) time.Time { return time.Unix(int64(sec), int64(ms)*1e6) }
	var r result
	r.finishLags([]fireLag{
		{s(10, 0), 5 * time.Millisecond}, {s(10, 0), 40 * time.Millisecond}, {s(10, 0), 7 * time.Millisecond},
		{s(11, 0), 3 * time.Millisecond}, {s(11, 0), 9 * time.Millisecond},
		{s(12, 0), 20 * time.Millisecond},
	})
	if r.fires != 6 || r.bursts != 3 || r.lastP50 != 20*time.Millisecond || r.lastMax != 40*time.Millisecond || r.lagMax != 40*time.Millisecond ||
		r.lagP50 != 7*time.Millisecond {
		t.Fatalf("finishLags: %+v", r)
	}
}

func TestTheReportShowsMediansOverRounds(t *testing.T) {
	round := func(cpu time.Duration, startup time.Duration) *result {
		return &result{name: "chronos", window: time.Second, fires: 10, cpuPerFire: cpu, startup: startup}
	}
	c := column{name: "chronos", rounds: []*result{round(30*time.Microsecond, time.Second), round(10*time.Microsecond, 0),
		round(20*time.Microsecond, 3*time.Second)}}
	var cpu, startup metric
	for _, m := range metrics {
		switch m.name {
		case "CPU µs/fire (process)":
			cpu = m
		case "start-up s (to first firing)":
			startup = m
		}
	}
	if got := c.median(cpu); got != 20 {
		t.Errorf("median CPU = %v, want 20", got)
	}
	if got := c.median(startup); got != 2 { // the round that did not measure it is left out
		t.Errorf("median start-up = %v, want 2", got)
	}
	var out bytes.Buffer
	report(&out, []column{c})
	for _, want := range []string{"medians of 3 rounds:", "min–max over rounds:", "10.0 – 30.0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestParseSeq(t *testing.T) {
	if got := parseSeq([]byte(`{"seq":4711}`)); got != 4711 {
		t.Errorf("parseSeq = %d, want 4711", got)
	}
}

func TestPlanLastSlot(t *testing.T) {
	p := newPlan(10_000, 1000)
	if p.period != 10*time.Second || p.phases() != 10 || p.phase(12) != 2 {
		t.Fatalf("plan = %+v", p)
	}
	first := time.Unix(100, 0)
	if got := p.lastSlot(first, time.Unix(125, 5e8)); !got.Equal(time.Unix(120, 0)) {
		t.Errorf("lastSlot = %v, want 120s", got.Unix())
	}
}
