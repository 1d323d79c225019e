package cron

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestNextDSTMatchesWallWalk checks Next near DST transitions against a
// slow reference that walks wall-clock minutes one by one and decides
// existence and ambiguity with time.Date round trips, independently of
// resolve and quartzLoop. The reference is exact for DSTShiftGap
// everywhere, and for DSTQuartz where gaps start on the hour and last an
// hour; Lord Howe's half-hour gap makes Quartz's path matter (see
// quartzloop.go), so DSTQuartz is compared there only by the oracle.
// The reference rules:
//
//   - a wall time that exists once fires at that instant;
//   - a wall time that exists twice fires at the later instant;
//   - a wall time that does not exist is read with the offset from a day
//     earlier (Java's lenient calendar), and the walk continues from the
//     resulting wall time (DSTQuartz), or fires at the end of the gap
//     (DSTShiftGap).

type wallTime struct{ y, mo, d, h, mi int }

func (w wallTime) add(min int) wallTime {
	t := time.Date(w.y, time.Month(w.mo), w.d, w.h, w.mi+min, 0, 0, time.UTC)
	return wallTime{t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute()}
}

func wallOfTime(t time.Time) wallTime {
	return wallTime{t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute()}
}

// instantsOf returns the instants whose wall time in loc is w.
func instantsOf(w wallTime, loc *time.Location) []time.Time {
	guess := time.Date(w.y, time.Month(w.mo), w.d, w.h, w.mi, 0, 0, loc)
	var out []time.Time
	for _, d := range []time.Duration{-2 * time.Hour, -time.Hour, -30 * time.Minute, 0, 30 * time.Minute, time.Hour, 2 * time.Hour} {
		if t := guess.Add(d); wallOfTime(t.In(loc)) == w {
			out = append(out, t)
		}
	}
	return out
}

func refNextMinute(s *spec, after time.Time, loc *time.Location, dst DSTPolicy, maxSteps int) time.Time {
	from := after.Truncate(time.Second).Add(time.Second)
	if from.Second() != 0 { // schedules here fire on whole minutes
		from = from.Truncate(time.Minute).Add(time.Minute)
	}
	w := wallOfTime(from.In(loc))
	for range maxSteps {
		c := civil{w.y, w.mo, w.d, w.h, w.mi, 0}
		if got, ok := s.search(c); !ok || got != c {
			w = w.add(1)
			continue
		}
		ins := instantsOf(w, loc)
		if len(ins) > 0 {
			latest := ins[0]
			for _, t := range ins {
				if t.After(latest) {
					latest = t
				}
			}
			if !latest.Before(from) {
				return latest.In(loc)
			}
			w = w.add(1)
			continue
		}
		// In a gap: read w with yesterday's offset.
		_, off := time.Date(w.y, time.Month(w.mo), w.d-1, w.h, w.mi, 0, 0, loc).Zone()
		u := time.Date(w.y, time.Month(w.mo), w.d, w.h, w.mi, 0, 0, time.UTC).Add(-time.Duration(off) * time.Second)
		if dst == DSTShiftGap {
			start, _ := u.In(loc).ZoneBounds()
			return start.In(loc)
		}
		w = wallOfTime(u.In(loc))
	}
	return time.Time{}
}

func TestNextDSTMatchesWallWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 2026))
	zones := []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Sao_Paulo", "Pacific/Apia", "America/Santiago"}
	minutes := []string{"0", "30", "*/15", "*/10", "20,40", "0/7", "*", "45"}
	hours := []string{"*", "0", "1", "2", "3", "1-3", "0,2", "23", "*/2"}
	checked := 0
	for _, name := range zones {
		loc := mustZone(t, name)
		// Collect transitions between 2011 and 2026.
		var transitions []time.Time
		at := time.Date(2011, 1, 1, 0, 0, 0, 0, time.UTC)
		for at.Year() < 2026 {
			_, end := at.In(loc).ZoneBounds()
			if end.IsZero() {
				break
			}
			if !end.After(at) {
				// Slim tz data (the embedded database is slim): past its
				// explicit transitions Go reports a zero-length period at
				// each new year. Step over it.
				at = at.Add(time.Second)
				continue
			}
			_, before := end.Add(-time.Second).In(loc).Zone()
			if _, after := end.In(loc).Zone(); after != before {
				transitions = append(transitions, end)
			}
			at = end
		}
		if len(transitions) == 0 {
			t.Fatalf("%s: no transitions", name)
		}
		for range 150 {
			tr := transitions[r.IntN(len(transitions))]
			start := tr.Add(time.Duration(r.Int64N(int64(48*time.Hour))) - 24*time.Hour).Truncate(time.Second)
			expr := strings.Join([]string{"0", minutes[r.IntN(len(minutes))], hours[r.IntN(len(hours))], "*", "*", "?"}, " ")
			e := MustParse(expr)
			for _, dst := range []DSTPolicy{DSTQuartz, DSTShiftGap} {
				if dst == DSTQuartz && name == "Australia/Lord_Howe" {
					continue
				}
				s := Schedule{Expr: e, Location: loc, DST: dst}
				cur := start
				for range 4 {
					got := s.Next(cur)
					want := refNextMinute(&e.spec, cur, loc, dst, 3*24*60)
					if !got.Equal(want) {
						t.Errorf("%s %q %v after %s: Next = %s, reference %s", name, expr, dst, cur.In(loc).Format(time.RFC3339), fmtTime(got), fmtTime(want))
						break
					}
					checked++
					cur = got
				}
			}
		}
	}
	t.Logf("%d Next results near DST transitions checked against the wall-walk reference", checked)
}
