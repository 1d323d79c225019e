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
	for _, want := range []string{"chronos", "asynq", "lag p99 ms", "round trips/fire"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	for _, r := range rs {
		if r.fires == 0 {
			t.Errorf("%s: nothing fired in the window", r.name)
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
