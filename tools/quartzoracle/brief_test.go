package quartzoracle

import (
	"testing"
	"time"
)

// The tables below are transcribed from /work/shared/reference/quartz-semantics.md (§10 for
// V01–V42, §7.3 for C1–C8 and S1–S12). Where the brief abbreviates, its convention applies:
// the missing time is 12:00:00Z and the year is the start's.

// briefCron is one V vector: the first fire times the brief lists and, where the brief says so,
// how the chain ends (exact means the chain has exactly these times).
type briefCron struct {
	next  []string
	end   string // "" = the brief does not say
	exact bool
	err   string // the ParseException message of a rejected expression
}

var briefCronTable = map[string]briefCron{
	"V01": {next: utc("2025-01-06T12:00", "2025-01-07T12:00", "2025-01-08T12:00")},
	"V02": {next: utc("2025-01-01T12:20", "2025-01-01T12:40")},
	"V03": {next: utc("2025-01-01T12:40", "2025-01-01T13:00")},
	"V04": {next: utc("2024-02-29T10:15", "2024-03-31T10:15", "2024-04-30T10:15")},
	"V05": {next: utc("2025-02-26T10:15", "2025-03-29T10:15", "2025-04-28T10:15")},
	"V06": {next: utc("2025-05-30T12:00", "2025-06-30T12:00", "2025-07-31T12:00", "2025-08-29T12:00")},
	"V07": {next: utc("2025-01-28T12:00", "2025-02-25T12:00", "2025-03-28T12:00", "2025-04-28T12:00")},
	"V08": {next: utc("2022-01-03T12:00", "2022-02-01T12:00", "2022-03-01T12:00")},
	"V09": {next: utc("2025-06-16T12:00", "2025-07-15T12:00", "2025-08-15T12:00")},
	"V10": {next: utc("2027-04-30T12:00", "2027-05-31T12:00", "2027-07-30T12:00")},
	"V11": {next: utc("2025-01-17T12:00", "2025-02-21T12:00", "2025-03-21T12:00")},
	"V12": {next: utc("2025-03-31T12:00", "2025-06-30T12:00", "2025-09-29T12:00")},
	"V13": {next: utc("2025-01-31T12:00", "2025-02-28T12:00", "2025-03-28T12:00")},
	"V14": {next: utc("2025-01-04T12:00", "2025-01-11T12:00", "2025-01-18T12:00")},
	"V15": {next: utc("2104-02-29T12:00", "2108-02-29T12:00")},
	"V16": {next: utc("2004-02-29T12:00", "2032-02-29T12:00", "2060-02-29T12:00", "2088-02-29T12:00"), end: "exhausted", exact: true},
	"V17": {next: utc("2025-01-01T22:00", "2025-01-01T23:00", "2025-01-02T00:00", "2025-01-02T01:00", "2025-01-02T02:00", "2025-01-02T22:00")},
	"V18": {next: utc("2025-01-03T12:00", "2025-01-04T12:00", "2025-01-05T12:00", "2025-01-06T12:00", "2025-01-10T12:00")},
	"V19": {next: utc("2025-02-28T12:00", "2025-03-01T12:00", "2025-03-02T12:00", "2025-03-03T12:00", "2025-03-28T12:00")},
	"V20": {next: []string{"2025-01-01T00:00:01.000+00:00", "2025-01-01T00:00:02.000+00:00", "2025-01-01T00:00:03.000+00:00"}},
	"V21": {next: utc("2025-01-06T12:00", "2025-01-13T12:00")},
	"V22": {next: utc("2025-01-20T12:00", "2025-02-17T12:00")},
	"V23": {next: utc("2025-01-04T12:00", "2025-02-01T12:00")},
	"V24": {next: utc("2025-01-01T12:00", "2025-01-02T12:00", "2025-01-03T12:00")},
	"V25": {next: utc("2005-12-30T10:15"), end: "exhausted", exact: true},
	"V26": {next: utc("2025-01-31T12:00", "2025-02-01T12:00", "2025-02-11T12:00")},
	"V27": {next: []string{"2025-03-10T02:30:00.000-04:00", "2025-03-11T02:30:00.000-04:00", "2025-03-12T02:30:00.000-04:00"}},
	"V28": {next: []string{"2025-11-02T01:30:00.000-05:00", "2025-11-03T01:30:00.000-05:00"}},
	"V29": {next: []string{"2025-11-02T01:00:00.000-05:00", "2025-11-02T01:15:00.000-05:00", "2025-11-02T01:30:00.000-05:00"}},
	"V30": {next: []string{"2025-11-02T01:45:00.000-05:00", "2025-11-02T02:00:00.000-05:00"}},
	"V31": {next: []string{"2025-10-05T01:50:00.000+10:30", "2025-10-05T02:30:00.000+11:00", "2025-10-05T02:40:00.000+11:00"}},
	"V32": {next: []string{"2025-04-06T01:45:00.000+10:30", "2025-04-07T01:45:00.000+10:30"}},
	"V33": {next: []string{"2025-04-27T01:30:00.000+01:00", "2025-05-25T01:30:00.000+01:00"}},
	"V34": {next: []string{"2018-11-05T00:00:00.000-02:00", "2018-11-06T00:00:00.000-02:00"}},
	"V35": {next: utc("2030-01-01T12:00")},
	"V36": {end: "throws", exact: true},
	"V37": {next: utc("2025-03-03T12:00"), end: "hang", exact: true},
	"V38": {next: utc("2025-01-30T12:00", "2025-05-29T12:00", "2025-07-31T12:00")},
	"V39": {next: utc("2100-02-28T12:00")},
	"V40": {err: "Support for specifying both a day-of-week AND a day-of-month parameter is not implemented."},
	"V41": {err: "Unexpected end of expression."},
	"V42": {next: utc("2025-01-04T12:00", "2025-01-05T12:00", "2025-01-11T12:00", "2025-01-12T12:00")},
}

