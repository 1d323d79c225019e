package cron

import (
	"testing"
	"time"
)

// FuzzParse checks that Parse never panics and that whatever it accepts
// behaves: Next is strictly later (or the zero time) with whole seconds, a
// fire time is its own successor from one second earlier, and String
// round-trips to an Equal expression.
func FuzzParse(f *testing.F) {
	for _, v := range briefVectors {
		f.Add(v.expr, int64(1735689600), uint8(0))
	}
	for _, s := range []string{
		"0 30 2 * * ?", "0 */15 * * * ?", "0 45 1 * * ?", "30 2 * * *", "0 0 1,15 * MON",
		"@daily", "@every 5m", "0 0 12 ? * fril", "0 0 12 L-3W 2 ? 2099", "* * * * * ? */7",
	} {
		f.Add(s, int64(1741500000), uint8(1))
		f.Add(s, int64(1759593600), uint8(2))
	}
	zones := []*time.Location{time.UTC, mustZone(f, "America/New_York"), mustZone(f, "Australia/Lord_Howe"), mustZone(f, "Pacific/Chatham"), mustZone(f, "America/Sao_Paulo")}
	f.Fuzz(func(t *testing.T, expr string, unix int64, zone uint8) {
		e, err := Parse(expr)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("Parse(%q) error %T, want *SyntaxError", expr, err)
			}
			return
		}
		again, err := Parse(e.String())
		if err != nil {
			t.Fatalf("Parse(String()) of %q = %q: %v", expr, e.String(), err)
		}
		if !again.Equal(e) || again.String() != e.String() {
			t.Fatalf("%q: String() = %q does not round-trip", expr, e.String())
		}
		loc := zones[int(zone)%len(zones)]
		// Keep starts within 1900-2300 so the arithmetic stays in range.
		at := time.Unix(-2208988800+mod(unix, 400*366*86400), 0).In(loc)
		for _, dst := range []DSTPolicy{DSTQuartz, DSTShiftGap} {
			s := Schedule{Expr: e, Location: loc, DST: dst}
			got := s.Next(at)
			if got.IsZero() {
				continue
			}
			if !got.After(at) || got.Nanosecond() != 0 {
				t.Fatalf("%q in %v (%v): Next(%s) = %s, not a later whole second", expr, loc, dst, at, got)
			}
			if dst == DSTQuartz {
				if again := s.Next(got.Add(-time.Second)); !again.Equal(got) {
					t.Fatalf("%q in %v: Next(%s) = %s but Next(that - 1s) = %s", expr, loc, at, got, again)
				}
			}
		}
	})
}
