package cron

import (
	"strings"
	"testing"
	"time"
)

// briefVector is one of the 42 vectors of the Quartz 2.3.2 brief
// (/work/shared/reference/quartz-semantics.md §10). want holds chained Next
// results; exhausted says the chain ends with the zero time. Where chronos
// deliberately differs from Quartz, deviation names the rule (see
// docs/cron.md, "Deviations from Quartz") and want/wantErr hold our answer.
type briefVector struct {
	id, expr, zone, start string
	want                  []string
	exhausted             bool
	wantErr               string // substring of the error; "" = must parse
	deviation             string
}

var briefVectors = []briefVector{
	{id: "V01", expr: "0 0 12 ? * MON-FRI", start: "2025-01-03T12:00:00Z",
		want: []string{"2025-01-06T12:00:00Z", "2025-01-07T12:00:00Z", "2025-01-08T12:00:00Z"}},
	{id: "V02", expr: "0 0/20 * * * ?", start: "2025-01-01T12:19:59.999Z",
		want: []string{"2025-01-01T12:20:00Z", "2025-01-01T12:40:00Z"}},
	{id: "V03", expr: "0 0/20 * * * ?", start: "2025-01-01T12:20:00.001Z",
		want: []string{"2025-01-01T12:40:00Z", "2025-01-01T13:00:00Z"}},
	{id: "V04", expr: "0 15 10 L * ?", start: "2024-02-01T00:00:00Z",
		want: []string{"2024-02-29T10:15:00Z", "2024-03-31T10:15:00Z", "2024-04-30T10:15:00Z"}},
	{id: "V05", expr: "0 15 10 L-2 * ?", start: "2025-02-01T00:00:00Z",
		want: []string{"2025-02-26T10:15:00Z", "2025-03-29T10:15:00Z", "2025-04-28T10:15:00Z"}},
	{id: "V06", expr: "0 0 12 LW * ?", start: "2025-05-01T00:00:00Z",
		want: days12("2025-05-30", "2025-06-30", "2025-07-31", "2025-08-29")},
	{id: "V07", expr: "0 0 12 L-3W * ?", start: "2025-01-01T00:00:00Z",
		want: days12("2025-01-28", "2025-02-25", "2025-03-28", "2025-04-28")},
	{id: "V08", expr: "0 0 12 1W * ?", start: "2022-01-01T00:00:00Z",
		want: days12("2022-01-03", "2022-02-01", "2022-03-01")},
	{id: "V09", expr: "0 0 12 15W * ?", start: "2025-06-01T00:00:00Z",
		want: days12("2025-06-16", "2025-07-15", "2025-08-15")},
	{id: "V10", expr: "0 0 12 31W * ?", start: "2027-04-01T00:00:00Z",
		want:      days12("2027-05-31", "2027-07-30", "2027-08-31"),
		deviation: "nW beyond the month's length: no fire in that month (Quartz: 2027-04-30, because 1 May is a Saturday)"},
	{id: "V11", expr: "0 0 12 ? * 6#3", start: "2025-01-01T00:00:00Z",
		want: days12("2025-01-17", "2025-02-21", "2025-03-21")},
	{id: "V12", expr: "0 0 12 ? * 2#5", start: "2025-01-01T00:00:00Z",
		want: days12("2025-03-31", "2025-06-30", "2025-09-29")},
	{id: "V13", expr: "0 0 12 ? * 6L", start: "2025-01-01T00:00:00Z",
		want: days12("2025-01-31", "2025-02-28", "2025-03-28")},
	{id: "V14", expr: "0 0 12 ? * L", start: "2025-01-01T00:00:00Z",
		want: days12("2025-01-04", "2025-01-11", "2025-01-18")},
	{id: "V15", expr: "0 0 12 29 2 ?", start: "2097-01-01T00:00:00Z",
		want: days12("2104-02-29", "2108-02-29")},
	{id: "V16", expr: "0 0 12 ? 2 1#5", start: "2000-01-01T00:00:00Z",
		want:      days12("2004-02-29", "2032-02-29", "2060-02-29", "2088-02-29", "2128-02-29", "2156-02-29", "2184-02-29"),
		exhausted: true,
		deviation: "fixed horizon 2199 (Quartz: now+100 = 2126, so it is exhausted after 2088)"},
	{id: "V17", expr: "0 0 22-2 * * ?", start: "2025-01-01T12:00:00Z",
		want: []string{"2025-01-01T22:00:00Z", "2025-01-01T23:00:00Z", "2025-01-02T00:00:00Z", "2025-01-02T01:00:00Z", "2025-01-02T02:00:00Z", "2025-01-02T22:00:00Z"}},
	{id: "V18", expr: "0 0 12 ? * FRI-MON", start: "2025-01-01T00:00:00Z",
		want: days12("2025-01-03", "2025-01-04", "2025-01-05", "2025-01-06", "2025-01-10")},
	{id: "V19", expr: "0 0 12 28-3 * ?", start: "2025-02-27T00:00:00Z",
		want: days12("2025-02-28", "2025-03-01", "2025-03-02", "2025-03-03", "2025-03-28")},
	{id: "V20", expr: "*/0 * * * * ?", wantErr: "step 0", deviation: "step 0 is an error (Quartz: */0 = *)"},
	{id: "V21", expr: "0 0 12 ? * MON/2", wantErr: "step after a name", deviation: "a step after a name is an error (Quartz drops it)"},
	{id: "V22", expr: "0 0 12 ? * 6#3,2", wantErr: "cannot be combined", deviation: "'#' in a list is an error (Quartz applies k to the smallest day)"},
	{id: "V23", expr: "0 0 12 ? * 0#1", wantErr: "Sunday is 1", deviation: "0#1 is an error (Quartz: SAT#1)"},
	{id: "V24", expr: "0 0 12 1-5W * ?", wantErr: "'W' needs a single day", deviation: "W after a range is an error (Quartz drops it)"},
	{id: "V25", expr: "0 15 10 ? * 6L 2002-2005", start: "2005-12-01T00:00:00Z",
		want: []string{"2005-12-30T10:15:00Z"}, exhausted: true},
	{id: "V26", expr: "0 0 12 */10 * ?", start: "2025-01-25T00:00:00Z",
		want: days12("2025-01-31", "2025-02-01", "2025-02-11")},
	{id: "V27", expr: "0 30 2 * * ?", zone: "America/New_York", start: "2025-03-08T12:00:00-05:00",
		want: []string{"2025-03-10T02:30:00-04:00", "2025-03-11T02:30:00-04:00", "2025-03-12T02:30:00-04:00"}},
	{id: "V28", expr: "0 30 1 * * ?", zone: "America/New_York", start: "2025-11-01T12:00:00-04:00",
		want: []string{"2025-11-02T01:30:00-05:00", "2025-11-03T01:30:00-05:00"}},
	{id: "V29", expr: "0 */15 * * * ?", zone: "America/New_York", start: "2025-11-02T00:50:00-04:00",
		want: []string{"2025-11-02T01:00:00-05:00", "2025-11-02T01:15:00-05:00", "2025-11-02T01:30:00-05:00"}},
	{id: "V30", expr: "0 */15 * * * ?", zone: "America/New_York", start: "2025-11-02T01:30:00-04:00",
		want: []string{"2025-11-02T01:45:00-05:00", "2025-11-02T02:00:00-05:00"}},
	{id: "V31", expr: "0 */10 * * * ?", zone: "Australia/Lord_Howe", start: "2025-10-05T01:45:00+10:30",
		want: []string{"2025-10-05T01:50:00+10:30", "2025-10-05T02:30:00+11:00", "2025-10-05T02:40:00+11:00"}},
	{id: "V32", expr: "0 45 1 * * ?", zone: "Australia/Lord_Howe", start: "2025-04-05T12:00:00+11:00",
		want: []string{"2025-04-06T01:45:00+10:30", "2025-04-07T01:45:00+10:30"}},
	{id: "V33", expr: "0 30 1 ? * SUNL", zone: "Europe/London", start: "2025-03-01T00:00:00Z",
		want: []string{"2025-04-27T01:30:00+01:00", "2025-05-25T01:30:00+01:00"}},
	{id: "V34", expr: "0 0 0 * * ?", zone: "America/Sao_Paulo", start: "2018-11-03T12:00:00-03:00",
		want: []string{"2018-11-05T00:00:00-02:00", "2018-11-06T00:00:00-02:00"}},
	{id: "V35", expr: "0 0 12 * * ? 2030 foo", wantErr: "too many", deviation: "more than 7 fields is an error (Quartz ignores the extra)"},
	{id: "V36", expr: "L * * * * ?", wantErr: "not allowed in the second field", deviation: "L outside day fields is an error (Quartz throws at evaluation)"},
	{id: "V37", expr: "0 0 12 L-30W * ?", start: "2025-03-02T00:00:00Z",
		want:      days12("2025-03-03", "2025-05-01", "2025-07-01"),
		deviation: "L-nW below day 1: no fire in that month (Quartz's second call never returns)"},
	{id: "V38", expr: "0 0 12 ? * 5#5", start: "2025-01-01T00:00:00Z",
		want: days12("2025-01-30", "2025-05-29", "2025-07-31")},
	{id: "V39", expr: "0 0 12 L 2 ?", start: "2100-01-01T00:00:00Z",
		want: days12("2100-02-28")},
	{id: "V40", expr: "0 0 12 * * *", wantErr: "needs '?' in exactly one"},
	{id: "V41", expr: "*/5 * * * *", start: "2025-01-01T00:00:00Z",
		want:      []string{"2025-01-01T00:05:00Z", "2025-01-01T00:10:00Z"},
		deviation: "5 fields is the standard dialect (Quartz rejects it)"},
	{id: "V42", expr: "0 0 12 ? * 7-1", start: "2025-01-01T00:00:00Z",
		want: days12("2025-01-04", "2025-01-05", "2025-01-11", "2025-01-12")},
}

// days12 returns noon UTC on each date.
func days12(dates ...string) []string {
	out := make([]string, len(dates))
	for i, d := range dates {
		out[i] = d + "T12:00:00Z"
	}
	return out
}

func TestBriefVectors(t *testing.T) {
	if len(briefVectors) != 42 {
		t.Fatalf("have %d brief vectors, want 42", len(briefVectors))
	}
	for _, v := range briefVectors {
		t.Run(v.id, func(t *testing.T) {
			e, err := Parse(v.expr)
			if v.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), v.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want one containing %q", v.expr, err, v.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", v.expr, err)
			}
			loc := mustZone(t, v.zone)
			at := mustTime(t, v.start)
			for i, w := range v.want {
				got := e.Next(at, loc)
				want := mustTime(t, w)
				if !got.Equal(want) {
					t.Fatalf("fire %d after %s = %s, want %s", i+1, at.In(loc).Format(time.RFC3339), fmtTime(got), w)
				}
				at = got
			}
			if got := e.Next(at, loc); v.exhausted != got.IsZero() {
				t.Fatalf("after the listed fires: Next = %s, exhausted want %v", fmtTime(got), v.exhausted)
			}
		})
	}
}

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Format(time.RFC3339)
}
