package trigger

import (
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
)

// quartzState is a trigger's state after updateAfterMisfire, in the terms of
// the brief's table §7.3. A zero Next means null (COMPLETE).
type quartzState struct {
	Next, Start time.Time
	RC, TT      int
}

// The vectors of quartz-semantics.md §7.3, measured on Quartz 2.3.2:
// T0 = 2025-01-01T00:00:00Z, interval 60s, threshold 60s. Each case checks
// the state right after updateAfterMisfire (the table's column) and what
// Due hands out and persists afterwards.
func TestQuartzMisfireTable(t *testing.T) {
	five := cron.Schedule{Expr: cron.MustParse("0 0/5 * * * ?")}
	only2025 := cron.Schedule{Expr: cron.MustParse("0 0 0 1 1 ? 2025")}
	simple := func(rc int, end time.Time) Simple {
		return Simple{Start: T0, Interval: time.Minute, RepeatCount: rc, End: end}
	}
	var none time.Time
	tests := []struct {
		id       string
		trig     Trigger
		policy   Policy
		next     time.Time // persisted next fire time
		tt       int
		now      time.Time
		misfired bool
		after    quartzState // after updateAfterMisfire (only when misfired)
		fires    []Fire
		final    State
	}{
		// Cron.
		{id: "C1 ignore: left as is, every slot replayed",
			trig: Cron{Schedule: five, Start: T0}, policy: PolicyIgnoreMisfires, next: T0, now: sec(450.25),
			fires: []Fire{{T0, T0}, {sec(300), sec(300)}},
			final: State{Next: sec(600), Prev: sec(300), Start: T0, TimesTriggered: 2, RepeatCount: -1}},
		{id: "C2 smart = fireOnceNow",
			trig: Cron{Schedule: five, Start: T0}, policy: PolicySmart, next: T0, now: sec(450.25),
			misfired: true, after: quartzState{Next: sec(450.25), Start: T0, RC: -1},
			fires: []Fire{{sec(450.25), sec(300)}},
			final: State{Next: sec(600), Prev: sec(450.25), Start: T0, TimesTriggered: 1, RepeatCount: -1}},
		{id: "C3 doNothing",
			trig: Cron{Schedule: five, Start: T0}, policy: PolicyDoNothing, next: T0, now: sec(450.25),
			misfired: true, after: quartzState{Next: sec(600), Start: T0, RC: -1},
			final: State{Next: sec(600), Start: T0, RepeatCount: -1}},
		{id: "C4 1ms under the threshold: an ordinary late fire",
			trig: Cron{Schedule: five, Start: T0}, policy: PolicyDoNothing, next: T0, now: sec(59.999),
			fires: []Fire{{T0, T0}},
			final: State{Next: sec(300), Prev: T0, Start: T0, TimesTriggered: 1, RepeatCount: -1}},
		{id: "C5 exactly at the threshold misfires",
			trig: Cron{Schedule: five, Start: T0}, policy: PolicyDoNothing, next: T0, now: sec(60),
			misfired: true, after: quartzState{Next: sec(300), Start: T0, RC: -1},
			final: State{Next: sec(300), Start: T0, RepeatCount: -1}},
		{id: "C6 doNothing past the end completes",
			trig: Cron{Schedule: five, Start: T0, End: sec(500)}, policy: PolicyDoNothing, next: T0, now: sec(450.25),
			misfired: true, after: quartzState{Next: none, Start: T0, RC: -1},
			final: State{Start: T0, RepeatCount: -1, Complete: true}},
		{id: "C7 doNothing without a future time completes",
			trig: Cron{Schedule: only2025, Start: T0}, policy: PolicyDoNothing, next: T0, now: sec(450.25),
			misfired: true, after: quartzState{Next: none, Start: T0, RC: -1},
			final: State{Start: T0, RepeatCount: -1, Complete: true}},
		{id: "C8 fireOnceNow fires once anyway",
			trig: Cron{Schedule: only2025, Start: T0}, policy: PolicyFireOnceNow, next: T0, now: sec(450.25),
			misfired: true, after: quartzState{Next: sec(450.25), Start: T0, RC: -1},
			fires: []Fire{{sec(450.25), T0}},
			final: State{Prev: sec(450.25), Start: T0, TimesTriggered: 1, RepeatCount: -1, Complete: true}},

		// Simple.
		{id: "S1 smart = fireNow for a one-shot",
			trig: simple(0, none), policy: PolicySmart, next: T0, now: sec(600),
			misfired: true, after: quartzState{Next: sec(600), Start: T0, RC: 0, TT: 0},
			fires: []Fire{{sec(600), T0}},
			final: State{Prev: sec(600), Start: T0, TimesTriggered: 1, Complete: true}},
		{id: "S2 smart = rescheduleNowWithExistingRepeatCount",
			trig: simple(10, none), policy: PolicySmart, next: sec(120), tt: 2, now: sec(450),
			misfired: true, after: quartzState{Next: sec(450), Start: sec(450), RC: 8, TT: 0},
			fires: []Fire{{sec(450), sec(420)}},
			final: State{Next: sec(510), Prev: sec(450), Start: sec(450), TimesTriggered: 1, RepeatCount: 8}},
		{id: "S3 rescheduleNowWithRemainingRepeatCount",
			trig: simple(10, none), policy: PolicyRescheduleNowWithRemainingRepeatCount, next: sec(120), tt: 2, now: sec(450),
			misfired: true, after: quartzState{Next: sec(450), Start: sec(450), RC: 3, TT: 0},
			fires: []Fire{{sec(450), sec(420)}},
			final: State{Next: sec(510), Prev: sec(450), Start: sec(450), TimesTriggered: 1, RepeatCount: 3}},
		{id: "S4 fireNow with repeats = rescheduleNowWithRemainingRepeatCount",
			trig: simple(10, none), policy: PolicyFireNow, next: sec(120), tt: 2, now: sec(450),
			misfired: true, after: quartzState{Next: sec(450), Start: sec(450), RC: 3, TT: 0},
			fires: []Fire{{sec(450), sec(420)}},
			final: State{Next: sec(510), Prev: sec(450), Start: sec(450), TimesTriggered: 1, RepeatCount: 3}},
		{id: "S5 rescheduleNextWithRemainingCount",
			trig: simple(10, none), policy: PolicyRescheduleNextWithRemainingCount, next: sec(120), tt: 2, now: sec(450),
			misfired: true, after: quartzState{Next: sec(480), Start: T0, RC: 10, TT: 8},
			final: State{Next: sec(480), Start: T0, TimesTriggered: 8, RepeatCount: 10}},
		{id: "S6 rescheduleNextWithExistingCount",
			trig: simple(10, none), policy: PolicyRescheduleNextWithExistingCount, next: sec(120), tt: 2, now: sec(450),
			misfired: true, after: quartzState{Next: sec(480), Start: T0, RC: 10, TT: 2},
			final: State{Next: sec(480), Start: T0, TimesTriggered: 2, RepeatCount: 10}},
		{id: "S7 smart = rescheduleNextWithRemainingCount when repeating forever",
			trig: simple(-1, none), policy: PolicySmart, next: sec(120), tt: 2, now: sec(450),
			misfired: true, after: quartzState{Next: sec(480), Start: T0, RC: -1, TT: 8},
			final: State{Next: sec(480), Start: T0, TimesTriggered: 8, RepeatCount: -1}},
		{id: "S8 rescheduleNextWithRemainingCount after the last slot completes",
			trig: simple(3, none), policy: PolicyRescheduleNextWithRemainingCount, next: sec(120), tt: 2, now: sec(450),
			misfired: true, after: quartzState{Next: none, Start: T0, RC: 3, TT: 2},
			final: State{Start: T0, TimesTriggered: 2, RepeatCount: 3, Complete: true}},
		{id: "S9 rescheduleNow past the end rewrites the counts, then completes",
			trig: simple(10, sec(300)), policy: PolicyRescheduleNowWithRemainingRepeatCount, next: sec(120), tt: 2, now: sec(450),
			misfired: true, after: quartzState{Next: none, Start: T0, RC: 3, TT: 0},
			final: State{Start: T0, TimesTriggered: 0, RepeatCount: 3, Complete: true}},
		{id: "S10 remaining = 10-(8+1)",
			trig: simple(10, none), policy: PolicyRescheduleNowWithRemainingRepeatCount, next: sec(480), tt: 8, now: sec(570),
			misfired: true, after: quartzState{Next: sec(570), Start: sec(570), RC: 1, TT: 0},
			fires: []Fire{{sec(570), sec(540)}},
			final: State{Next: sec(630), Prev: sec(570), Start: sec(570), TimesTriggered: 1, RepeatCount: 1}},
		{id: "S11 rescheduleNow keeps timesTriggered when repeating forever",
			trig: simple(-1, none), policy: PolicyRescheduleNowWithExistingRepeatCount, next: sec(120), tt: 2, now: sec(450),
			misfired: true, after: quartzState{Next: sec(450), Start: sec(450), RC: -1, TT: 2},
			fires: []Fire{{sec(450), sec(420)}},
			final: State{Next: sec(510), Prev: sec(450), Start: sec(450), TimesTriggered: 3, RepeatCount: -1}},
		{id: "S12 a one-shot with rescheduleNext is lost",
			trig: simple(0, none), policy: PolicyRescheduleNextWithExistingCount, next: T0, now: sec(600),
			misfired: true, after: quartzState{Next: none, Start: T0, RC: 0, TT: 0},
			final: State{Start: T0, TimesTriggered: 0, RepeatCount: 0, Complete: true}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			s := Initial(tc.trig)
			s.Next, s.TimesTriggered = tc.next, tc.tt

			if tc.misfired {
				got, _ := tc.trig.misfire(tc.policy, s, tc.now)
				want := quartzState{Next: tc.after.Next, Start: tc.after.Start, RC: tc.after.RC, TT: tc.after.TT}
				if !got.Next.Equal(want.Next) || got.Complete != want.Next.IsZero() || !got.Start.Equal(want.Start) ||
					got.RepeatCount != want.RC || got.TimesTriggered != want.TT {
					t.Errorf("updateAfterMisfire: %+v; want %+v", got, want)
				}
			}

			res := Catchup{Policy: tc.policy, Threshold: time.Minute}.Due(tc.trig, s, tc.now)
			if res.Misfired != tc.misfired {
				t.Errorf("Misfired = %v; want %v", res.Misfired, tc.misfired)
			}
			if !equalFires(res.Fires, tc.fires) {
				t.Errorf("Fires = %v; want %v", res.Fires, tc.fires)
			}
			if !equalState(res.State, tc.final) {
				t.Errorf("State = %+v; want %+v", res.State, tc.final)
			}
			if res.Dropped != 0 {
				t.Errorf("Dropped = %d; want 0", res.Dropped)
			}
		})
	}
}

func equalFires(a, b []Fire) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].At.Equal(b[i].At) || !a[i].Scheduled.Equal(b[i].Scheduled) {
			return false
		}
	}
	return true
}

func equalState(a, b State) bool {
	return a.Next.Equal(b.Next) && a.Prev.Equal(b.Prev) && a.Start.Equal(b.Start) &&
		a.TimesTriggered == b.TimesTriggered && a.RepeatCount == b.RepeatCount && a.Complete == b.Complete
}
