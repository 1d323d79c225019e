// Package quartzoracle checks the committed Quartz 2.3.2 vectors in testdata/quartz without Java:
// every line is well-formed, in the documented field order, and the vectors reproduce the tables
// of the measured brief (quartz-semantics.md §7.3 and §10) line by line. The vectors themselves
// are produced by run.sh (make vectors), which runs the real library.
package quartzoracle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the offset cross-check must not depend on the host's zoneinfo
)

var dir = filepath.Join("..", "..", "testdata", "quartz")

// Field orders of the three files. A key may be absent (for example error on a valid case),
// but the keys present must appear in this order.
var (
	cronNextKeys    = []string{"id", "expr", "zone", "start", "valid", "next", "end", "error", "error_kind", "tags"}
	misfireCronKeys = []string{"id", "expr", "zone", "start", "end", "prev", "next", "times_triggered", "now",
		"threshold_ms", "policy", "misfired", "fires", "fires_capped", "after", "fires_total"}
	misfireSimpleKeys = []string{"id", "start", "end", "interval_ms", "repeat_count", "times_triggered", "prev",
		"next", "now", "threshold_ms", "policy", "misfired", "fires", "fires_capped", "after", "fires_total"}
)

// stamp is the only time format in the vectors: RFC 3339, three fractional digits, numeric offset.
var stamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$`)

type cronNext struct {
	ID        string   `json:"id"`
	Expr      string   `json:"expr"`
	Zone      string   `json:"zone"`
	Start     string   `json:"start"`
	Valid     bool     `json:"valid"`
	Next      []string `json:"next"`
	End       string   `json:"end"`
	Error     string   `json:"error"`
	ErrorKind string   `json:"error_kind"`
	Tags      []string `json:"tags"`
}

type misfire struct {
	ID             string   `json:"id"`
	Expr           string   `json:"expr"`
	Zone           string   `json:"zone"`
	Start          string   `json:"start"`
	End            *string  `json:"end"`
	IntervalMS     int64    `json:"interval_ms"`
	RepeatCount    int      `json:"repeat_count"`
	TimesTriggered int      `json:"times_triggered"`
	Prev           *string  `json:"prev"`
	Next           *string  `json:"next"`
	Now            string   `json:"now"`
	ThresholdMS    int64    `json:"threshold_ms"`
	Policy         string   `json:"policy"`
	Misfired       bool     `json:"misfired"`
	Fires          []string `json:"fires"`
	FiresCapped    bool     `json:"fires_capped"`
	FiresTotal     int      `json:"fires_total"`
	After          struct {
		Start          *string `json:"start"`
		Next           *string `json:"next"`
		Prev           *string `json:"prev"`
		RepeatCount    int     `json:"repeat_count"`
		TimesTriggered int     `json:"times_triggered"`
		Complete       bool    `json:"complete"`
	} `json:"after"`
}

// readLines decodes every line of name into V and checks its key order against keys.
func readLines[V any](t *testing.T, name string, keys []string) []V {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("vectors missing (make vectors): %v", err)
	}
	defer f.Close()
	var out []V
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if err := checkKeyOrder(line, keys); err != "" {
			t.Fatalf("%s:%d: %s", name, n, err)
		}
		var v V
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s:%d: %v", name, n, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// checkKeyOrder reports top-level keys that are unknown or out of the documented order.
func checkKeyOrder(line []byte, keys []string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return err.Error()
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil {
		return err.Error()
	}
	last := -1
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err.Error()
		}
		k := tok.(string)
		i := slices.Index(keys, k)
		if i < 0 {
			return "unknown key " + k
		}
		if i <= last {
			return "key " + k + " out of order"
		}
		last = i
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err.Error()
		}
	}
	return ""
}

// parseStamp parses one vector time and checks that its offset is the zone's offset at that
// instant according to Go's tz database, so a tzdata disagreement between the JDK that made
// the vectors and Go shows up here rather than as a mysterious cron mismatch.
func parseStamp(t *testing.T, id, zone, s string) time.Time {
	t.Helper()
	if !stamp.MatchString(s) {
		t.Fatalf("%s: time %q is not RFC 3339 with milliseconds and a numeric offset", id, s)
	}
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatalf("%s: zone %q: %v", id, zone, err)
	}
	_, want := at.In(loc).Zone()
	if _, got := at.Zone(); got != want {
		t.Errorf("%s: %s has offset %ds; Go's tzdata says %ds in %s", id, s, got, want, zone)
	}
	return at
}

func TestMeta(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(dir, "META.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		QuartzVersion string `json:"quartz_version"`
		JavaVersion   string `json:"java_version"`
		Tzdata        string `json:"tzdata"`
		MaxYear       int    `json:"max_year"`
		Seed          int64  `json:"seed"`
		Counts        struct {
			CronNext      int `json:"cron_next"`
			MisfireCron   int `json:"misfire_cron"`
			MisfireSimple int `json:"misfire_simple"`
		} `json:"counts"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.QuartzVersion != "2.3.2" {
		t.Errorf("quartz_version = %q, want 2.3.2", m.QuartzVersion)
	}
	if m.MaxYear != 2126 {
		t.Errorf("max_year = %d, want 2126 (run.sh freezes the clock in 2026)", m.MaxYear)
	}
	if m.JavaVersion == "" || m.Tzdata == "" || m.Seed == 0 {
		t.Errorf("META.json lacks java_version, tzdata or seed: %s", b)
	}
	if m.Counts.CronNext < 4000 || m.Counts.MisfireCron < 600 || m.Counts.MisfireSimple < 600 {
		t.Errorf("counts too small: %+v", m.Counts)
	}
}

