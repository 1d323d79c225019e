package chronos_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

type failing struct{}

func (failing) Kind() string { return "failing" }

// Successes of a kind get a run record at most every SuccessRunInterval
// per server; every failure gets one. A negative interval records every
// success.
func TestSuccessRunRecordsAreSpaced(t *testing.T) {
	t.Run("spaced", func(t *testing.T) { testSpacedRuns(t, time.Hour, 1) })
	t.Run("every", func(t *testing.T) { testSpacedRuns(t, -1, 50) })
}

func testSpacedRuns(t *testing.T, interval time.Duration, want int) {
	e := newEnv(t)
	ctx := context.Background()
	const n = 50
	var ran atomic.Int64
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[Greet]) error {
		ran.Add(1)
		return nil
	})
	chronos.AddHandler(mux, func(ctx context.Context, task *chronos.Task[failing]) error {
		return errors.New("no")
	})
	for range n {
		e.enqueue(t, Greet{})
	}
	for range 3 {
		e.enqueue(t, failing{}, chronos.WithMaxRetry(0))
	}
	e.serve(t, mux, chronos.ServerConfig{Logger: quietLogger, SuccessRunInterval: interval})
	waitDead(t, e, 3)
	eventually(t, "every task run", func() bool { return ran.Load() == n })
	eventually(t, "run records", func() bool {
		runs, err := e.insp.ListRuns(ctx, "greet", 1000)
		return err == nil && len(runs) == want
	})
	time.Sleep(50 * time.Millisecond) // and no more come
	if runs, _ := e.insp.ListRuns(ctx, "greet", 1000); len(runs) != want {
		t.Errorf("%d success records for %d runs, want %d", len(runs), n, want)
	}
	if runs, _ := e.insp.ListRuns(ctx, "failing", 1000); len(runs) != 3 {
		t.Errorf("%d failure records, want 3", len(runs))
	}
}
