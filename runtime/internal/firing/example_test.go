package firing_test

import (
	"context"
	"fmt"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/firing"
)

// A loop with two schedules on a manual clock: each wake-up hands over the
// due batch and reschedules every entry with its own next function.
func ExampleLoop() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	every := func(d time.Duration) firing.NextFunc {
		return func(after time.Time) time.Time { return after.Truncate(d).Add(d) }
	}
	clk := firing.NewManualClock(start)
	fired := make(chan string, 10)
	loop := firing.New(firing.Config{
		Clock: clk,
		Fire: func(_ context.Context, now time.Time, batch []firing.Due) {
			for _, d := range batch {
				fired <- fmt.Sprintf("%s %s at %s, next %s", now.Format("15:04:05"), d.ID,
					d.At.Format("15:04:05"), d.Next.Format("15:04:05"))
			}
		},
	})
	loop.Set("report", every(2*time.Second), start)
	loop.Set("cleanup", every(3*time.Second), start)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- loop.Run(ctx) }()
	for range 3 { // three healthy seconds
		clk.BlockUntil(1)
		clk.Advance(time.Second)
	}
	clk.BlockUntil(1)
	cancel()
	<-done
	close(fired)
	for line := range fired {
		fmt.Println(line)
	}
	// Output:
	// 00:00:02 report at 00:00:02, next 00:00:04
	// 00:00:03 cleanup at 00:00:03, next 00:00:06
}
