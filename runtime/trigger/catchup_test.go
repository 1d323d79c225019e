package trigger

import (
	"testing"
	"time"
)

func TestDueHandsOutNothingBeforeTheNextFire(t *testing.T) {
	trig := Every(time.Minute, T0)
	s := Initial(trig)
	res := Catchup{}.Due(trig, s, sec(-1))
	if len(res.Fires) != 0 || res.Misfired || res.State != s {
		t.Fatalf("Due before the first fire = %+v; want nothing and the same state", res)
	}
}

func TestDueOnTimeFireRunsAtItsSlot(t *testing.T) {
	trig := Every(time.Minute, T0)
	res := Catchup{}.Due(trig, Initial(trig), sec(0.5))
	want := []Fire{{At: T0, Scheduled: T0}}
	if !equalFires(res.Fires, want) || res.Misfired {
		t.Fatalf("Due = %+v; want %v, not misfired", res, want)
	}
	if !res.State.Next.Equal(sec(60)) {
		t.Fatalf("Next = %v; want %v", res.State.Next, sec(60))
	}
}

func TestDueOnACompleteStateDoesNothing(t *testing.T) {
	trig := Simple{Start: T0}
	s := complete(Initial(trig))
	for _, p := range Policies(KindSimple) {
		if res := (Catchup{Policy: p}).Due(trig, s, sec(3600)); len(res.Fires) != 0 || res.Misfired || res.State != s {
			t.Errorf("%v: Due on a complete state = %+v", p, res)
		}
	}
}

func TestDueDefaultThresholdIsSixtySeconds(t *testing.T) {
	trig := Cron{Schedule: every(5 * time.Minute), Start: T0}
	c := Catchup{Policy: PolicyDoNothing}
	if res := c.Due(trig, Initial(trig), sec(59.999)); res.Misfired {
		t.Error("59.999s late misfired with the default threshold")
	}
	if res := c.Due(trig, Initial(trig), sec(60)); !res.Misfired {
		t.Error("60s late did not misfire with the default threshold")
	}
}

// Fires that are late but within the threshold are ordinary: all of them
// are handed out at their slots, whatever the policy.
func TestDueWithinThresholdDeliversEverySlot(t *testing.T) {
	trig := Cron{Schedule: every(time.Second), Start: T0}
	res := Catchup{Policy: PolicyDoNothing}.Due(trig, Initial(trig), sec(59.5))
	if res.Misfired || len(res.Fires) != 60 {
		t.Fatalf("Due = %d fires, misfired %v; want the 60 slots 0s..59s", len(res.Fires), res.Misfired)
	}
	if !res.Fires[59].At.Equal(sec(59)) || !res.State.Next.Equal(sec(60)) {
		t.Fatalf("last fire %v, next %v; want 59s and 60s", res.Fires[59].At, res.State.Next)
	}
}

// After a day's outage, ignoreMisfires replays only the most recent
// MaxFires slots; the older ones are dropped and counted, and the state
// moves past all of them.
func TestDueIgnoreMisfiresIsCapped(t *testing.T) {
	trig := Every(time.Minute, T0)
	now := sec(24 * 3600) // 1441 slots: 0s, 60s, ..., 86400s
	res := Catchup{Policy: PolicyIgnoreMisfires, MaxFires: 10}.Due(trig, Initial(trig), now)
	if len(res.Fires) != 10 || res.Dropped != 1431 {
		t.Fatalf("got %d fires, %d dropped; want 10 and 1431", len(res.Fires), res.Dropped)
	}
	for i, f := range res.Fires {
		want := sec(float64(24*3600 - 60*(9-i)))
		if !f.At.Equal(want) || !f.Scheduled.Equal(want) {
			t.Fatalf("fire %d = %+v; want at and for %v", i, f, want)
		}
	}
	if res.Misfired {
		t.Error("ignoreMisfires reported a misfire")
	}
	want := State{Next: now.Add(time.Minute), Prev: now, Start: T0, TimesTriggered: 1441, RepeatCount: -1}
	if !equalState(res.State, want) {
		t.Fatalf("State = %+v; want %+v", res.State, want)
	}
}

