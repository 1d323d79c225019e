package cron

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// oracleFile holds chained getTimeAfter results computed by the real Quartz
// 2.3.2 library (one JSON object per line).
const oracleFile = "../../testdata/quartz/cron_next.jsonl"

// quartzMaxYear is the oracle's MAX_YEAR: the JVM's current year + 100 when
// the vectors were generated. Our horizon is the fixed horizonYear.
const quartzMaxYear = 2126

type oracleCase struct {
	ID        string   `json:"id"`
	Expr      string   `json:"expr"`
	Zone      string   `json:"zone"`
	Start     string   `json:"start"`
	Valid     bool     `json:"valid"`
	Next      []string `json:"next"`
	End       string   `json:"end"` // limit, exhausted, hang or throws
	Error     string   `json:"error"`
	ErrorKind string   `json:"error_kind"`
	Tags      []string `json:"tags"`
}

// oracleSkip is one reviewed reason not to compare a case (fully or in
// part). Each names the deviation in docs/cron.md it follows from.
type oracleSkip struct {
	reason string
	match  func(c *oracleCase, e *Expression, parseErr error) bool
}

var oracleSkips = []oracleSkip{
	{
		// Quartz accepts the expression; we reject it on purpose. The parser
		// tags exactly these rejections, so an untagged rejection of a
		// Quartz-valid expression still fails the test.
		reason: "Quartz accepts, chronos rejects on purpose (strict dialect)",
		match: func(c *oracleCase, _ *Expression, err error) bool {
			var se *SyntaxError
			return c.Valid && errors.As(err, &se) && se.quirk != ""
		},
	},
	{
		reason: "5 fields or @descriptor: the standard dialect, which Quartz rejects",
		match: func(c *oracleCase, e *Expression, _ error) bool {
			return !c.Valid && e != nil && e.Dialect() == Standard
		},
	},
}

// oracleExplained is one reviewed reason why a compared case may differ from
// Quartz after some matching fires. It sees the first differing step: the
// start of the step, Quartz's answer and ours. Each names its deviation.
type oracleExplained struct {
	reason string
	match  func(c *oracleCase, e *Expression, at, quartz, ours time.Time) bool
}

var oracleExplanations = []oracleExplained{
	{
		// Quartz rolls "day n" of a shorter month into the next month and
		// fires on the last day when that is a Saturday; we never fire in a
		// month shorter than n.
		reason: "nW with n beyond the month's length: Quartz fires in that month (#8)",
		match: func(c *oracleCase, e *Expression, at, quartz, ours time.Time) bool {
			if e.spec.domKind != domWeekday || quartz.IsZero() {
				return false
			}
			// The oracle's times carry the zone's offset, so their fields are local.
			return daysIn(quartz.Year(), int(quartz.Month())) < int(e.spec.domN) && (ours.IsZero() || ours.After(quartz))
		},
	},
	{
		// Quartz reads "day 0" (or less) of a month as a day of the
		// previous month and may move it into this month by the weekend
		// rule (L-30W fires on 1 April 2024 because 31 March is a Sunday),
		// or loops forever; we give such a month no fire (#7).
		reason: "L-nW below day 1: Quartz rolls into the previous month (#7)",
		match: func(c *oracleCase, e *Expression, at, quartz, ours time.Time) bool {
			return e.spec.domKind == domLastWeekday && !quartz.IsZero() &&
				daysIn(quartz.Year(), int(quartz.Month()))-int(e.spec.domN) < 1 && (ours.IsZero() || ours.After(quartz))
		},
	},
	{
		// Quartz reads the W candidate with the host clock's millisecond
		// (brief §3.2); we compare with the truncated start (#9).
		reason: "W with a sub-second start: Quartz depends on the host clock (#9)",
		match: func(c *oracleCase, e *Expression, at, quartz, ours time.Time) bool {
			return at.Nanosecond() != 0 && (e.spec.domKind == domWeekday || e.spec.domKind == domLastWeekday)
		},
	},
}

func TestQuartzVectors(t *testing.T) {
	checkOracle(t, oracleFile)
}

// TestQuartzVectorsHarness runs the comparison on a small sample in the
// oracle's format, taken from the brief's vectors, including every kind of
// skip and explanation.
func TestQuartzVectorsHarness(t *testing.T) {
	checkOracle(t, "testdata/oracle_sample.jsonl")
}

func checkOracle(t *testing.T, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the Quartz oracle vectors are missing: %v", err)
	}
	defer f.Close()
	summary, mismatches := compareOracle(t, f)
	t.Log(summary)
	for i, m := range mismatches {
		if i == 50 {
			t.Errorf("... and %d more", len(mismatches)-50)
			break
		}
		t.Error(m)
	}
}

