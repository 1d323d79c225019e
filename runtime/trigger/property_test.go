package trigger

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
)

// realCrons are runtime/cron schedules for the property tests, each with a
// base time a few hours before a DST change in its zone, where Quartz's
// wall-clock search is least regular (a gap, the repeated hour).
var realCrons = []struct {
	expr, zone string
	base       string
}{
	{"0 */15 * * * ?", "America/New_York", "2025-11-01T22:00:00-04:00"},
	{"0 30 1 * * ?", "America/New_York", "2025-11-01T22:00:00-04:00"},
	{"0 30 2 * * ?", "America/New_York", "2025-03-08T22:00:00-05:00"},
	{"0 */10 * * * ?", "Australia/Lord_Howe", "2025-10-04T22:00:00+10:30"},
	{"*/7 * * * *", "Europe/London", "2025-03-29T22:00:00Z"},
	{"* * * * * ?", "UTC", "2025-01-01T00:00:00Z"},
	{"0 0 0 1 1 ? 2025", "UTC", "2024-12-31T22:00:00Z"},
}

// dueCase is one random scenario: a trigger, a first evaluation at now1
// (which produces a reachable state) and a second at now2 >= now1.
type dueCase struct {
	cron      bool
	real      uint8  // cron: 0 = every(interval), otherwise realCrons[real-1] (mod)
	startOff  int64  // seconds from T0
	interval  uint16 // seconds (cron: the schedule's step)
	repeat    int8   // simple: repeat count, folded into [-1, 127]
	endOff    int32  // seconds after start, 0 = no end
	policy    uint8
	threshold uint16 // seconds, 0 = default
	maxFires  uint8  // 0 = default
	now1      uint32 // seconds from T0
	now2      uint32 // seconds after now1
	tt        int8   // simple: if > 0, the initial TimesTriggered (not reachable, as in oracle vectors)
}

func (c dueCase) base() time.Time {
	if !c.cron || c.real == 0 {
		return T0
	}
	b, err := time.Parse(time.RFC3339, realCrons[int(c.real-1)%len(realCrons)].base)
	if err != nil {
		panic(err)
	}
	return b
}

func (c dueCase) build() (Trigger, Catchup) {
	start := c.base().Add(time.Duration(c.startOff%(1<<20)) * time.Second)
	var end time.Time
	if c.endOff != 0 {
		end = start.Add(time.Duration(c.endOff%(1<<20)) * time.Second)
	}
	step := time.Duration(c.interval%3600+1) * time.Second
	var trig Trigger
	if c.cron {
		var sched CronSchedule = every(step)
		if c.real != 0 {
			rc := realCrons[int(c.real-1)%len(realCrons)]
			loc, err := cron.LoadLocation(rc.zone)
			if err != nil {
				panic(err)
			}
			sched = cron.Schedule{Expr: cron.MustParse(rc.expr), Location: loc}
		}
		trig = Cron{Schedule: sched, Start: start.Add(time.Duration(c.startOff%1000) * time.Millisecond), End: end}
	} else {
		rc := max(int(c.repeat), RepeatForever)
		trig = Simple{Start: start, Interval: step, RepeatCount: rc, End: end}
	}
	ps := Policies(trig.Kind())
	return trig, Catchup{
		Policy:    ps[int(c.policy)%len(ps)],
		Threshold: time.Duration(c.threshold) * time.Second,
		MaxFires:  int(c.maxFires),
	}
}

// checkDue states the properties every Due result has.
func checkDue(t *testing.T, c dueCase) {
	t.Helper()
	trig, catchup := c.build()
	if trig.Validate() != nil {
		return
	}
	maxFires := catchup.MaxFires
	if maxFires <= 0 {
		maxFires = DefaultMaxFires
	}
	now1 := c.base().Add(time.Duration(c.now1%(1<<22)) * time.Second)
	if c.cron && c.real != 0 {
		now1 = c.base().Add(time.Duration(c.now1%(1<<15)) * time.Second)
	}
	span := uint32(1 << 22)
	if c.cron && c.real != 0 {
		span = 1 << 15 // the real engine is slower; stay near the DST change
	}
	now2 := now1.Add(time.Duration(c.now2%span)*time.Second + time.Duration(c.now2%1000)*time.Millisecond)

	var last time.Time // latest Scheduled handed out so far
	s := Initial(trig)
	if c.tt > 0 && !c.cron {
		s.TimesTriggered = int(c.tt)
	}
	for _, now := range []time.Time{now1, now2} {
		res := catchup.Due(trig, s, now)
		if len(res.Fires) > maxFires {
			t.Fatalf("%+v: %d fires exceed MaxFires %d", c, len(res.Fires), maxFires)
		}
		if res.Misfired && catchup.Policy == PolicyIgnoreMisfires {
			t.Fatalf("%+v: ignoreMisfires reported a misfire", c)
		}
		for i, f := range res.Fires {
			if f.At.After(now) {
				t.Fatalf("%+v: fire %d at %v is after now %v", c, i, f.At, now)
			}
			if f.Scheduled.After(f.At) {
				t.Fatalf("%+v: fire %d stands for %v, after its run time %v", c, i, f.Scheduled, f.At)
			}
			if !last.IsZero() && !f.Scheduled.After(last) {
				t.Fatalf("%+v: fire %d stands for %v, not after the previous %v", c, i, f.Scheduled, last)
			}
			if i > 0 && f.At.Before(res.Fires[i-1].At) {
				t.Fatalf("%+v: fire %d at %v is before fire %d at %v", c, i, f.At, i-1, res.Fires[i-1].At)
			}
			if cr, ok := trig.(Cron); ok && !f.Scheduled.Equal(f.At) {
				// A now-fire stands for a slot whose successor is after now.
				if n, ok := cr.FireTimeAfter(f.Scheduled); ok && !n.After(now) {
					t.Fatalf("%+v: now-fire stands for %v, but the slot %v is later and not after now %v", c, f.Scheduled, n, now)
				}
			}
			last = f.Scheduled
		}
		if !res.State.Complete && !res.State.Next.After(now) {
			t.Fatalf("%+v: state %+v is neither complete nor after now %v", c, res.State, now)
		}
		if res.State.Complete && !res.State.Next.IsZero() {
			t.Fatalf("%+v: complete state with a next time %+v", c, res.State)
		}
		if again := catchup.Due(trig, s, now); !equalFires(again.Fires, res.Fires) || !equalState(again.State, res.State) {
			t.Fatalf("%+v: Due is not deterministic", c)
		}
		if !res.Misfired {
			checkReplay(t, c, trig, s, now, res, maxFires)
		}
		s = res.State
	}
}

