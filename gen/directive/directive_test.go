package directive

import (
	"strings"
	"testing"
)

func TestParseForms(t *testing.T) {
	text := "cron=\"0 0 2 * * ?\" tz=Asia/Seoul  misfire=doNothing raw=`a \"b\"` single='x y' esc=\"\\t\\u00e9\""
	args, errs := Parse(text)
	if len(errs) != 0 {
		t.Fatalf("Parse: unexpected errors %v", errs)
	}
	want := []struct{ key, val string }{
		{"cron", "0 0 2 * * ?"},
		{"tz", "Asia/Seoul"},
		{"misfire", "doNothing"},
		{"raw", `a "b"`},
		{"single", "x y"},
		{"esc", "\té"},
	}
	if len(args) != len(want) {
		t.Fatalf("got %d args, want %d", len(args), len(want))
	}
	for i, w := range want {
		if args[i].Key != w.key || args[i].Value != w.val {
			t.Errorf("arg %d = %s=%q, want %s=%q", i, args[i].Key, args[i].Value, w.key, w.val)
		}
		if got := text[args[i].KeyOff:][:len(w.key)]; got != w.key {
			t.Errorf("arg %d: KeyOff points at %q", i, got)
		}
	}
}

func TestOffsetMapsThroughQuotes(t *testing.T) {
	// The '?' of the cron value must map back to the '?' in the text, even
	// after an escape sequence shifted everything by one byte.
	text := `cron="0\t0 2 * * ?"`
	args, errs := Parse(text)
	if len(errs) != 0 || len(args) != 1 {
		t.Fatalf("Parse = %v, %v", args, errs)
	}
	a := args[0]
	i := strings.IndexByte(a.Value, '?')
	if got := text[a.Offset(i)]; got != '?' {
		t.Errorf("Offset(%d) points at %q, want '?'", i, got)
	}
	bare, _ := Parse("every=30x")
	if got := bare[0].Offset(2); got != len("every=30") {
		t.Errorf("bare Offset(2) = %d", got)
	}
}

func TestParseReportsEveryError(t *testing.T) {
	text := `every 30s -k=1 q="a"b x= ok=1 // trailing`
	_, errs := Parse(text)
	want := []struct {
		at  string // the text at the error offset
		msg string
	}{
		{"every", "missing =value after"},
		{"30s", "expected key=value"},
		{"-k=1", "expected key=value"},
		{"b x=", "after quoted value"},
		{" ok=1", "missing value after x="},
		{"// trailing", "cannot end in a // comment"},
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d: %v", len(errs), len(want), errs)
	}
	for i, w := range want {
		if !strings.HasPrefix(text[errs[i].Off:], w.at) || !strings.Contains(errs[i].Msg, w.msg) {
			t.Errorf("error %d at %q: %s; want at %q: %s", i, text[errs[i].Off:], errs[i].Msg, w.at, w.msg)
		}
	}
	if _, errs := Parse(`cron="0 0 2 * * ?`); len(errs) != 1 || !strings.Contains(errs[0].Msg, "unterminated") {
		t.Errorf("unterminated quote: %v", errs)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`cron="0 0 2 * * ?" tz=Asia/Seoul misfire=doNothing`,
		"every=30s queue=critical max-retry=3",
		"a='x y' b=`z` c=\"\\x00\\u00e9\"",
		`id= x="`,
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		args, errs := Parse(text)
		for _, e := range errs {
			if e.Off < 0 || e.Off > len(text) {
				t.Fatalf("error offset %d outside [0,%d]", e.Off, len(text))
			}
		}
		for _, a := range args {
			if a.KeyOff < 0 || a.ValEnd > len(text) || a.KeyOff >= a.ValOff || a.ValOff > a.ValEnd {
				t.Fatalf("arg %q offsets out of order: %d %d %d (len %d)", a.Key, a.KeyOff, a.ValOff, a.ValEnd, len(text))
			}
			for i := 0; i <= len(a.Value); i++ {
				if o := a.Offset(i); o < a.ValOff || o > a.ValEnd {
					t.Fatalf("Offset(%d) = %d outside value [%d,%d)", i, o, a.ValOff, a.ValEnd)
				}
			}
		}
		if len(errs) > 0 {
			return
		}
		again, errs2 := Parse(Render(args))
		if len(errs2) != 0 || len(again) != len(args) {
			t.Fatalf("re-rendered %q: %d args, errors %v", Render(args), len(again), errs2)
		}
		for i := range args {
			if again[i].Key != args[i].Key || again[i].Value != args[i].Value {
				t.Fatalf("round trip changed %s=%q to %s=%q", args[i].Key, args[i].Value, again[i].Key, again[i].Value)
			}
		}
	})
}

// Keys are read whatever their case: the caller knows the keys and can say
// that Every means every, and the arguments after it are read as usual.
func TestParseReadsKeysOfAnyCase(t *testing.T) {
	args, errs := Parse(`Every=1m Max-Retry=3 tz=UTC`)
	if len(errs) != 0 || len(args) != 3 {
		t.Fatalf("Parse = %v, %v", args, errs)
	}
	for i, want := range []string{"Every", "Max-Retry", "tz"} {
		if args[i].Key != want {
			t.Errorf("arg %d: key %q, want %q", i, args[i].Key, want)
		}
	}
}

// A value with spaces and no quotes is one error that shows the fix, not
// one error per word, and the arguments after it are read as usual.
func TestParseReportsAnUnquotedValueWithSpacesOnce(t *testing.T) {
	text := `cron=0 0 2 * * ? tz=UTC`
	args, errs := Parse(text)
	if len(errs) != 1 || len(args) != 1 || args[0].Key != "tz" {
		t.Fatalf("Parse = %v, %v", args, errs)
	}
	e := errs[0]
	if want := `cron value must be quoted: cron="0 0 2 * * ?"`; e.Msg != want || e.Off != len("cron=") {
		t.Errorf("error at %d: %s; want at %d: %s", e.Off, e.Msg, len("cron="), want)
	}
	if e.Unquoted == nil || e.Unquoted.Key != "cron" || e.Unquoted.Value != "0 0 2 * * ?" {
		t.Fatalf("Unquoted = %+v", e.Unquoted)
	}
	if got := UnquotedMsg(*e.Unquoted, '\''); got != `cron value must be quoted: cron='0 0 2 * * ?'` {
		t.Errorf("single-quoted: %s", got)
	}
	if got := UnquotedMsg(Arg{Key: "queue", Value: "it's"}, '\''); got != `queue value must be quoted: queue="it's"` {
		t.Errorf("a value holding ': %s", got)
	}

	// Words that all read as keys are more likely keys without =value.
	_, errs = Parse(`every=1m forever`)
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, `missing =value after "forever"`) || errs[0].Unquoted != nil {
		t.Errorf("every=1m forever: %v", errs)
	}
	// A descriptor with an argument, and a trailing comment that is not
	// part of the value.
	_, errs = Parse(`cron=@every 1h // hourly`)
	if len(errs) != 2 || errs[0].Msg != `cron value must be quoted: cron="@every 1h"` || !strings.Contains(errs[1].Msg, "// comment") {
		t.Errorf("cron=@every 1h // hourly: %v", errs)
	}
}
