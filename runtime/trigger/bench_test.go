package trigger

import (
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
)

// An ordinary tick: one fire on time.
func BenchmarkDueOnTime(b *testing.B) {
	trig := Every(time.Minute, T0)
	s := Initial(trig)
	b.ReportAllocs()
	for b.Loop() {
		Catchup{}.Due(trig, s, sec(1))
	}
}

// A per-second cron trigger after a day's outage with the default policy:
// bisection finds the latest missed slot (one run now).
func BenchmarkDueFireOnceNowAfterADay(b *testing.B) {
	trig := Cron{Schedule: every(time.Second), Start: T0}
	s := Initial(trig)
	b.ReportAllocs()
	for b.Loop() {
		Catchup{}.Due(trig, s, sec(86400.5))
	}
}

// The same outage with ignoreMisfires walks all 86,401 missed slots to keep
// the last DefaultMaxFires and count the rest.
func BenchmarkDueIgnoreMisfiresAfterADayCron(b *testing.B) {
	trig := Cron{Schedule: every(time.Second), Start: T0}
	s := Initial(trig)
	b.ReportAllocs()
	for b.Loop() {
		Catchup{Policy: PolicyIgnoreMisfires}.Due(trig, s, sec(86400.5))
	}
}

func BenchmarkDueIgnoreMisfiresAfterADaySimple(b *testing.B) {
	trig := Every(time.Second, T0)
	s := Initial(trig)
	b.ReportAllocs()
	for b.Loop() {
		Catchup{Policy: PolicyIgnoreMisfires}.Due(trig, s, sec(86400.5))
	}
}

// The same replay with the real cron engine: the walk costs one
// cron.Schedule.Next per missed slot.
func BenchmarkDueIgnoreMisfiresAfterADayRealCron(b *testing.B) {
	trig := Cron{Schedule: cron.Schedule{Expr: cron.MustParse("* * * * * ?")}, Start: T0}
	s := Initial(trig)
	b.ReportAllocs()
	for b.Loop() {
		Catchup{Policy: PolicyIgnoreMisfires}.Due(trig, s, sec(86400.5))
	}
}

// fireOnceNow after a year's outage of a per-second real cron schedule:
// bisection keeps the identity search logarithmic.
func BenchmarkDueFireOnceNowAfterAYearRealCron(b *testing.B) {
	trig := Cron{Schedule: cron.Schedule{Expr: cron.MustParse("* * * * * ?")}, Start: T0}
	s := Initial(trig)
	b.ReportAllocs()
	for b.Loop() {
		Catchup{}.Due(trig, s, sec(365*86400+0.5))
	}
}
