package cron

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	robfig "github.com/robfig/cron/v3"
)

// The standard dialect is compared with github.com/robfig/cron/v3, the
// parser most Go users know. The two agree except where robfig departs from
// Vixie cron; those cases are classified (and counted), and the ones worth
// naming are pinned in TestRobfigDifferences.

// genStandardField returns a random field for the standard dialect within
// lo..hi, including forms only one side accepts.
func genStandardField(r *rand.Rand, lo, hi int, names []string, nameBase int) string {
	val := func() string {
		v := lo + r.IntN(hi-lo+1)
		if names != nil && v-nameBase >= 0 && v-nameBase < len(names) && r.IntN(4) == 0 {
			return names[v-nameBase]
		}
		return fmt.Sprint(v)
	}
	item := func() string {
		switch r.IntN(15) {
		case 0:
			return "*"
		case 1:
			return fmt.Sprintf("*/%d", 1+r.IntN(hi-lo+1))
		case 2, 3, 7, 8, 9:
			return val()
		case 4, 5, 10, 11, 12:
			a := lo + r.IntN(hi-lo+1)
			b := a + r.IntN(hi-a+1)
			return fmt.Sprintf("%d-%d", a, b)
		case 6, 13:
			a := lo + r.IntN(hi-lo+1)
			b := a + r.IntN(hi-a+1)
			return fmt.Sprintf("%d-%d/%d", a, b, 1+r.IntN(hi-lo+1))
		default:
			return fmt.Sprintf("%d/%d", lo+r.IntN(hi-lo+1), 1+r.IntN(hi-lo+1)) // robfig only
		}
	}
	if r.IntN(3) == 0 {
		return "*"
	}
	n := 1 + r.IntN(3)
	items := make([]string, n)
	for i := range items {
		items[i] = item()
	}
	return strings.Join(items, ",")
}

func genStandardExpr(r *rand.Rand) string {
	return strings.Join([]string{
		genStandardField(r, 0, 59, nil, 0),
		genStandardField(r, 0, 23, nil, 0),
		genStandardField(r, 1, 31, nil, 0),
		genStandardField(r, 1, 12, monthNames, 1),
		genStandardField(r, 0, 7, dayNames, 0),
	}, " ")
}

// robfigStarDiffers reports whether robfig's day rule differs from Vixie's
// for expr. Vixie ANDs the day fields when either *starts* with '*'. robfig
// ANDs when either contains an item "*" (or "*/1"): it treats "*/2" as
// restricted and "1,*" as unrestricted.
func robfigStarDiffers(expr string) bool {
	f := strings.Fields(expr)
	robfigStar := func(s string) bool {
		for _, it := range strings.Split(s, ",") {
			if it == "*" || it == "*/1" {
				return true
			}
		}
		return false
	}
	vixie := strings.HasPrefix(f[2], "*") || strings.HasPrefix(f[4], "*")
	return vixie != (robfigStar(f[2]) || robfigStar(f[4]))
}

// transitionBetween reports whether loc changes its offset in (a, b].
func transitionBetween(loc *time.Location, a, b time.Time) bool {
	if b.Before(a) {
		a, b = b, a
	}
	_, end := a.In(loc).ZoneBounds()
	return !end.IsZero() && !end.After(b)
}

func TestStandardMatchesRobfig(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 11))
	zones := []*time.Location{time.UTC, mustZone(t, "America/New_York"), mustZone(t, "Australia/Lord_Howe"), mustZone(t, "Europe/Berlin")}
	const n = 4000
	var compared int
	class := map[string]int{}
	for range n {
		expr := genStandardExpr(r)
		ours, oerr := Parse(expr)
		theirs, terr := robfig.ParseStandard(expr)
		switch {
		case oerr != nil && terr != nil:
			class["both reject"]++
			continue
		case oerr != nil:
			if !strings.Contains(oerr.Error(), "a step needs '*' or a range") {
				t.Errorf("%q: we reject (%v), robfig accepts", expr, oerr)
			}
			class["n/s: robfig accepts, Vixie and we reject"]++
			continue
		case terr != nil:
			if !strings.Contains(terr.Error(), "above maximum (6)") {
				t.Errorf("%q: robfig rejects (%v), we accept", expr, terr)
			}
			class["day-of-week 7: robfig rejects, Vixie and we accept (Sunday)"]++
			continue
		}
		if robfigStarDiffers(expr) {
			class["day fields: robfig's star rule differs from Vixie's"]++
			continue
		}
		loc := zones[r.IntN(len(zones))]
		at := time.Unix(1577836800+r.Int64N(10*365*86400), int64(r.IntN(1e9))).In(loc) // 2020-2030
		for i := range 5 {
			got, want := ours.Next(at, loc), theirs.Next(at)
			if !got.Equal(want) {
				switch {
				case want.IsZero() && got.Sub(at) > 5*365*24*time.Hour:
					class["robfig gives up after 5 years"]++
				case transitionBetween(loc, at, got) || transitionBetween(loc, at, want):
					class["DST transition: robfig differs (see TestRobfigDifferences)"]++
					t.Logf("DST: %q in %v after %s: ours %s, robfig %s", expr, loc, at.Format(time.RFC3339), fmtTime(got), fmtTime(want))
				default:
					t.Errorf("%q in %v after %s (step %d): ours %s, robfig %s", expr, loc, at.Format(time.RFC3339Nano), i, fmtTime(got), fmtTime(want))
				}
				break
			}
			compared++
			if got.IsZero() {
				break
			}
			at = got
		}
	}
	t.Logf("robfig: %d expressions, %d Next calls identical; classified: %v", n, compared, class)
}