// TestQuartzVectorsHarnessCatchesMismatches feeds the comparison cases that
// must fail: a wrong fire time and a validity difference without a quirk.
func TestQuartzVectorsHarnessCatchesMismatches(t *testing.T) {
	bad := `{"id":"X1","expr":"0 0 12 * * ?","zone":"UTC","start":"2025-01-01T00:00:00.000Z","valid":true,"next":["2025-01-01T13:00:00Z"],"end":"limit"}
{"id":"X2","expr":"0 0 12 * * ?","zone":"UTC","start":"2025-01-01T00:00:00.000Z","valid":false,"next":[],"end":""}
{"id":"X3","expr":"0 0 12 ? * 0","zone":"UTC","start":"2025-01-01T00:00:00.000Z","valid":true,"next":[],"end":"limit"}
{"id":"X4","expr":"0 0 12 1 1 ? 2025","zone":"UTC","start":"2025-01-01T00:00:00.000Z","valid":true,"next":[],"end":"exhausted"}
`
	_, mismatches := compareOracle(t, strings.NewReader(bad))
	if len(mismatches) != 4 {
		t.Fatalf("got %d mismatches, want 4: %q", len(mismatches), mismatches)
	}
}

// compareOracle runs every case of an oracle file and returns a summary
// line and the unexplained differences.
func compareOracle(t *testing.T, r io.Reader) (summary string, mismatches []string) {
	t.Helper()
	var (
		cases, compared, horizon, hang int
		skipped                        = map[string]int{}
		explained                      = map[string]int{}
	)
	mismatch := func(c *oracleCase, format string, args ...any) {
		mismatches = append(mismatches, fmt.Sprintf("%s %q zone=%q start=%s: %s", c.ID, c.Expr, c.Zone, c.Start, fmt.Sprintf(format, args...)))
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var c oracleCase
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("line %d: %v", cases+1, err)
		}
		cases++
		e, perr := Parse(c.Expr)
		if i := slices.IndexFunc(oracleSkips, func(s oracleSkip) bool { return s.match(&c, e, perr) }); i >= 0 {
			reason := oracleSkips[i].reason
			if se, ok := perr.(*SyntaxError); ok && se.quirk != "" {
				reason += ": " + string(se.quirk)
			}
			skipped[reason]++
			continue
		}
		if c.Valid != (perr == nil) {
			mismatch(&c, "Quartz valid=%v (%s), chronos error: %v", c.Valid, c.Error, perr)
			continue
		}
		compared++
		if !c.Valid {
			continue
		}
		loc, err := LoadLocation(c.Zone)
		if err != nil {
			mismatch(&c, "zone: %v", err)
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, c.Start)
		if err != nil {
			t.Fatalf("%s: start: %v", c.ID, err)
		}
		s := Schedule{Expr: e, Location: loc}
		ok := true
		for i, w := range c.Next {
			want, err := time.Parse(time.RFC3339Nano, w)
			if err != nil {
				t.Fatalf("%s: next[%d]: %v", c.ID, i, err)
			}
			if got := s.Next(at); !got.Equal(want) {
				ok = false
				if j := slices.IndexFunc(oracleExplanations, func(x oracleExplained) bool { return x.match(&c, e, at, want, got) }); j >= 0 {
					explained[oracleExplanations[j].reason]++
					break
				}
				mismatch(&c, "fire %d after %s: got %s, Quartz %s", i+1, at.In(loc).Format(time.RFC3339), fmtTime(got), w)
				break
			}
			at = want
		}
		if !ok {
			continue
		}
		switch got := s.Next(at); c.End {
		case "exhausted":
			switch {
			case got.IsZero():
			case got.In(loc).Year() > quartzMaxYear:
				horizon++ // Quartz stopped at its moving horizon; ours is 2199
			default:
				mismatch(&c, "Quartz is exhausted after %s, chronos fires at %s", at.Format(time.RFC3339), fmtTime(got))
			}
		case "hang":
			hang++ // Quartz never returned; we did (L-nW below day 1, #7)
		case "throws":
			mismatch(&c, "Quartz throws at evaluation but chronos parsed it")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	reasons := make([]string, 0, len(skipped)+len(explained))
	for r, n := range skipped {
		reasons = append(reasons, fmt.Sprintf("\n  skipped   %5d  %s", n, r))
	}
	for r, n := range explained {
		reasons = append(reasons, fmt.Sprintf("\n  explained %5d  %s", n, r))
	}
	slices.Sort(reasons)
	if cases == 0 {
		t.Fatal("the oracle file is empty")
	}
	return fmt.Sprintf("Quartz oracle: %d cases, %d compared (%d exhausted only by Quartz's %d horizon, %d where Quartz hangs), %d mismatches%s",
		cases, compared, horizon, quartzMaxYear, hang, len(mismatches), strings.Join(reasons, "")), mismatches
}
