package gen

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// scheduleDiags checks a package with one //chronos:schedule line holding
// args (on line 8; a group "nightly" exists) and returns its errors as
// "col: message", in order.
func scheduleDiags(t *testing.T, args string) []string {
	t.Helper()
	src := "package p\n\nimport \"context\"\n\n//chronos:group id=nightly every=1h\ntype G struct{}\n\n//chronos:schedule " + args + "\nfunc H(ctx context.Context) error { return nil }\n"
	_, diags := checkSource(t, src)
	var out []string
	for _, d := range diags {
		if d.Pos.Line != 8 {
			t.Errorf("diagnostic off the directive line: %s", d)
		}
		out = append(out, fmt.Sprintf("%d: %s", d.Pos.Column-len("//chronos:schedule "), d.Msg))
	}
	return out
}

// checkDiags compares the errors of each directive with want, where a
// column counts from 1 at the first byte of the arguments. Errors at one
// column are in message order, as chronosgen prints them.
func checkDiags(t *testing.T, cases map[string][]string) {
	t.Helper()
	for args, want := range cases {
		if got := scheduleDiags(t, args); !slices.Equal(got, want) {
			t.Errorf("//chronos:schedule %s\ngot:\n\t%s\nwant:\n\t%s", args, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
		}
	}
}

func TestKeyInTheWrongCaseIsReadAsThatKey(t *testing.T) {
	checkDiags(t, map[string][]string{
		// The key's column, and the rest of the line is checked against
		// every: before, "expected key=value" hid the tz error.
		"Every=1m tz=UTC": {
			`1: unknown key "Every"; did you mean "every"?`,
			`10: tz applies to cron= triggers, and this one is every=`,
		},
		// Its value is checked as every's.
		"EVERY=500ms": {
			`1: unknown key "EVERY"; did you mean "every"?`,
			`7: interval 500ms is below the 1s minimum; chronos does not run sub-second schedules`,
		},
		"every=1m Max-Retry=x": {
			`10: unknown key "Max-Retry"; did you mean "max-retry"?`,
			`20: Max-Retry=x: want a non-negative integer`,
		},
		"every=1m Every=2m": {
			`10: key "every" repeated`,
			`10: unknown key "Every"; did you mean "every"?`,
		},
		// A guess by edit distance is only a guess: the key is dropped.
		"every=1m Quue=x": {`10: unknown key "Quue"; did you mean "queue"?`},
	})
}

func TestSuggestFindsPlausibleTyposOnly(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"strat-delay", "start-delay"},
		{"evry", "every"},
		{"maxretry", "max-retry"},
		{"timezone", ""}, // too far from tz to be a typo of it
		{"misfir", "misfire"},
		{"Every", "every"},
		{"PROCESS-IN", "process-in"}, // case alone does not count as distance
		{"Evry", "every"},
	} {
		if got := suggest(tc.in, keyNames()); got != tc.want {
			t.Errorf("suggest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Equally near candidates are not guessed between.
	if got := suggest("nightly", []string{"Nightly", "NIGHTLY"}); got != "" {
		t.Errorf("two candidates equal but for case: suggest = %q", got)
	}
	if got := suggest("cat", []string{"bat", "hat"}); got != "" {
		t.Errorf("two candidates one edit away: suggest = %q", got)
	}
}

func TestValueNearMissesSayWhichValueWasMeant(t *testing.T) {
	checkDiags(t, map[string][]string{
		`cron="@daily" misfire=DoNothing`: {
			`23: misfire=DoNothing: unknown misfire policy "DoNothing"; cron triggers accept ignoreMisfires, smartPolicy, fireOnceNow, doNothing; did you mean doNothing?`,
		},
		`cron="@daily" misfire=doNothin`: {
			`23: misfire=doNothin: unknown misfire policy "doNothin"; cron triggers accept ignoreMisfires, smartPolicy, fireOnceNow, doNothing; did you mean doNothing?`,
		},
		`every=1m misfire=ignoremisfires`: {
			`18: misfire=ignoremisfires: unknown misfire policy "ignoremisfires"; simple triggers accept ignoreMisfires, smartPolicy, fireNow, rescheduleNowWithExistingRepeatCount, rescheduleNowWithRemainingRepeatCount, rescheduleNextWithExistingCount, rescheduleNextWithRemainingCount; did you mean ignoreMisfires?`,
		},
		// A policy of the other kind is not a near miss: it is named as such.
		`cron="@daily" misfire=fireNow`: {
			`23: misfire=fireNow: misfire policy fireNow applies to simple triggers; cron triggers accept ignoreMisfires, smartPolicy, fireOnceNow, doNothing`,
		},
		// Nothing near: no guess.
		`cron="@daily" misfire=later`: {
			`23: misfire=later: unknown misfire policy "later"; cron triggers accept ignoreMisfires, smartPolicy, fireOnceNow, doNothing`,
		},
		`every=1m overlap=BufferOne`: {`18: overlap=BufferOne: want one of allow, skip, bufferOne; did you mean bufferOne?`},
		`cron="@daily" dst=SHIFTGAP`: {`19: dst=SHIFTGAP: want one of quartz, shiftGap; did you mean shiftGap?`},
	})
}

func TestUnquotedCronIsOneErrorSayingToQuoteIt(t *testing.T) {
	checkDiags(t, map[string][]string{
		// Before: a bad-cron error about one field, then five "expected
		// key=value", one per word.
		`cron=0 0 2 * * ?`:                    {`6: cron value must be quoted: cron="0 0 2 * * ?"`},
		`id=x cron=0 0 2 ? * MON-FRI queue=q`: {`11: cron value must be quoted: cron="0 0 2 ? * MON-FRI"`},
		// The rest of the line is still checked.
		`cron=0 0 2 * * ? max-retry=x`: {
			`6: cron value must be quoted: cron="0 0 2 * * ?"`,
			`28: max-retry=x: want a non-negative integer`,
		},
	})
}

func TestIntegerOverflowNamesTheLimit(t *testing.T) {
	checkDiags(t, map[string][]string{
		// Before: "want a non-negative integer", which it is.
		`every=1m max-retry=99999999999999999999`:  {`20: max-retry=99999999999999999999: out of range: at most 2147483647`},
		`every=1m repeat=2147483648`:               {`17: repeat=2147483648: out of range: at most 2147483647`},
		`every=1m repeat=2147483647`:               nil,
		`every=1m max-retry=-99999999999999999999`: {`20: max-retry=-99999999999999999999: want a non-negative integer`},
		`every=1m max-retry=-1`:                    {`20: max-retry=-1: want a non-negative integer`},
		`every=1m max-retry=3x`:                    {`20: max-retry=3x: want a non-negative integer`},
	})
}
