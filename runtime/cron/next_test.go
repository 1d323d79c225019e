package cron

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// nextCase chains Schedule.Next from start and expects the listed instants.
type nextCase struct {
	name, expr, zone string
	dst              DSTPolicy
	start            string
	want             []string // RFC3339; "never" for the zero time
}

func runNextCases(t *testing.T, cases []nextCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Schedule{Expr: MustParse(c.expr), Location: mustZone(t, c.zone), DST: c.dst}
			at := mustTime(t, c.start)
			for i, w := range c.want {
				got := s.Next(at)
				if w == "never" {
					if !got.IsZero() {
						t.Fatalf("fire %d after %s = %s, want never", i+1, at.Format(time.RFC3339), fmtTime(got))
					}
					return
				}
				want := mustTime(t, w)
				if !got.Equal(want) || got.Format(time.RFC3339) != w {
					t.Fatalf("fire %d after %s = %s, want %s", i+1, at.Format(time.RFC3339), fmtTime(got), w)
				}
				at = got
			}
		})
	}
}

func TestNextDST(t *testing.T) {
	runNextCases(t, []nextCase{
		// Spring forward, west of UTC (New York, 02:00 EST -> 03:00 EDT).
		{name: "gap skipped (Quartz)", expr: "0 30 2 * * ?", zone: "America/New_York", start: "2025-03-08T12:00:00-05:00",
			want: []string{"2025-03-10T02:30:00-04:00"}},
		{name: "gap shifted", expr: "0 30 2 * * ?", zone: "America/New_York", dst: DSTShiftGap, start: "2025-03-08T12:00:00-05:00",
			want: []string{"2025-03-09T03:00:00-04:00", "2025-03-10T02:30:00-04:00"}},
		{name: "gap slots collapse when shifted", expr: "0 */15 * * * ?", zone: "America/New_York", dst: DSTShiftGap, start: "2025-03-09T01:45:00-05:00",
			want: []string{"2025-03-09T03:00:00-04:00", "2025-03-09T03:15:00-04:00"}},
		{name: "sub-hourly across the gap", expr: "0 */15 * * * ?", zone: "America/New_York", start: "2025-03-09T01:45:00-05:00",
			want: []string{"2025-03-09T03:00:00-04:00", "2025-03-09T03:15:00-04:00"}},
		// Spring forward, east of UTC (Berlin, 02:00 CET -> 03:00 CEST).
		{name: "east gap skipped", expr: "0 30 2 * * ?", zone: "Europe/Berlin", start: "2025-03-29T12:00:00+01:00",
			want: []string{"2025-03-31T02:30:00+02:00"}},
		{name: "east gap shifted", expr: "0 30 2 * * ?", zone: "Europe/Berlin", dst: DSTShiftGap, start: "2025-03-29T12:00:00+01:00",
			want: []string{"2025-03-30T03:00:00+02:00", "2025-03-31T02:30:00+02:00"}},
		// Lord Howe: 30-minute gap (02:00 -> 02:30) and overlap.
		{name: "half-hour gap shifted", expr: "0 15 2 * * ?", zone: "Australia/Lord_Howe", dst: DSTShiftGap, start: "2025-10-04T12:00:00+10:30",
			want: []string{"2025-10-05T02:30:00+11:00", "2025-10-06T02:15:00+11:00"}},
		{name: "half-hour gap skipped", expr: "0 15 2 * * ?", zone: "Australia/Lord_Howe", start: "2025-10-04T12:00:00+10:30",
			want: []string{"2025-10-06T02:15:00+11:00"}},
		// Quartz's search passes through 02:00:00 (hour reset), which its
		// lenient calendar moves to 02:30; the minute stage then finds 02:40.
		{name: "half-hour gap, later slot in the hour survives", expr: "0 20,40 2 * * ?", zone: "Australia/Lord_Howe", start: "2025-10-05T01:00:00+10:30",
			want: []string{"2025-10-05T02:40:00+11:00", "2025-10-06T02:20:00+11:00"}},
		// Chatham jumps from 02:45 to 03:45. Quartz's hour reset to 03:00
		// lands in the gap, becomes 04:00, and 03:45 (which exists) is lost
		// (oracle cases D2239-D2726).
		{name: "existing time after an off-the-hour gap (Quartz)", expr: "0 45 3 * * ?", zone: "Pacific/Chatham", start: "2024-09-29T00:45:00+12:45",
			want: []string{"2024-09-30T03:45:00+13:45"}},
		{name: "existing time after an off-the-hour gap (shift)", expr: "0 45 3 * * ?", zone: "Pacific/Chatham", dst: DSTShiftGap, start: "2024-09-29T00:45:00+12:45",
			want: []string{"2024-09-29T03:45:00+13:45"}},
		// Fall back: an ambiguous wall time is the later instant, under both policies.
		{name: "overlap once, later pass", expr: "0 30 1 * * ?", zone: "America/New_York", dst: DSTShiftGap, start: "2025-11-01T12:00:00-04:00",
			want: []string{"2025-11-02T01:30:00-05:00", "2025-11-03T01:30:00-05:00"}},
		{name: "east overlap later pass", expr: "0 30 2 * * ?", zone: "Europe/Berlin", start: "2025-10-25T12:00:00+02:00",
			want: []string{"2025-10-26T02:30:00+01:00", "2025-10-27T02:30:00+01:00"}},
		{name: "east start inside first pass walks wall time", expr: "0 */15 * * * ?", zone: "Europe/Berlin", start: "2025-10-26T02:10:00+02:00",
			want: []string{"2025-10-26T02:15:00+01:00", "2025-10-26T02:30:00+01:00"}},
		{name: "every second resumes after the repeated hour", expr: "* * * * * ?", zone: "America/New_York", start: "2025-11-02T00:59:59-04:00",
			want: []string{"2025-11-02T01:00:00-05:00", "2025-11-02T01:00:01-05:00"}},
		// Samoa skipped 30 December 2011 entirely.
		{name: "whole day missing", expr: "0 0 12 * * ?", zone: "Pacific/Apia", start: "2011-12-29T13:00:00-10:00",
			want: []string{"2011-12-31T12:00:00+14:00"}},
		{name: "whole day missing shifted", expr: "0 0 12 * * ?", zone: "Pacific/Apia", dst: DSTShiftGap, start: "2011-12-29T13:00:00-10:00",
			want: []string{"2011-12-31T00:00:00+14:00", "2011-12-31T12:00:00+14:00"}},
		// Past a zone's last listed transition Go reports a zone boundary at
		// every new year; it must not be taken for a gap.
		{name: "year boundary beyond the tz table", expr: "28-25,50,51 0 11 ? 1,9 *", zone: "Pacific/Chatham", start: "2048-11-06T05:22:46+13:45",
			want: []string{"2049-01-01T11:00:00+13:45"}},
		// Standard dialect follows the same rules.
		{name: "standard gap skipped", expr: "30 2 * * *", zone: "America/New_York", start: "2025-03-08T12:00:00-05:00",
			want: []string{"2025-03-10T02:30:00-04:00"}},
		{name: "standard gap shifted", expr: "30 2 * * *", zone: "America/New_York", dst: DSTShiftGap, start: "2025-03-08T12:00:00-05:00",
			want: []string{"2025-03-09T03:00:00-04:00"}},
	})
}