func TestDueDefaultCap(t *testing.T) {
	trig := Cron{Schedule: every(time.Minute), Start: T0}
	res := Catchup{Policy: PolicyIgnoreMisfires}.Due(trig, Initial(trig), sec(7200)) // 121 slots
	if len(res.Fires) != DefaultMaxFires || res.Dropped != 121-DefaultMaxFires {
		t.Fatalf("got %d fires, %d dropped; want %d and %d", len(res.Fires), res.Dropped, DefaultMaxFires, 121-DefaultMaxFires)
	}
}

// Exactly MaxFires due fires are all kept.
func TestDueCapBoundary(t *testing.T) {
	trig := Every(time.Minute, T0)
	res := Catchup{Policy: PolicyIgnoreMisfires, MaxFires: 5}.Due(trig, Initial(trig), sec(240))
	if len(res.Fires) != 5 || res.Dropped != 0 || !res.Fires[0].At.Equal(T0) {
		t.Fatalf("Due = %d fires from %v, %d dropped; want 5 from T0, none dropped", len(res.Fires), res.Fires[0].At, res.Dropped)
	}
}

// The cap bounds every policy, not only ignoreMisfires: a huge threshold
// turns a long outage into ordinary late fires.
func TestDueCapAppliesToOrdinaryLateFires(t *testing.T) {
	trig := Every(time.Second, T0)
	res := Catchup{Policy: PolicySmart, Threshold: 24 * time.Hour, MaxFires: 3}.Due(trig, Initial(trig), sec(9))
	want := []Fire{{sec(7), sec(7)}, {sec(8), sec(8)}, {sec(9), sec(9)}}
	if !equalFires(res.Fires, want) || res.Dropped != 7 || res.Misfired {
		t.Fatalf("Due = %+v; want %v with 7 dropped", res, want)
	}
}

// A fire the policy moves to now stands for the latest missed slot: two
// leaders that evaluate the same persisted state at different moments in
// the same slot window produce the same identity.
func TestDueNowFireIdentityIsTheLatestMissedSlot(t *testing.T) {
	trig := Cron{Schedule: every(5 * time.Minute), Start: T0}
	s := Initial(trig)
	a := Catchup{}.Due(trig, s, sec(3*3600+10))
	b := Catchup{}.Due(trig, s, sec(3*3600+299))
	want := sec(3 * 3600)
	for _, res := range []Result{a, b} {
		if len(res.Fires) != 1 || !res.Fires[0].Scheduled.Equal(want) {
			t.Fatalf("Due = %+v; want one fire for the slot %v", res.Fires, want)
		}
	}
	if a.Fires[0].At.Equal(b.Fires[0].At) {
		t.Fatal("both fires run at the same moment; the test needs two different nows")
	}
}

// The latest missed slot respects the end: after the end the identity is
// the last slot at or before it.
func TestDueNowFireIdentityRespectsEnd(t *testing.T) {
	cron := Cron{Schedule: every(5 * time.Minute), Start: T0, End: sec(1000)}
	res := Catchup{Policy: PolicyFireOnceNow}.Due(cron, Initial(cron), sec(5000))
	if len(res.Fires) != 1 || !res.Fires[0].Scheduled.Equal(sec(900)) || !res.Fires[0].At.Equal(sec(5000)) {
		t.Fatalf("cron Due = %+v; want one fire at 5000s for the slot 900s", res.Fires)
	}
	simple := Simple{Start: T0, Interval: time.Minute, RepeatCount: 100, End: sec(1000)}
	s := Initial(simple)
	s.Next, s.TimesTriggered = sec(120), 2
	res = Catchup{Policy: PolicyRescheduleNowWithExistingRepeatCount}.Due(simple, s, sec(990))
	if len(res.Fires) != 1 || !res.Fires[0].Scheduled.Equal(sec(960)) {
		t.Fatalf("simple Due = %+v; want one fire for the slot 960s", res.Fires)
	}
	// The slot at 1000s would be the end itself, which is excluded.
	s.Next = sec(120)
	simple.End = sec(1020)
	res = Catchup{Policy: PolicyRescheduleNowWithExistingRepeatCount}.Due(simple, s, sec(1010))
	if len(res.Fires) != 1 || !res.Fires[0].Scheduled.Equal(sec(960)) {
		t.Fatalf("simple Due = %+v; want one fire for the slot 960s (1020s is the excluded end)", res.Fires)
	}
}

