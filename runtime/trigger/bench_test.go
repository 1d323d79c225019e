package trigger

import (
	"testing"
	"time"
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
