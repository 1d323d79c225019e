package cron

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestNextMatchesBruteForce checks the odometer search in UTC against a
// slow, obviously correct search: walk day by day with time.Time, decide
// each day with a separate implementation of the day rules (L, W, #, the
// standard OR rule), and scan the day's seconds in order.

func bruteDayMatches(s *spec, day time.Time) bool {
	y, m, d := day.Date()
	last := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
	wd := func(d int) time.Weekday { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Weekday() }
	nearestWeekday := func(n int) int {
		switch wd(n) {
		case time.Saturday:
			if n == 1 {
				return 3
			}
			return n - 1
		case time.Sunday:
			if n == last {
				return n - 2
			}
			return n + 1
		}
		return n
	}
	domOK := func() bool {
		switch s.domKind {
		case domLast:
			return d == last-int(s.domN)
		case domLastWeekday:
			return last-int(s.domN) >= 1 && d == nearestWeekday(last-int(s.domN))
		case domWeekday:
			return int(s.domN) <= last && d == nearestWeekday(int(s.domN))
		}
		return s.dom&(1<<d) != 0
	}
	dowOK := func() bool {
		w := int(day.Weekday())
		switch s.dowKind {
		case dowLast:
			return w == int(s.dowDay) && d+7 > last
		case dowNth:
			return w == int(s.dowDay) && (d-1)/7+1 == int(s.dowNthK)
		}
		return s.dow&(1<<w) != 0
	}
	switch s.days {
	case dayByDOM:
		return domOK()
	case dayByDOW:
		return dowOK()
	case dayBoth:
		return domOK() && dowOK()
	}
	return domOK() || dowOK()
}

func bruteNext(s *spec, after time.Time, days int) time.Time {
	from := after.Truncate(time.Second).Add(time.Second)
	day := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
	for range days {
		y := day.Year()
		if y >= minYear && y <= horizonYear && s.years[(y-minYear)/64]&(1<<((y-minYear)%64)) != 0 &&
			s.month&(1<<int(day.Month())) != 0 && bruteDayMatches(s, day) {
			for h := range 24 {
				for mi := range 60 {
					if s.hour&(1<<h) == 0 || s.minute&(1<<mi) == 0 {
						continue
					}
					for sec := range 60 {
						t := day.Add(time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute + time.Duration(sec)*time.Second)
						if s.second&(1<<sec) != 0 && !t.Before(from) {
							return t
						}
					}
				}
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}
}

// genQuartzExpr returns a random Quartz expression, biased towards the
// day-field specials.
func genQuartzExpr(r *rand.Rand) string {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	num := func(lo, hi int) int { return lo + r.IntN(hi-lo+1) }
	simple := func(lo, hi int) string {
		switch r.IntN(6) {
		case 0:
			return "*"
		case 1:
			return fmt.Sprintf("%d/%d", num(lo, hi), num(1, hi-lo))
		case 2:
			return fmt.Sprintf("%d-%d", num(lo, hi), num(lo, hi)) // may wrap
		case 3:
			return fmt.Sprintf("%d,%d", num(lo, hi), num(lo, hi))
		default:
			return fmt.Sprint(num(lo, hi))
		}
	}
	dom, dow := "?", "?"
	if r.IntN(2) == 0 {
		dom = pick(simple(1, 31), "L", fmt.Sprintf("L-%d", num(0, 30)), "LW", fmt.Sprintf("L-%dW", num(0, 30)), fmt.Sprintf("%dW", num(1, 31)), "*")
	} else {
		dow = pick(simple(1, 7), "L", fmt.Sprintf("%dL", num(1, 7)), fmt.Sprintf("%d#%d", num(1, 7), num(1, 5)), "MON-FRI", "*")
	}
	f := []string{simple(0, 59), simple(0, 59), simple(0, 23), dom, simple(1, 12), dow}
	if r.IntN(4) == 0 {
		a := num(2020, 2040)
		f = append(f, fmt.Sprintf("%d-%d", a, a+num(0, 5)))
	}
	return strings.Join(f, " ")
}

func TestNextMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2026))
	const n = 1500
	checked := 0
	kinds := map[string]int{}
	for range n {
		var expr string
		if r.IntN(4) == 0 {
			expr = genStandardExpr(r)
		} else {
			expr = genQuartzExpr(r)
		}
		e, err := Parse(expr)
		if err != nil {
			continue // the generators also produce invalid expressions
		}
		at := time.Unix(1577836800+r.Int64N(15*365*86400), int64(r.IntN(1e9))).UTC()
		for range 3 {
			got := e.Next(at, time.UTC)
			want := bruteNext(&e.spec, at, 3*366)
			if want.IsZero() {
				if !got.IsZero() && got.Sub(at) < 3*365*24*time.Hour {
					t.Errorf("%q after %s: Next = %s, brute force finds nothing within 3 years", expr, at, got)
				}
				break
			}
			if !got.Equal(want) {
				t.Errorf("%q after %s: Next = %s, brute force %s", expr, at.Format(time.RFC3339Nano), fmtTime(got), fmtTime(want))
				break
			}
			checked++
			kinds[fmt.Sprintf("dom=%d dow=%d days=%d", e.spec.domKind, e.spec.dowKind, e.spec.days)]++
			at = got
		}
	}
	t.Logf("%d Next results checked against brute force, by day-rule kind: %v", checked, kinds)
}