// checkReplay compares a Due without misfire (always the case with
// ignoreMisfires) with the plain walk: the fires are the last maxFires slots
// in [s.Next, now] and Dropped counts the rest.
func checkReplay(t *testing.T, c dueCase, trig Trigger, s State, now time.Time, res Result, maxFires int) {
	t.Helper()
	var slots []time.Time
	for !s.Complete && !s.Next.After(now) {
		slots = append(slots, s.Next)
		s = Triggered(trig, s)
	}
	if keep := min(len(slots), maxFires); res.Dropped != len(slots)-keep {
		t.Fatalf("%+v: dropped %d of %d slots with cap %d", c, res.Dropped, len(slots), maxFires)
	}
	tail := slots[res.Dropped:]
	for i, f := range res.Fires {
		if !f.At.Equal(tail[i]) || !f.Scheduled.Equal(tail[i]) {
			t.Fatalf("%+v: replayed fire %d = %+v; want slot %v", c, i, f, tail[i])
		}
	}
	if !equalState(s, res.State) {
		t.Fatalf("%+v: state after replay %+v; want %+v", c, res.State, s)
	}
}

func TestDueProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		interval := r.IntN(600)
		endOff := r.IntN(4) * r.IntN(20000)
		if r.IntN(2) == 0 {
			endOff = r.IntN(4) * r.IntN(60) * (interval + 1) // an end on the grid
		}
		checkDue(t, dueCase{
			cron:      r.IntN(2) == 0,
			real:      uint8(r.IntN(2) * r.IntN(len(realCrons)+1)),
			startOff:  r.Int64N(7200) - 3600,
			interval:  uint16(interval),
			repeat:    int8(r.IntN(40) - 2),
			endOff:    int32(endOff),
			policy:    uint8(r.IntN(7)),
			threshold: uint16(r.IntN(3) * r.IntN(600)),
			maxFires:  uint8(r.IntN(3) * r.IntN(50)),
			now1:      uint32(r.IntN(20000)),
			now2:      uint32(r.IntN(3) * r.IntN(200000)),
			tt:        int8(r.IntN(2) * r.IntN(20)),
		})
	}
}

// The latest missed slot of a cron trigger, found by bisection, is the one a
// plain walk finds.
func TestCronLatestSlotMatchesWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		step := time.Duration(r.IntN(900)+1) * time.Second
		trig := Cron{Schedule: every(step), Start: T0}
		if r.IntN(2) == 0 {
			trig.End = T0.Add(time.Duration(r.IntN(100000)) * time.Second)
		}
		s := Initial(trig)
		if s.Complete {
			continue
		}
		now := s.Next.Add(time.Duration(r.Int64N(int64(200000 * time.Second))))
		want := s.Next
		for w := s; ; {
			w = Triggered(trig, w)
			if w.Complete || w.Next.After(now) {
				break
			}
			want = w.Next
		}
		if got := trig.latestSlot(s, now); !got.Equal(want) {
			t.Fatalf("step %v end %v now %v: latestSlot = %v; want %v", step, trig.End, now, got, want)
		}
	}
}

func FuzzDue(f *testing.F) {
	f.Add(true, uint8(0), int64(0), uint16(299), int8(0), int32(0), uint8(0), uint16(0), uint8(0), uint32(450), uint32(3600), int8(0))
	f.Add(true, uint8(1), int64(0), uint16(0), int8(0), int32(0), uint8(1), uint16(0), uint8(0), uint32(10800), uint32(7200), int8(0))
	f.Add(false, uint8(0), int64(0), uint16(59), int8(10), int32(300), uint8(3), uint16(60), uint8(5), uint32(450), uint32(100000), int8(2))
	f.Add(false, uint8(0), int64(-60), uint16(0), int8(-1), int32(0), uint8(0), uint16(0), uint8(1), uint32(86400), uint32(1), int8(0))
	f.Fuzz(func(t *testing.T, cron bool, real uint8, startOff int64, interval uint16, repeat int8, endOff int32,
		policy uint8, threshold uint16, maxFires uint8, now1, now2 uint32, tt int8) {
		checkDue(t, dueCase{cron, real, startOff, interval, repeat, endOff, policy, threshold, maxFires, now1, now2, tt})
	})
}
