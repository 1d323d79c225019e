package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestRunTiny runs every phase of the program for every system with tiny
// sizes, so that CI keeps it compiling and working. It checks the shape of
// the report, not the speed: speed is what the program itself is for.
func TestRunTiny(t *testing.T) {
	cfg, _, err := parseFlags([]string{
		"-tasks", "300", "-serial", "50", "-clients", "4", "-enqueue-clients", "1,3", "-concurrency", "10",
		"-rounds", "2", "-rate", "40", "-duration", "250ms", "-settle", "50ms",
		"-warmup", "50", "-timeout", "1m",
	})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), cfg, &out); err != nil {
		t.Fatalf("run: %v\noutput so far:\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"go version: go1.", "GOMAXPROCS: ", "redis: ", "asynq v0.26.0",
		"round 2/2  latency",
		"enqueue, 1 producer (tasks/s)", "enqueue, 3 producers (tasks/s)",
		"process 300 pre-filled, 10 handlers (tasks/s)", "end-to-end 300 tasks, 4 producers (tasks/s)",
		"latency p50 at 40/s (ms)", "latency p99 at 40/s (ms)",
		"allocs/task, enqueue, 1 producer", "allocs/task, enqueue, 3 producers", "allocs/task, process", "allocs/task, end-to-end",
		"chronos/asynq", "asynq TaskCheckInterval=10ms", perProducerLabel,
		"spread over rounds",
		"targets for chronos (medians):", "end-to-end >= 5x asynq: ", "enqueue with 3 producers, a Client each, >= 1x asynq",
		"CPU profile, e2e, chronos:", "CPU profile, enqueue, asynq (default):", "top 5 flat", "Redis commands by time, INFO commandstats",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "duplicate runs") && strings.Count(line, "0.000") < 2 {
			t.Errorf("tasks ran twice without any failure: %s", line)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", got)
	}
}

func TestParseFlagsRejects(t *testing.T) {
	for _, args := range [][]string{
		{"-phase", "enqueue,bogus"},
		{"-systems", "sidekiq"},
		{"-tasks", "0"},
		{"-enqueue-clients", "1,x"},
		{"-profile", "latency"},
		{"-duration", "0s"},
		{"extra"},
	} {
		if _, _, err := parseFlags(args); err == nil {
			t.Errorf("parseFlags(%q) = nil error", args)
		}
	}
}

func TestParseFlagsPhaseAll(t *testing.T) {
	cfg, _, err := parseFlags([]string{"-phase", "all", "-redis", ""})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.phases, ",") != "enqueue,process,e2e,latency" {
		t.Errorf("-phase all = %q", cfg.phases)
	}
}

// The benchmark sends load only to a Redis on this machine: a remote one
// would measure the network, not the queues. It refuses before dialling.
func TestRunRefusesRemoteRedis(t *testing.T) {
	cfg, _, err := parseFlags([]string{"-redis", "redis://192.0.2.1:6379/0"})
	if err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), cfg, new(bytes.Buffer))
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("run with a remote Redis: error %v, want one about loopback", err)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for p, want := range map[int]time.Duration{50: 50, 99: 99, 100: 100, 1: 1} {
		if got := percentile(d, p); got != want {
			t.Errorf("percentile(1..100, %d) = %d, want %d", p, got, want)
		}
	}
	if got := percentile(d[:1], 99); got != 1 {
		t.Errorf("percentile of one sample = %d, want it", got)
	}
}

func TestPayloadSize(t *testing.T) {
	b, err := json.Marshal(benchArgs{Seq: 123456, Pad: padFor(128)})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 128 {
		t.Errorf("encoded payload is %d bytes, want 128", len(b))
	}
}