func TestNextStandardDialect(t *testing.T) {
	runNextCases(t, []nextCase{
		{name: "both restricted: either matches", expr: "0 0 1,15 * MON", start: "2025-01-01T00:00:00Z",
			want: []string{"2025-01-06T00:00:00Z", "2025-01-13T00:00:00Z", "2025-01-15T00:00:00Z", "2025-01-20T00:00:00Z"}},
		{name: "star step in day-of-month: both must match", expr: "0 0 */2 * MON", start: "2025-01-01T00:00:00Z",
			want: []string{"2025-01-13T00:00:00Z", "2025-01-27T00:00:00Z", "2025-02-03T00:00:00Z"}},
		{name: "star list in day-of-week: both must match", expr: "0 0 10 * *,1", start: "2025-01-01T00:00:00Z",
			want: []string{"2025-01-10T00:00:00Z", "2025-02-10T00:00:00Z"}},
		{name: "7 is Sunday", expr: "0 0 * * 7", start: "2025-01-01T00:00:00Z",
			want: []string{"2025-01-05T00:00:00Z"}},
		{name: "0 is Sunday", expr: "0 0 * * 0", start: "2025-01-01T00:00:00Z",
			want: []string{"2025-01-05T00:00:00Z"}},
		{name: "5-7 is Fri, Sat, Sun", expr: "0 0 * * 5-7", start: "2025-01-01T00:00:00Z",
			want: []string{"2025-01-03T00:00:00Z", "2025-01-04T00:00:00Z", "2025-01-05T00:00:00Z", "2025-01-10T00:00:00Z"}},
		{name: "@weekly", expr: "@weekly", start: "2025-01-01T00:00:00Z",
			want: []string{"2025-01-05T00:00:00Z", "2025-01-12T00:00:00Z"}},
		{name: "@yearly", expr: "@yearly", start: "2025-01-01T00:00:00Z",
			want: []string{"2026-01-01T00:00:00Z"}},
		{name: "@hourly", expr: "@hourly", start: "2025-01-01T00:59:59.5Z",
			want: []string{"2025-01-01T01:00:00Z"}},
		{name: "seconds are zero", expr: "*/20 * * * *", start: "2025-01-01T00:00:01Z",
			want: []string{"2025-01-01T00:20:00Z"}},
	})
}