// The identity of a repeating simple trigger's now-fire is bounded by its
// last slot.
func TestDueNowFireIdentityRespectsRepeatCount(t *testing.T) {
	trig := Simple{Start: T0, Interval: time.Minute, RepeatCount: 3}
	s := Initial(trig)
	s.Next, s.TimesTriggered = sec(60), 1
	res := Catchup{Policy: PolicyRescheduleNowWithExistingRepeatCount}.Due(trig, s, sec(3600))
	if len(res.Fires) != 1 || !res.Fires[0].Scheduled.Equal(sec(180)) {
		t.Fatalf("Due = %+v; want one fire for the last slot 180s", res.Fires)
	}
}

// A policy of the other kind (which ParsePolicy rejects) is treated as
// smartPolicy rather than silently doing something else.
func TestDueTreatsAPolicyOfTheOtherKindAsSmart(t *testing.T) {
	cron := Cron{Schedule: every(5 * time.Minute), Start: T0}
	want := Catchup{Policy: PolicySmart}.Due(cron, Initial(cron), sec(450))
	got := Catchup{Policy: PolicyRescheduleNextWithExistingCount}.Due(cron, Initial(cron), sec(450))
	if !equalFires(got.Fires, want.Fires) || !equalState(got.State, want.State) {
		t.Errorf("cron with a simple policy = %+v; want smartPolicy's %+v", got, want)
	}
	simple := Simple{Start: T0, Interval: time.Minute, RepeatCount: 10}
	want = Catchup{Policy: PolicySmart}.Due(simple, Initial(simple), sec(450))
	got = Catchup{Policy: PolicyDoNothing}.Due(simple, Initial(simple), sec(450))
	if !equalFires(got.Fires, want.Fires) || !equalState(got.State, want.State) {
		t.Errorf("simple with a cron policy = %+v; want smartPolicy's %+v", got, want)
	}
}

// Quartz's warning about SMART on a repeat-forever trigger: when the end
// passed during the outage, SMART means rescheduleNextWithRemainingCount,
// which finds no next slot, so the trigger completes without a last run.
func TestDueSmartEndTimeTrap(t *testing.T) {
	trig := Simple{Start: T0, Interval: time.Minute, RepeatCount: RepeatForever, End: sec(300)}
	s := Initial(trig)
	s.Next, s.TimesTriggered = sec(120), 2
	res := Catchup{}.Due(trig, s, sec(450))
	if len(res.Fires) != 0 || !res.Misfired || !res.State.Complete {
		t.Fatalf("Due = %+v; want misfired, complete, no fire", res)
	}
}

// Resuming a paused schedule is the same evaluation as any other: the
// scheduler calls Due with the state it kept while paused.
func TestDueOnResumeAppliesThePolicyOnce(t *testing.T) {
	trig := Cron{Schedule: every(5 * time.Minute), Start: T0}
	paused := Catchup{}.Due(trig, Initial(trig), sec(1)).State // fired at T0, then paused
	res := Catchup{}.Due(trig, paused, sec(7200+1))            // resumed two hours later
	if !res.Misfired || len(res.Fires) != 1 || !res.Fires[0].Scheduled.Equal(sec(7200)) {
		t.Fatalf("Due on resume = %+v; want one misfired run for the slot 7200s", res)
	}
	again := Catchup{}.Due(trig, res.State, sec(7200+2))
	if len(again.Fires) != 0 || again.Misfired {
		t.Fatalf("a second evaluation = %+v; want nothing", again)
	}
}
