package cron

import (
	"errors"
	"strings"
	"testing"
)

func TestParseErrorPointsAtTheBadToken(t *testing.T) {
	tests := []struct {
		expr   string
		field  Field
		offset int
		length int
		msg    string
	}{
		{"0 0 2 * * 8", DayOfWeek, 10, 1, "day-of-week 8 is out of range 1-7 (SUN-SAT)"},
		{"0 0 2 ? * 0", DayOfWeek, 10, 1, "Sunday is 1"},
		{"0 0 2 ? * 1-5,0", DayOfWeek, 14, 1, "Sunday is 1"},
		{"0 61 2 * * ?", Minute, 2, 2, "minute 61 is out of range 0-59"},
		{"0 0 24 * * ?", Hour, 4, 2, "hour 24 is out of range 0-23"},
		{"0 0 2 32 * ?", DayOfMonth, 6, 2, "day-of-month 32 is out of range 1-31"},
		{"0 0 2 1 13 ?", Month, 8, 2, "month 13 is out of range 1-12"},
		{"0 0 2 1 * ? 1969", Year, 12, 4, "year 1969 is out of range 1970-2099"},
		{"0 0 2 1 * ? 2100", Year, 12, 4, "year 2100 is out of range"},
		{"0 0 2 ? * MONDAY", DayOfWeek, 10, 6, "write MON"},
		{"0 0 2 ? * FOO", DayOfWeek, 10, 3, "unknown day-of-week name"},
		{"0 0 2 ? JANUARY *", Month, 8, 7, "write JAN"},
		{"0 5X 2 * * ?", Minute, 3, 1, `unexpected "X"`},
		{"0 0 2 ? * MON/2", DayOfWeek, 13, 2, "step after a name"},
		{"0 0 2 ? JAN-JUN/2 *", Month, 15, 2, "step after a name range"},
		{"0 0 2 1-5W * ?", DayOfMonth, 9, 1, "'W' needs a single day"},
		{"0 0 2 ? * 3-5L", DayOfWeek, 13, 1, "'L' needs a single weekday"},
		{"*/0 * * * * ?", Second, 2, 1, "step 0"},
		{"0 0 12 ? * 0#1", DayOfWeek, 11, 1, "day-of-week 0 is out of range"},
		{"0 0 12 ? * 8#1", DayOfWeek, 11, 1, "day-of-week 8 is out of range"},
		{"0 0 12 ? * 6#3,2", DayOfWeek, 11, 3, "'#' cannot be combined"},
		{"0 0 12 ? * 6#6", DayOfWeek, 13, 1, "number 1-5"},
		{"0 0 12 0W * ?", DayOfMonth, 7, 1, "day-of-month 0 is out of range"},
		{"0 0 12 1W,15 * ?", DayOfMonth, 7, 2, "'W' cannot be combined"},
		{"0 0 12 L,15 * ?", DayOfMonth, 7, 1, "'L' cannot be combined"},
		{"0 0 12 L-31 * ?", DayOfMonth, 9, 2, "at most 30"},
		{"L * * * * ?", Second, 0, 1, "'L' is not allowed in the second field"},
		{"0 0 L * * ?", Hour, 4, 1, "'L' is not allowed in the hour field"},
		{"0 0 12 * * ? 2030 foo", NoField, 18, 3, "8 fields is too many"},
		{"0 0 12 * * *", DayOfWeek, 11, 1, "needs '?' in exactly one"},
		{"0 0 12 ? * ?", DayOfWeek, 11, 1, "only one of day-of-month and day-of-week"},
		{"0 0 12 ?5 * MON", DayOfMonth, 7, 1, "'?' must be the whole"},
		{"? 0 12 * * ?", Second, 0, 1, "'?' is allowed only in day-of-month or day-of-week"},
		{"0 0 12 ? * MON-5", DayOfWeek, 11, 5, "mixes a name and a number"},
		{"0 0 12 * * ? 2030-2025", Year, 13, 9, "reversed"},
		{"*/60 * * * * ?", Second, 2, 2, "at most 59"},
		{"0/60 * * * * ?", Second, 2, 2, "at most 59"},
		{"0 0 0/24 * * ?", Hour, 6, 2, "at most 23"},
		{"0 0 0 ? * 1/8", DayOfWeek, 12, 1, "at most 7"},
		{"0 0 12 1,,2 * ?", DayOfMonth, 9, 0, "empty item"},
		{"0 0 12 ? * L-2", DayOfWeek, 11, 3, "'L' alone means Saturday"},
		{"0 0 */ * * ?", Hour, 5, 1, "must be followed by a step"},
		{"", NoField, 0, 0, "empty expression"},
		{"* * *", NoField, 5, 0, "only 3 fields"},
		// Standard dialect.
		{"0 0 * * 8", DayOfWeek, 8, 1, "day-of-week 8 is out of range 0-7 (0 and 7 = SUN)"},
		{"5/15 * * * *", Minute, 0, 4, "a step needs '*' or a range"},
		{"0 22-2 * * *", Hour, 2, 4, "reversed"},
		{"*/0 * * * *", Minute, 2, 1, "step 0"},
		{"0 0 ? * MON", DayOfMonth, 4, 1, "Quartz syntax"},
		{"0 0 L * *", DayOfMonth, 4, 1, "Quartz syntax"},
		{"0 0 * * 5#2", DayOfWeek, 9, 1, "Quartz syntax"},
		{"0 0 * * MONDAY", DayOfWeek, 8, 6, "write MON"},
		{"@reboot", NoField, 0, 7, "@reboot"},
		{"@every 5m", NoField, 0, 6, "interval"},
		{"@fortnightly", NoField, 0, 12, "unknown descriptor"},
		{"@daily 0", NoField, 7, 1, "stands alone"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := Parse(tt.expr)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error = %v, want a *SyntaxError", tt.expr, err)
			}
			if se.Field != tt.field || se.Offset != tt.offset || se.Len != tt.length || !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("Parse(%q) = field %v offset %d len %d msg %q\nwant field %v offset %d len %d msg containing %q",
					tt.expr, se.Field, se.Offset, se.Len, se.Msg, tt.field, tt.offset, tt.length, tt.msg)
			}
			if se.Expr != tt.expr {
				t.Errorf("Expr = %q, want %q", se.Expr, tt.expr)
			}
		})
	}
}

