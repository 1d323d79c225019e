package cron

import (
	"testing"
	"time"

	robfig "github.com/robfig/cron/v3"
)

// Benchmarks compare with robfig/cron v3 on expressions both accept.
// Sub-benchmarks are named .../expr=<name>/impl=<chronos|robfig>, so
//
//	go test -bench . -count 10 ./runtime/cron | benchstat -col /impl -
//
// puts the two implementations side by side.

type benchExpr struct {
	name, expr string
	robfig     func(string) (robfig.Schedule, error) // nil: chronos only
}

var robfigSeconds = robfig.NewParser(robfig.Second | robfig.Minute | robfig.Hour | robfig.Dom | robfig.Month | robfig.Dow).Parse

var benchExprs = []benchExpr{
	{"std-every5min", "*/5 * * * *", robfig.ParseStandard},
	{"std-daily", "0 0 * * *", robfig.ParseStandard},
	{"std-monthly", "30 2 1 * *", robfig.ParseStandard},
	{"std-workhours", "0 9-17 * * MON-FRI", robfig.ParseStandard},
	{"std-mixed", "15,45 */2 1-10 JAN-JUN *", robfig.ParseStandard},
	{"std-feb29", "0 0 29 2 *", robfig.ParseStandard},
	{"q-every10s", "*/10 * * * * ?", robfigSeconds},
	{"q-weekdays-noon", "0 0 12 ? * MON-FRI", robfigSeconds},
	{"q-quarterhour-office", "0 0/15 8-18 ? * MON-FRI", robfigSeconds},
	{"q-yearly", "0 0 0 1 JAN ?", robfigSeconds},
	{"q-last-day", "0 15 10 L * ?", nil},
	{"q-third-friday", "0 0 12 ? * 6#3", nil},
	{"q-last-weekday", "0 0 12 LW * ?", nil},
}

func BenchmarkParse(b *testing.B) {
	for _, be := range benchExprs {
		b.Run("expr="+be.name+"/impl=chronos", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(be.expr); err != nil {
					b.Fatal(err)
				}
			}
		})
		if be.robfig != nil {
			b.Run("expr="+be.name+"/impl=robfig", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := be.robfig(be.expr); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkNext(b *testing.B) {
	start := time.Date(2025, 6, 15, 10, 17, 23, 0, time.UTC)
	for _, zone := range []string{"UTC", "America/New_York"} {
		loc := mustZone(b, zone)
		at := start.In(loc)
		for _, be := range benchExprs {
			ours := Schedule{Expr: MustParse(be.expr), Location: loc}
			b.Run("zone="+zone+"/expr="+be.name+"/impl=chronos", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if ours.Next(at).IsZero() {
						b.Fatal("no next time")
					}
				}
			})
			if be.robfig == nil {
				continue
			}
			theirs, err := be.robfig(be.expr)
			if err != nil {
				b.Fatal(err)
			}
			if got, want := ours.Next(at), theirs.Next(at); !got.Equal(want) {
				b.Fatalf("%s: chronos %v, robfig %v", be.expr, got, want)
			}
			b.Run("zone="+zone+"/expr="+be.name+"/impl=robfig", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if theirs.Next(at).IsZero() {
						b.Fatal("no next time")
					}
				}
			})
		}
	}
}