func TestCronNextWellFormed(t *testing.T) {
	cases := readLines[cronNext](t, "cron_next.jsonl", cronNextKeys)
	if len(cases) < 4000 {
		t.Errorf("%d cases, want at least 4000", len(cases))
	}
	ids := map[string]bool{}
	tags := map[string]int{}
	for _, c := range cases {
		if ids[c.ID] {
			t.Errorf("duplicate id %s", c.ID)
		}
		ids[c.ID] = true
		for _, tag := range c.Tags {
			tags[tag]++
		}
		start := parseStamp(t, c.ID, c.Zone, c.Start)
		if !c.Valid {
			if c.Error == "" || (c.ErrorKind != "message" && c.ErrorKind != "wrapped_runtime") || c.Next != nil || c.End != "" {
				t.Errorf("%s: invalid case needs error and error_kind only: %+v", c.ID, c)
			}
			if (c.ErrorKind == "wrapped_runtime") != strings.HasPrefix(c.Error, "Illegal cron expression format (") {
				t.Errorf("%s: error_kind %s for %q", c.ID, c.ErrorKind, c.Error)
			}
			continue
		}
		prev := start
		for _, s := range c.Next {
			at := parseStamp(t, c.ID, c.Zone, s)
			if !at.After(prev) || at.Nanosecond() != 0 {
				t.Errorf("%s: %s is not a whole second after %s", c.ID, s, prev)
			}
			prev = at
		}
		switch c.End {
		case "limit":
			if len(c.Next) != 10 {
				t.Errorf("%s: end=limit with %d times", c.ID, len(c.Next))
			}
		case "exhausted":
		case "hang":
			// Only the W loops of Quartz 2.3.2 are known to spin forever (0W, L-nW past day 1).
			if !strings.Contains(strings.ToUpper(c.Expr), "W") {
				t.Errorf("%s: %q hung; only W expressions are known to (a timeout too short for a loaded machine?)", c.ID, c.Expr)
			}
		case "throws":
			if c.Error == "" {
				t.Errorf("%s: end=throws without the exception class", c.ID)
			}
		default:
			t.Errorf("%s: unknown end %q", c.ID, c.End)
		}
	}
	for _, tag := range []string{"hand", "dst", "random", "quirk", "invalid", "leap", "monthend"} {
		if tags[tag] == 0 {
			t.Errorf("no case tagged %s", tag)
		}
	}
}

func TestMisfireWellFormed(t *testing.T) {
	for _, f := range []struct {
		name     string
		keys     []string
		policies []string
	}{
		{"misfire_cron.jsonl", misfireCronKeys, []string{"ignoreMisfires", "smartPolicy", "fireOnceNow", "doNothing"}},
		{"misfire_simple.jsonl", misfireSimpleKeys, []string{"ignoreMisfires", "smartPolicy", "fireNow",
			"rescheduleNowWithExistingRepeatCount", "rescheduleNowWithRemainingRepeatCount",
			"rescheduleNextWithRemainingCount", "rescheduleNextWithExistingCount"}},
	} {
		t.Run(f.name, func(t *testing.T) {
			cases := readLines[misfire](t, f.name, f.keys)
			if len(cases) < 600 {
				t.Errorf("%d cases, want at least 600", len(cases))
			}
			seen := map[string]int{}
			for _, c := range cases {
				seen[c.Policy]++
				zone := c.Zone
				if zone == "" {
					zone = "UTC"
				}
				if c.Next == nil {
					t.Errorf("%s: no next fire before the outage", c.ID)
					continue
				}
				next := parseStamp(t, c.ID, zone, *c.Next)
				now := parseStamp(t, c.ID, zone, c.Now)
				late := now.Sub(next)
				// The RAM store's rule: misfired iff the policy is not ignoreMisfires and
				// next <= now - threshold (inclusive).
				want := c.Policy != "ignoreMisfires" && late >= time.Duration(c.ThresholdMS)*time.Millisecond
				if c.Misfired != want {
					t.Errorf("%s: misfired=%v with lateness %v, threshold %dms, policy %s", c.ID, c.Misfired, late, c.ThresholdMS, c.Policy)
				}
				if c.FiresCapped != (c.FiresTotal > len(c.Fires)) || len(c.Fires) > 500 ||
					(!c.FiresCapped && len(c.Fires) != c.FiresTotal) {
					t.Errorf("%s: %d fires listed, %d total, capped=%v", c.ID, len(c.Fires), c.FiresTotal, c.FiresCapped)
				}
				var prev time.Time
				for _, s := range c.Fires {
					at := parseStamp(t, c.ID, zone, s)
					if at.After(now) || !at.After(prev) {
						t.Errorf("%s: fire %s out of order or after now %s", c.ID, s, c.Now)
					}
					prev = at
				}
				if c.After.Next != nil && !parseStamp(t, c.ID, zone, *c.After.Next).After(now) {
					t.Errorf("%s: after.next %s is still due at %s", c.ID, *c.After.Next, c.Now)
				}
				if c.After.Complete != (c.After.Next == nil) {
					t.Errorf("%s: complete=%v with next %v", c.ID, c.After.Complete, c.After.Next)
				}
			}
			for _, p := range f.policies {
				if seen[p] < 20 {
					t.Errorf("policy %s has %d cases", p, seen[p])
				}
			}
		})
	}
}
