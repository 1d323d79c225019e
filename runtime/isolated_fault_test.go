package chronos

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/firing"
)

// A pause is cluster-wide and durable for an isolated schedule too: each
// instance keeps the pause it read while Redis is down, and puts it back
// with the schedule when Redis returns empty, so the schedule runs
// nowhere until an operator resumes it.
func TestAPausedIsolatedScheduleStaysPausedThroughAnOutageAndADataLoss(t *testing.T) {
	SkipOnTestCluster(t, "restarts the one redis-server")
	e := newSchedEnv(t)
	ctx := context.Background()
	a := e.isoNode("iso-a", SchedulerConfig{InstanceTTL: time.Second}, everySecondIsolated(t))
	b := e.isoNode("iso-b", SchedulerConfig{InstanceTTL: time.Second}, everySecondIsolated(t))
	waitUntil(t, "runs on both", func() bool { return a.count() >= 1 && b.count() >= 1 })
	if err := e.insp.PauseSchedule(ctx, "local-logs", PauseOptions{Note: "disk swap", Who: "ops"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "both instances to read the pause", func() bool {
		return strings.Count(e.logs.String(), "isolated schedule paused") == 2
	})
	time.Sleep(1100 * time.Millisecond) // the mirrors have the pause too (a heartbeat)
	ca, cb := a.count(), b.count()

	e.redis.Kill()
	time.Sleep(2500 * time.Millisecond) // two fire times and more
	if a.count() != ca || b.count() != cb {
		t.Fatalf("runs while paused and Redis down: %d on a, %d on b", a.count()-ca, b.count()-cb)
	}
	e.redis.Restart() // no persistence: Redis comes back empty
	waitUntil(t, "the schedule put back, paused", func() bool {
		info, err := e.insp.Schedule(ctx, "local-logs")
		return err == nil && info.Paused != nil
	})
	info, _ := e.insp.Schedule(ctx, "local-logs")
	if info.Paused.Note != "disk swap" || info.Paused.Who != "ops" {
		t.Errorf("pause after the data loss: %+v; want the operator's, with its note", info.Paused)
	}
	time.Sleep(2500 * time.Millisecond) // the runners read the registry again
	if a.count() != ca || b.count() != cb {
		t.Fatalf("runs after Redis returned empty: %d on a, %d on b; want none while paused", a.count()-ca, b.count()-cb)
	}
	if _, err := e.insp.ResumeSchedule(ctx, "local-logs", ""); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "runs on both after the resume", func() bool { return a.count() > ca && b.count() > cb })
}

// An isolated schedule keeps its trigger state in each instance's memory,
// so its misfire policy applies per instance: an instance that stalled
// (its clock moved five minutes at once, as a stopped process sees on
// waking) catches up its own missed fire times per the policy, whatever
// the other instances fired meanwhile, and an instance that did not stall
// catches up nothing.
func TestAnIsolatedSchedulesMisfirePolicyAppliesPerInstanceAfterAStall(t *testing.T) {
	for _, c := range []struct {
		policy string
		want   int // runs on the stalled instance for the five minutes it missed
	}{
		{"fireOnceNow", 1},
		{"doNothing", 0},
		{"ignoreMisfires", 4}, // the newest MaxCatchup of them
	} {
		t.Run(c.policy, func(t *testing.T) {
			e := newSchedEnv(t)
			reg := func(clk *firing.ManualClock) func(*Scheduler) {
				return func(s *Scheduler) {
					if clk != nil {
						s.clock, s.now = clk, clk.Now
					}
					if err := RegisterCron(s, "* * * * * ?", tick{}, WithScheduleID("local"), WithIsolated(true),
						WithMisfire(c.policy)); err != nil {
						t.Fatal(err)
					}
				}
			}
			cfg := SchedulerConfig{MaxCatchup: 4}
			// a runs on a manual clock started 5 minutes in the past; b on
			// the real one, firing every second all along.
			// Half a second off the fire times, so that none falls on a
			// reading of the clock.
			t0 := time.Now().Add(-5 * time.Minute).Truncate(time.Second).Add(500 * time.Millisecond)
			clk := firing.NewManualClock(t0)
			a := e.isoNode("iso-a", cfg, reg(clk))
			b := e.isoNode("iso-b", cfg, reg(nil))
			// a's first fire time is the second it started in: a cron
			// trigger's start, rounded down to the second, is a fire time
			// (Quartz's rule, trigger.Cron), due at once on a's clock. Each
			// second the clock moves brings one more. All three must have
			// run before the stall: a run still on its way would be
			// counted as one for the stall.
			first := t0.Truncate(time.Second)
			for k := 1; k <= 2; k++ {
				clk.Advance(time.Second)
				waitUntil(t, "a run on a's clock", func() bool { return a.count() >= k+1 })
			}
			var pre []time.Time
			for _, r := range a.tasks() {
				pre = append(pre, r.TriggerTime)
			}
			slices.SortFunc(pre, time.Time.Compare)
			if want := []time.Time{first, first.Add(time.Second), first.Add(2 * time.Second)}; !slices.EqualFunc(pre, want, time.Time.Equal) {
				t.Fatalf("a ran %v before the stall, want %v", pre, want)
			}
			waitUntil(t, "runs on b", func() bool { return b.count() >= 2 })

			// a stalls for five minutes: its clock jumps to now at once.
			stalled, before := clk.Now(), a.count()
			clk.Advance(5 * time.Minute)
			resumed := clk.Now()
			waitUntil(t, "a's catch-up", func() bool { return caughtUp(e.logs.String(), "iso-a") })
			clk.Advance(time.Second) // and then one ordinary second
			after := resumed.Truncate(time.Second).Add(time.Second)
			waitUntil(t, "a run after the stall", func() bool { return a.lastTrigger().Equal(after) })
			time.Sleep(200 * time.Millisecond)

			var missed int
			for _, r := range a.tasks() {
				if r.TriggerTime.After(stalled) && !r.TriggerTime.After(resumed) {
					missed++
				}
			}
			if missed != c.want {
				t.Errorf("%s: a ran %d of the fire times it missed while stalled, want %d", c.policy, missed, c.want)
			}
			if got := a.count(); got != before+c.want+1 {
				t.Errorf("%s: a ran %d times, want %d before the stall, %d for it, 1 after", c.policy, got, before, c.want)
			}
			// b fired every second meanwhile and caught nothing up.
			prev := time.Time{}
			for _, r := range b.tasks() {
				if !prev.IsZero() && r.TriggerTime.Sub(prev) != time.Second {
					t.Errorf("b ran %v after %v: want one run a second, no catch-up", r.TriggerTime, prev)
				}
				prev = r.TriggerTime
			}
			if caughtUp(e.logs.String(), "iso-b") {
				t.Errorf("b logged a catch-up:\n%s", e.logs)
			}
		})
	}
}

// caughtUp reports whether instance logged a catch-up in logs.
func caughtUp(logs, instance string) bool {
	for l := range strings.Lines(logs) {
		if strings.Contains(l, "chronos: catch-up") && strings.Contains(l, "test_instance="+instance) {
			return true
		}
	}
	return false
}

// tasks returns the tasks n ran, in run order.
func (n *isoNode) tasks() []*Task[tick] {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*Task[tick](nil), n.runs...)
}

// lastTrigger is the trigger time of the last task n ran.
func (n *isoNode) lastTrigger() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.runs) == 0 {
		return time.Time{}
	}
	return n.runs[len(n.runs)-1].TriggerTime
}
