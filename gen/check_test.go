package gen

import (
	"os"
	"strings"
	"testing"
)

// TestDiagnosticsPointAtTheOffendingText checks, for the errors golden
// case, that each positioned diagnostic's column lands on the text it is
// about: the key for unknown keys, the value for bad values, the bad field
// inside a cron expression.
func TestDiagnosticsPointAtTheOffendingText(t *testing.T) {
	root := repoRoot(t)
	res := generateCases(t, root, []string{"errors"})["errors"]
	wantAt := map[string]func(d Diagnostic) string{
		"unknown-key": func(d Diagnostic) string { return between(d.Msg, `unknown key "`, `"`) },
		"bad-value":   func(d Diagnostic) string { return between(d.Msg, "=", ":") },
		"bad-cron": func(d Diagnostic) string {
			// "day-of-week 8 is out of range" → "8"
			f := strings.Fields(strings.TrimPrefix(d.Msg, "bad cron expression: "))
			return f[1]
		},
		"duplicate-id": func(d Diagnostic) string { return "id=" },
		"unknown-group": func(d Diagnostic) string {
			return between(d.Msg, `unknown group "`, `"`)
		},
	}
	checked := 0
	for _, d := range res.diags {
		at, ok := wantAt[d.Code]
		if !ok {
			continue
		}
		src, err := os.ReadFile(d.Pos.Filename)
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Split(string(src), "\n")[d.Pos.Line-1]
		if strings.Contains(line, `"chronos:\"`) {
			continue // an escaped tag: documented to point at the tag
		}
		want := at(d)
		if got := line[d.Pos.Column-1:]; !strings.HasPrefix(got, want) {
			t.Errorf("%s: column points at %q, want %q", d.Format(root), got, want)
		}
		checked++
	}
	if checked < 10 {
		t.Errorf("only %d positioned diagnostics checked", checked)
	}
}

func between(s, open, close string) string {
	_, after, _ := strings.Cut(s, open)
	before, _, _ := strings.Cut(after, close)
	return before
}

func TestLowerFirst(t *testing.T) {
	for in, want := range map[string]string{"Jobs": "jobs", "HTTPPoller": "httpPoller", "ID": "id", "jobs": "jobs", "A": "a"} {
		if got := lowerFirst(in); got != want {
			t.Errorf("lowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLookupTag(t *testing.T) {
	for _, tc := range []struct {
		tag, val string
		off      int
		found    bool
	}{
		{`chronos:"every=1h"`, "every=1h", 9, true},
		{`json:"x" chronos:"cron='0 0 * * *'"`, "cron='0 0 * * *'", 18, true},
		{`json:"x"`, "", 0, false},
		{`chronos:"a=\"b c\""`, `a="b c"`, -1, true}, // escapes: no 1:1 offsets
	} {
		val, off, found, ok := lookupTag(tc.tag, "chronos")
		if !ok || found != tc.found || val != tc.val || off != tc.off {
			t.Errorf("lookupTag(%q) = %q, %d, %v, %v; want %q, %d, %v", tc.tag, val, off, found, ok, tc.val, tc.off, tc.found)
		}
	}
}
