package trigger_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// A scheduler keeps one State per schedule and asks Due what to enqueue
// whenever it looks at the schedule. Here the leader was down from 09:01:30
// to 09:10:20; the default smartPolicy of a repeat-forever trigger skips to
// the next slot on the grid.
func ExampleCatchup_Due() {
	start := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
	trig := trigger.Every(time.Minute, start)
	var policy trigger.Catchup // smartPolicy, 60s threshold

	state := trigger.Initial(trig)
	for _, now := range []time.Time{
		start.Add(5 * time.Second),                // on time
		start.Add(1*time.Minute + 30*time.Second), // 30s late: still a normal fire
		start.Add(10*time.Minute + 20*time.Second),
	} {
		res := policy.Due(trig, state, now)
		for _, f := range res.Fires {
			fmt.Printf("%s: run the %s slot\n", now.Format("15:04:05"), f.Scheduled.Format("15:04"))
		}
		if res.Misfired {
			fmt.Printf("%s: misfired, next fire %s\n", now.Format("15:04:05"), res.State.Next.Format("15:04"))
		}
		state = res.State
	}
	// Output:
	// 09:00:05: run the 09:00 slot
	// 09:01:30: run the 09:01 slot
	// 09:10:20: misfired, next fire 09:11
}

// With ignoreMisfires every missed slot is replayed, but never more than
// MaxFires of them: after a long outage the oldest are dropped.
func ExampleCatchup_Due_ignoreMisfires() {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	trig := trigger.Every(time.Hour, start)
	c := trigger.Catchup{Policy: trigger.PolicyIgnoreMisfires, MaxFires: 3}

	res := c.Due(trig, trigger.Initial(trig), start.Add(24*time.Hour+time.Minute))
	for _, f := range res.Fires {
		fmt.Println("replay", f.Scheduled.Format("Jan 2 15:04"))
	}
	fmt.Println("dropped", res.Dropped, "next", res.State.Next.Format("Jan 2 15:04"))
	// Output:
	// replay Jan 1 22:00
	// replay Jan 1 23:00
	// replay Jan 2 00:00
	// dropped 22 next Jan 2 01:00
}

// A fire the policy moves to now keeps the identity of the latest slot it
// stands for, so two leaders produce the same dedup key.
func ExampleFire() {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	trig := trigger.Simple{Start: start, Interval: time.Minute, RepeatCount: 10}
	now := start.Add(7*time.Minute + 30*time.Second)

	res := trigger.Catchup{Policy: trigger.PolicyFireNow}.Due(trig, trigger.Initial(trig), now)
	f := res.Fires[0]
	fmt.Println("runs at", f.At.Format("15:04:05"), "for the slot", f.Scheduled.Format("15:04:05"))
	// Output: runs at 00:07:30 for the slot 00:07:00
}

func ExampleParsePolicy() {
	p, err := trigger.ParsePolicy("doNothing", trigger.KindCron)
	fmt.Println(p, err)

	_, err = trigger.ParsePolicy("fireNow", trigger.KindCron)
	fmt.Println(errors.Is(err, trigger.ErrPolicyKind))
	fmt.Println(err)
	// Output:
	// doNothing <nil>
	// true
	// misfire policy fireNow applies to simple triggers; cron triggers accept ignoreMisfires, smartPolicy, fireOnceNow, doNothing
}

func ExampleSimple_Validate() {
	err := trigger.Every(500*time.Millisecond, time.Now()).Validate()
	fmt.Println(errors.Is(err, trigger.ErrSubSecondInterval))
	fmt.Println(err)
	// Output:
	// true
	// interval 500ms is below the 1s minimum; chronos does not run sub-second schedules
}

// A cron trigger takes its fire times from a runtime/cron schedule; the
// trigger adds the start, the end and the misfire handling around it.
func ExampleCron() {
	loc, _ := cron.LoadLocation("Europe/Paris")
	trig := trigger.Cron{
		Schedule: cron.Schedule{Expr: cron.MustParse("0 0 2 * * ?"), Location: loc},
		Start:    time.Date(2025, 3, 28, 12, 0, 0, 0, loc),
	}
	if err := trig.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	state := trigger.Initial(trig)
	for range 3 { // 02:00 does not exist on 30 March (DST), so Quartz skips that day
		fmt.Println(state.Next.Format(time.RFC3339))
		state = trigger.Triggered(trig, state)
	}
	// The leader was down for two days; doNothing waits for the next slot.
	res := trigger.Catchup{Policy: trigger.PolicyDoNothing}.Due(trig, state, state.Next.Add(48*time.Hour+time.Hour))
	fmt.Println(len(res.Fires), res.Misfired, res.State.Next.Format(time.RFC3339))
	// Output:
	// 2025-03-29T02:00:00+01:00
	// 2025-03-31T02:00:00+02:00
	// 2025-04-01T02:00:00+02:00
	// 0 true 2025-04-05T02:00:00+02:00
}
