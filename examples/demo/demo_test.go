package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestDemoShowsExactlyOnceThroughAHandoff runs `make demo` shortened, on
// the embedded Redis a fresh machine uses, so CI keeps it working.
func TestDemoShowsExactlyOnceThroughAHandoff(t *testing.T) {
	var out bytes.Buffer
	sum, err := run(context.Background(), config{Duration: 6 * time.Second, Instances: 3}, &out)
	t.Logf("demo output:\n%s", out.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !sum.OK() {
		t.Errorf("summary = %+v, want every trigger once and a handoff", sum)
	}
	if sum.Fired < 2 {
		t.Errorf("%d triggers fired in 6s of an every=2s schedule, want at least 2", sum.Fired)
	}
	if sum.NewLeader == sum.Stopped {
		t.Errorf("the stopped leader %s leads again", sum.Stopped)
	}
	for _, want := range []string{"DEMO ONLY", "stopping the leader", "took over", "duplicates 0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