func TestSyntaxErrorMessage(t *testing.T) {
	_, err := Parse("0 0 2 * * 8")
	const want = `cron "0 0 2 * * 8": day-of-week 8 is out of range 1-7 (SUN-SAT) (column 11)`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}
}

func TestParseAccepts(t *testing.T) {
	for _, expr := range []string{
		"0 0 12 ? * MON-FRI",
		"0 0 12 ? * mon-fri",
		"  0\t0  12 ? * MON-FRI  ",
		"0 0/5 14,18 * * ?",
		"0 15 10 ? * 6L 2002-2005",
		"0 0 12 ? * FRIL",
		"0 0 12 ? * fril",
		"0 0 12 ? * SUN#2",
		"0 0 12 LW * ?",
		"0 0 12 L-0 * ?",
		"0 0 12 lw * ?",
		"0 0 12 ? JAN-MAR,OCT-DEC MON",
		"0 0 12 ? * 1-7",
		"0 0 12 ? * L",
		"0 0 0 * * ? 2099",
		"0 0 0 * * ? */5",
		"0 0-59/70 * * * ?",
		"/15 * * * * ?",
		"05 012 1 * * ?",
		"0 0 * * 7",
		"0 0 * * 0-7",
		"0 0 * * SUN,sat",
		"0 0 * JAN-MAR/2 MON-FRI",
		"*/70 * * * *",
		"@daily", "@DAILY", "@hourly", "@weekly", "@monthly", "@yearly", "@annually", "@midnight",
	} {
		if _, err := Parse(expr); err != nil {
			t.Errorf("Parse(%q): %v", expr, err)
		}
	}
}

func TestDialectFollowsShape(t *testing.T) {
	for expr, want := range map[string]Dialect{
		"0 0 12 * * ?":      Quartz,
		"0 0 12 * * ? 2030": Quartz,
		"0 12 * * *":        Standard,
		"@daily":            Standard,
	} {
		if got := MustParse(expr).Dialect(); got != want {
			t.Errorf("Dialect(%q) = %v, want %v", expr, got, want)
		}
	}
}