// utc expands "2006-01-02T15:04" into the vectors' UTC format.
func utc(ts ...string) []string {
	out := make([]string, len(ts))
	for i, s := range ts {
		out[i] = s + ":00.000+00:00"
	}
	return out
}

func TestBriefCronVectors(t *testing.T) {
	byID := map[string]cronNext{}
	for _, c := range readLines[cronNext](t, "cron_next.jsonl", cronNextKeys) {
		byID[c.ID] = c
	}
	for id, want := range briefCronTable {
		c, ok := byID[id]
		if !ok {
			t.Errorf("%s missing", id)
			continue
		}
		if want.err != "" {
			if c.Valid || c.Error != want.err {
				t.Errorf("%s %q: valid=%v error %q; brief: rejected with %q", id, c.Expr, c.Valid, c.Error, want.err)
			}
			continue
		}
		if !c.Valid {
			t.Errorf("%s %q: rejected (%s); brief: valid", id, c.Expr, c.Error)
			continue
		}
		if len(c.Next) < len(want.next) || (want.exact && len(c.Next) != len(want.next)) {
			t.Errorf("%s %q: next %v; brief %v (exact=%v)", id, c.Expr, c.Next, want.next, want.exact)
			continue
		}
		for i, w := range want.next {
			if c.Next[i] != w {
				t.Errorf("%s %q: fire %d is %s; brief %s", id, c.Expr, i+1, c.Next[i], w)
			}
		}
		if want.end != "" && c.End != want.end {
			t.Errorf("%s %q: end %s; brief %s", id, c.Expr, c.End, want.end)
		}
	}
	if c := byID["V36"]; c.Error != "java.util.NoSuchElementException" {
		t.Errorf("V36 throws %q; brief: NoSuchElementException", c.Error)
	}
}

// T0 of the misfire table.
var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// at returns T0 + ms in the vectors' UTC format, or nil for "null".
func at(ms int64) *string {
	if ms < 0 {
		return nil
	}
	s := t0.Add(time.Duration(ms) * time.Millisecond).Format("2006-01-02T15:04:05.000-07:00")
	return &s
}

const null = -1

