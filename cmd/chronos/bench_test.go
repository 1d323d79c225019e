package main

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

// BenchmarkSchedules measures one "chronos schedules" (connect, read the
// registry, print the table or JSON) over a registry of 1,000 schedules.
func BenchmarkSchedules(b *testing.B) {
	const n = 1000
	s := redistest.Start(b)
	sched := chronos.NewScheduler(s.NewClient(nil), chronos.SchedulerConfig{InstanceID: "bench", LeaderTTL: time.Second, Logger: quiet})
	for i := range n {
		err := chronos.RegisterCron(sched, "0 0 2 * * ?", report{Format: "pdf"},
			chronos.WithScheduleID(fmt.Sprintf("reports.%04d", i)), chronos.WithTimeZone("Asia/Seoul"))
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := sched.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sched.Shutdown(context.Background()) })
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"table", []string{"-redis", s.URL(), "schedules"}},
		{"json", []string{"-redis", s.URL(), "-json", "schedules"}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				if code := run(ctx, mode.args, io.Discard, io.Discard); code != exitOK {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