// TestRobfigDifferences pins the cases where robfig/cron v3.0.1 departs from
// Vixie cron and we follow Vixie (and, for DST, Quartz). docs/cron.md lists
// them.
func TestRobfigDifferences(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	lordHowe := mustZone(t, "Australia/Lord_Howe")
	tests := []struct {
		name, expr    string
		loc           *time.Location
		start         string
		ours, robfigs string // RFC3339, "never", or "error"
	}{
		{name: "'*/2' in day-of-month is unrestricted (AND)", expr: "0 0 */2 * MON", loc: time.UTC, start: "2025-01-01T00:00:00Z",
			ours: "2025-01-13T00:00:00Z", robfigs: "2025-01-03T00:00:00Z"},
		{name: "n/s is an error", expr: "5/15 * * * *", loc: time.UTC, start: "2025-01-01T00:00:00Z",
			ours: "error", robfigs: "2025-01-01T00:05:00Z"},
		{name: "day-of-week 7 is Sunday", expr: "0 0 * * 7", loc: time.UTC, start: "2025-01-01T00:00:00Z",
			ours: "2025-01-05T00:00:00Z", robfigs: "error"},
		{name: "'*' later in a list does not make the field unrestricted", expr: "0 0 12-13,* * FRI", loc: time.UTC, start: "2025-01-01T00:00:00Z",
			ours: "2025-01-02T00:00:00Z", robfigs: "2025-01-03T00:00:00Z"},
		{name: "'?' is Quartz syntax", expr: "0 0 ? * MON", loc: time.UTC, start: "2025-01-01T00:00:00Z",
			ours: "error", robfigs: "2025-01-06T00:00:00Z"},
		{name: "gap: fixed time skipped", expr: "30 2 * * *", loc: ny, start: "2025-03-08T12:00:00-05:00",
			ours: "2025-03-10T02:30:00-04:00", robfigs: "2025-03-10T02:30:00-04:00"},
		{name: "overlap: fixed time at the later pass", expr: "30 1 * * *", loc: ny, start: "2025-11-01T12:00:00-04:00",
			ours: "2025-11-02T01:30:00-05:00", robfigs: "2025-11-02T01:30:00-04:00"},
		{name: "half-hour DST shift: robfig loses the next day's run", expr: "0 6 * * *", loc: lordHowe, start: "2026-10-03T18:43:00+10:30",
			ours: "2026-10-04T06:00:00+11:00", robfigs: "2026-10-05T06:00:00+11:00"},
		{name: "overlap: hourly skips the first pass", expr: "0 * * * *", loc: ny, start: "2025-11-02T00:30:00-04:00",
			ours: "2025-11-02T01:00:00-05:00", robfigs: "2025-11-02T01:00:00-04:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := mustTime(t, tt.start).In(tt.loc)
			var ours, theirs string
			if e, err := Parse(tt.expr); err != nil {
				ours = "error"
			} else {
				ours = fmtTime(e.Next(at, tt.loc))
			}
			if s, err := robfig.ParseStandard(tt.expr); err != nil {
				theirs = "error"
			} else {
				theirs = fmtTime(s.Next(at))
			}
			if ours != tt.ours || theirs != tt.robfigs {
				t.Errorf("%q after %s: ours %s (want %s), robfig %s (want %s)", tt.expr, tt.start, ours, tt.ours, theirs, tt.robfigs)
			}
		})
	}
}