// briefMisfire is one C or S row: the trigger's state right after the store's misfire step
// (updateAfterMisfire when misfired) and whether the store saw a misfire.
type briefMisfire struct {
	misfired  bool
	next      int64 // ms after T0, or null
	start     int64 // simple only: ms after T0
	repeat    int   // simple only
	triggered int   // simple only: timesTriggered
	complete  bool
}

var briefCronMisfires = map[string]briefMisfire{
	"C1": {misfired: false, next: 0},
	"C2": {misfired: true, next: 450_250},
	"C3": {misfired: true, next: 600_000},
	"C4": {misfired: false, next: 0},
	"C5": {misfired: true, next: 300_000},
	"C6": {misfired: true, next: null, complete: true},
	"C7": {misfired: true, next: null, complete: true},
	"C8": {misfired: true, next: 450_250},
}

var briefSimpleMisfires = map[string]briefMisfire{
	"S1":  {misfired: true, next: 600_000, start: 0, repeat: 0, triggered: 0},
	"S2":  {misfired: true, next: 450_000, start: 450_000, repeat: 8, triggered: 0},
	"S3":  {misfired: true, next: 450_000, start: 450_000, repeat: 3, triggered: 0},
	"S4":  {misfired: true, next: 450_000, start: 450_000, repeat: 3, triggered: 0},
	"S5":  {misfired: true, next: 480_000, start: 0, repeat: 10, triggered: 8},
	"S6":  {misfired: true, next: 480_000, start: 0, repeat: 10, triggered: 2},
	"S7":  {misfired: true, next: 480_000, start: 0, repeat: -1, triggered: 8},
	"S8":  {misfired: true, next: null, start: 0, repeat: 3, triggered: 2, complete: true},
	"S9":  {misfired: true, next: null, start: 0, repeat: 3, triggered: 0, complete: true},
	"S10": {misfired: true, next: 570_000, start: 570_000, repeat: 1, triggered: 0},
	"S11": {misfired: true, next: 450_000, start: 450_000, repeat: -1, triggered: 2},
	"S12": {misfired: true, next: null, start: 0, repeat: 0, triggered: 0, complete: true},
}

// postMisfire reconstructs the state between the store's misfire step and its delivery loop:
// the loop only fires (next becomes the first fire) and counts (timesTriggered grows by one per
// fire); it never touches start or repeatCount.
func postMisfire(c misfire) (next *string, triggered int) {
	next = c.After.Next
	if len(c.Fires) > 0 {
		next = &c.Fires[0]
	}
	return next, c.After.TimesTriggered - c.FiresTotal
}

func eq(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func str(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

func TestBriefMisfireVectors(t *testing.T) {
	check := func(t *testing.T, name string, table map[string]briefMisfire, simple bool) {
		byID := map[string]misfire{}
		keys := misfireCronKeys
		if simple {
			keys = misfireSimpleKeys
		}
		for _, c := range readLines[misfire](t, name, keys) {
			byID[c.ID] = c
		}
		for id, want := range table {
			c, ok := byID[id]
			if !ok {
				t.Errorf("%s missing", id)
				continue
			}
			next, triggered := postMisfire(c)
			if c.Misfired != want.misfired || !eq(next, at(want.next)) {
				t.Errorf("%s: misfired=%v next=%s; brief misfired=%v next=%s", id, c.Misfired, str(next), want.misfired, str(at(want.next)))
			}
			if complete := next == nil; complete != want.complete {
				t.Errorf("%s: complete=%v; brief %v", id, complete, want.complete)
			}
			if simple && (!eq(c.After.Start, at(want.start)) || c.After.RepeatCount != want.repeat || triggered != want.triggered) {
				t.Errorf("%s: start=%s repeatCount=%d timesTriggered=%d; brief start=%s repeatCount=%d timesTriggered=%d",
					id, str(c.After.Start), c.After.RepeatCount, triggered, str(at(want.start)), want.repeat, want.triggered)
			}
		}
	}
	t.Run("cron", func(t *testing.T) { check(t, "misfire_cron.jsonl", briefCronMisfires, false) })
	t.Run("simple", func(t *testing.T) { check(t, "misfire_simple.jsonl", briefSimpleMisfires, true) })
}