func TestStringRoundTrips(t *testing.T) {
	for expr, want := range map[string]string{
		" 0  0\t12 ? * mon-fri ": "0 0 12 ? * MON-FRI",
		"0 0 12 lw * ?":          "0 0 12 LW * ?",
		"30 2 * * sun":           "30 2 * * SUN",
		"@Daily":                 "@daily",
	} {
		e := MustParse(expr)
		if got := e.String(); got != want {
			t.Errorf("String(%q) = %q, want %q", expr, got, want)
		}
		if again := MustParse(e.String()); !again.Equal(e) {
			t.Errorf("Parse(String(%q)) is not Equal to the original", expr)
		}
	}
}

func TestEqual(t *testing.T) {
	same := [][2]string{
		{"0 0 12 ? * MON-FRI", "0 0 12 ? * 2-6"},
		{"0 0 12 ? * 2,3,4,5,6", "0 0 12 ? * MON-FRI"},
		{"0 0 22-2 * * ?", "0 0 22,23,0,1,2 * * ?"},
		{"0 0 * * 7", "0 0 * * 0"},
		{"@daily", "0 0 * * *"},
		{"0 0 0 * * ?", "0 0 0 * * ? *"},
	}
	for _, p := range same {
		if !MustParse(p[0]).Equal(MustParse(p[1])) {
			t.Errorf("%q and %q should be Equal", p[0], p[1])
		}
	}
	differ := [][2]string{
		{"0 0 12 ? * MON", "0 0 12 ? * TUE"},
		{"0 0 1,15 * MON", "0 0 1,15 * *"},
		{"0 0 0 L * ?", "0 0 0 LW * ?"},
	}
	for _, p := range differ {
		if MustParse(p[0]).Equal(MustParse(p[1])) {
			t.Errorf("%q and %q should not be Equal", p[0], p[1])
		}
	}
	var nilExpr *Expression
	if !nilExpr.Equal(nil) || nilExpr.Equal(MustParse("@daily")) {
		t.Error("Equal on nil expressions")
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("MustParse of a bad expression did not panic")
		}
	}()
	MustParse("0 0 2 * * 8")
}

// Quartz reports its deliberate rejections with a quirk tag; the oracle test
// relies on it to tell them from bugs.
func TestQuirkTags(t *testing.T) {
	for expr, want := range map[string]quirk{
		"0 0 12 * * ? 2030 foo": quirkExtraFields,
		"L * * * * ?":           quirkLetterL,
		"0 0 12 ? L *":          quirkLetterL,
		"0 5X * * * ?":          quirkTrailingJunk,
		"0 0 12 ? * MONDAY":     quirkTrailingJunk,
		"0 0 12 ? * MON/2":      quirkDroppedStep,
		"0 0 12 1-5W * ?":       quirkDroppedSuffix,
		"*/0 * * * * ?":         quirkStepZero,
		"0 0 12 ? * 0#1":        quirkNthDay,
		"0 0 12 ? * 6#3,2":      quirkNthInList,
		"0 0 12 0W * ?":         quirkZeroW,
		"0 0 12 * * ? 2100":     quirkYearRange,
		"0 0 12 1W,15 * ?":      quirkWeekdayInList,
		"0 0 12 ?5 * MON":       quirkQuestionJunk,
		"0 0 12 ? * 1-0":        quirkDOWZeroEnd,
		// Quartz rejects these too: no tag.
		"0 0 12 ? * 0":     "",
		"0 0 12 * * *":     "",
		"0 61 * * * ?":     "",
		"*/60 * * * * ?":   "",
		"0 0 12 ? * MON-5": "",
		"0 0 12 L,15 * ?":  "",
		"0 0 5 * * L":      "",
	} {
		_, err := Parse(expr)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a SyntaxError", expr, err)
			continue
		}
		if se.quirk != want {
			t.Errorf("Parse(%q) quirk = %q, want %q (%v)", expr, se.quirk, want, err)
		}
	}
}

func TestParseDayOfMonthLetters(t *testing.T) {
	for _, expr := range []string{"0 0 12 W * ?", "0 0 12 15WW * ?", "0 0 12 MON * ?"} {
		_, err := Parse(expr)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Field != DayOfMonth {
			t.Errorf("Parse(%q) = %v, want a day-of-month SyntaxError", expr, err)
		}
	}
}
