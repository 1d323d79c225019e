package chronos

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

func TestOldestReadyIsTheFirstTaskNoWorkerHasTaken(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	if at, err := e.insp.OldestReady(ctx, DefaultQueue); err != nil || !at.IsZero() {
		t.Fatalf("empty queue: OldestReady = %v, %v; want zero, nil", at, err)
	}
	client := NewClient(e.rdb)
	for range 2 {
		if _, err := client.Enqueue(ctx, mOK{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // distinct entry times
	}
	entries := func() []time.Time { // of every partition, oldest first
		st, err := rdb.NewNamespace(e.rdb, "", keyspace.ResolveOptions{ReadOnly: true}).Store(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []time.Time
		for _, r := range st.Parts {
			xs, err := e.rdb.XRange(ctx, r.K.Stream("default"), "-", "+").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range xs {
				at, _ := entryTime(x.ID)
				out = append(out, at)
			}
		}
		slices.SortFunc(out, time.Time.Compare)
		return out
	}
	first := entries()
	if at, err := e.insp.OldestReady(ctx, DefaultQueue); err != nil || !at.Equal(first[0]) {
		t.Fatalf("before any server: OldestReady = %v, %v; want the first entry %v", at, err, first[0])
	}

	// One worker holds the first task: the second is now the oldest ready.
	started, release := make(chan struct{}), make(chan struct{})
	mux := NewMux()
	AddHandler(mux, func(context.Context, *Task[mOK]) error {
		started <- struct{}{}
		<-release
		return nil
	})
	srv := NewServer(e.redis.NewClient(), ServerConfig{Concurrency: 1, Logger: slog.New(slog.NewTextHandler(e.logs, nil))})
	if err := srv.Start(ctx, mux); err != nil {
		t.Fatal(err)
	}
	<-started
	if at, err := e.insp.OldestReady(ctx, DefaultQueue); err != nil || !at.Equal(first[1]) {
		t.Fatalf("first task running: OldestReady = %v, %v; want the second entry %v", at, err, first[1])
	}
	close(release)
	<-started
	waitUntil(t, "the queue drained", func() bool {
		at, err := e.insp.OldestReady(ctx, DefaultQueue)
		return err == nil && at.IsZero()
	})
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