func TestNextHorizonAndBounds(t *testing.T) {
	runNextCases(t, []nextCase{
		{name: "never fires", expr: "0 0 0 30 2 ?", start: "2025-01-01T00:00:00Z", want: []string{"never"}},
		{name: "31 April never fires", expr: "0 0 0 31 4 ?", start: "1970-01-01T00:00:00Z", want: []string{"never"}},
		{name: "5th Sunday of February, to the horizon", expr: "0 0 12 ? 2 1#5", start: "2184-03-01T00:00:00Z", want: []string{"never"}},
		{name: "last listed year", expr: "0 0 0 1 1 ? 2099", start: "2099-06-01T00:00:00Z", want: []string{"never"}},
		{name: "last second of the horizon", expr: "* * * * * ?", start: "2199-12-31T23:59:58Z",
			want: []string{"2199-12-31T23:59:59Z", "never"}},
		{name: "before 1970", expr: "0 0 0 1 1 ?", start: "1900-06-01T00:00:00Z", want: []string{"1970-01-01T00:00:00Z"}},
		{name: "zero time", expr: "0 0 0 1 1 ?", start: "0001-01-01T00:00:00Z", want: []string{"1970-01-01T00:00:00Z"}},
		{name: "far future", expr: "* * * * * ?", start: "3000-01-01T00:00:00Z", want: []string{"never"}},
		{name: "L-nW below day 1 skips the month", expr: "0 0 12 L-30W * ?", start: "2025-04-01T00:00:00Z",
			want: []string{"2025-05-01T12:00:00Z"}},
		{name: "L-n below day 1 skips the month", expr: "0 0 12 L-29 * ?", start: "2025-02-01T00:00:00Z",
			want: []string{"2025-03-02T12:00:00Z"}},
		{name: "nW beyond the month skips it", expr: "0 0 12 30W 2 ?", start: "2025-01-01T00:00:00Z", want: []string{"never"}},
		{name: "W candidate equal to the start second counts", expr: "0 0 12 15W * ?", start: "2025-06-16T11:59:59.5Z",
			want: []string{"2025-06-16T12:00:00Z"}},
		{name: "LW on a Sunday the last", expr: "0 0 12 LW * ?", start: "2025-08-01T00:00:00Z",
			want: []string{"2025-08-29T12:00:00Z"}},
		{name: "1W on a Saturday first", expr: "0 0 12 1W * ?", start: "2025-03-01T00:00:00Z",
			want: []string{"2025-03-03T12:00:00Z"}},
	})
}

func TestNextResultShape(t *testing.T) {
	loc := mustZone(t, "Europe/Paris")
	got := MustParse("*/7 * * * * ?").Next(time.Date(2025, 1, 1, 0, 0, 0, 999_999_999, time.UTC), loc)
	if got.Location() != loc || got.Nanosecond() != 0 {
		t.Errorf("Next = %v in %v, want whole seconds in %v", got, got.Location(), loc)
	}
	if got := (Schedule{}).Next(time.Now()); !got.IsZero() {
		t.Errorf("Schedule{}.Next = %v, want the zero time", got)
	}
	if got := MustParse("0 0 * * *").Next(time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC), nil); got.Location() != time.UTC {
		t.Errorf("a nil location gives %v, want UTC", got.Location())
	}
}

func TestLoadLocation(t *testing.T) {
	for _, name := range []string{"", "UTC"} {
		if loc, err := LoadLocation(name); err != nil || loc != time.UTC {
			t.Errorf("LoadLocation(%q) = %v, %v; want UTC", name, loc, err)
		}
	}
	if loc, err := LoadLocation("Australia/Lord_Howe"); err != nil || loc.String() != "Australia/Lord_Howe" {
		t.Errorf("LoadLocation(Lord_Howe) = %v, %v", loc, err)
	}
	for _, name := range []string{"Local", "Mars/Olympus_Mons", "../../etc/passwd", "europe/paris "} {
		if _, err := LoadLocation(name); !errors.Is(err, ErrInvalidZone) {
			t.Errorf("LoadLocation(%q) error = %v, want ErrInvalidZone", name, err)
		}
	}
}

// An Expression and the zone cache are shared by every goroutine of a
// scheduler; run with -race.
func TestConcurrentUse(t *testing.T) {
	e := MustParse("0 */15 * * * ?")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			loc, err := LoadLocation("America/New_York")
			if err != nil {
				t.Error(err)
				return
			}
			at := time.Date(2025, 11, 2, i, 0, 0, 0, loc)
			for range 100 {
				at = e.Next(at, loc)
			}
		})
	}
	wg.Wait()
}
