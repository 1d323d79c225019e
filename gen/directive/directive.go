// Package directive splits the argument text of a //chronos: directive, or
// the value of a `chronos:"…"` struct tag, into key=value pairs.
//
// The grammar is deliberately small so that comments and struct tags read
// alike and every byte of the input can be traced back to a column:
//
//	args   = { space } [ arg { space+ arg } ] { space } .
//	arg    = key "=" value .
//	key    = letter { letter | digit | "-" } .
//	value  = bare | interpreted | raw | single .
//	bare   = one or more bytes other than space, '"', '`' and '\'' .
//	interpreted = a Go "…" string literal, with Go escapes .
//	raw    = a Go `…` raw string literal (no escapes) .
//	single = '…' (no escapes; it cannot contain '), for struct tags .
//
// Letters are ASCII. Keys are lower case; Parse reads upper-case letters
// too so that the caller, which knows the keys, can report Every=1m as a
// misspelt every rather than as text that is not key=value.
//
// Space is ' ', '\t', '\r' or '\n'. A quoted value must be followed by
// space or the end of the input; "//" where an argument should start is a
// trailing comment, an error. Parse reports every malformed argument, with
// byte offsets, and keeps going, so a caller can show all problems at once.
//
// A bare value followed by words that are not key=value, one of which
// could not even start a key (cron=0 0 2 * * ?), is one error: a value
// with spaces that lacks its quotes. Reporting each word would bury that
// under one "expected key=value" per word.
package directive

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Arg is one key=value pair.
type Arg struct {
	Key   string // the key, as written
	Value string // the value with its quotes removed and escapes applied
	Quote byte   // 0 for a bare value, else '"', '`' or '\''

	KeyOff int // byte offset of the key in the parsed text
	ValOff int // byte offset of the value's first byte (its opening quote, if any)
	ValEnd int // byte offset just past the value (past its closing quote, if any)

	// srcOff[i] is the offset in the parsed text of the byte that produced
	// Value[i]; nil when Value is a verbatim slice of the text.
	srcOff []int
}

// Offset maps a byte offset into a.Value (0 <= i <= len(a.Value)) to the
// byte offset in the parsed text of the character that produced it, so
// errors found inside a value (such as a bad cron field) point at the exact
// column even through quotes and escapes.
func (a Arg) Offset(i int) int {
	if i < 0 {
		i = 0
	}
	if a.srcOff == nil {
		start := a.ValOff
		if a.Quote != 0 {
			start++
		}
		if i > len(a.Value) {
			i = len(a.Value)
		}
		return start + i
	}
	if i >= len(a.srcOff) {
		return a.ValEnd - 1 // the closing quote
	}
	return a.srcOff[i]
}

// Error is a syntax error at a byte offset of the parsed text.
type Error struct {
	Off int
	Msg string

	// Unquoted is set when the error is a value with spaces written
	// without quotes: the argument as it was probably meant, its Value
	// holding every word. Msg shows the fix Go-quoted; a caller whose text
	// is itself inside quotes (a struct tag) can show another quoting with
	// UnquotedMsg.
	Unquoted *Arg
}

// UnquotedMsg is the message for a, a value with spaces written without
// quotes, showing it quoted: Go-quoted when q is a double quote, and
// single-quoted when q is a single quote (as a struct tag writes it),
// unless the value holds one.
func UnquotedMsg(a Arg, q byte) string {
	v := strconv.Quote(a.Value)
	if q == '\'' && !strings.ContainsRune(a.Value, '\'') {
		v = "'" + a.Value + "'"
	}
	return fmt.Sprintf("%s value must be quoted: %s=%s", a.Key, a.Key, v)
}

// Error formats e with its offset; callers usually map Off to a position
// and print Msg.
func (e *Error) Error() string { return fmt.Sprintf("offset %d: %s", e.Off, e.Msg) }

// Parse splits text into arguments. It returns every well-formed argument
// and one error per malformed one; it never stops at the first error.
func Parse(text string) ([]Arg, []*Error) {
	var (
		args []Arg
		errs []*Error
	)
	i := 0
	for {
		i = skipSpace(text, i)
		if i >= len(text) {
			return args, errs
		}
		if strings.HasPrefix(text[i:], "//") {
			errs = append(errs, &Error{Off: i, Msg: "a directive line cannot end in a // comment; put the comment on the line above"})
			return args, errs
		}
		start := i
		arg, next, err := parseArg(text, i)
		if err != nil {
			errs = append(errs, err)
			// Resynchronise at the next space after the bad argument.
			next = max(next, start+1)
			for next < len(text) && !isSpace(text[next]) {
				next++
			}
		} else if end, ok := spacedValue(text, arg, next); ok {
			arg.Value, arg.ValEnd = text[arg.ValOff:end], end
			errs = append(errs, &Error{Off: arg.ValOff, Msg: UnquotedMsg(arg, '"'), Unquoted: &arg})
			next = end
		} else {
			args = append(args, arg)
		}
		i = next
	}
}

// spacedValue reports whether a, ending at text[i], is a bare value whose
// spaces lost their quotes: the words after it up to the next argument
// have no '=' or quote, and one of them could not start a key (a key-like
// word alone, as in every=1m forever, is more likely a key missing its
// =value). end is just past the last of those words.
func spacedValue(text string, a Arg, i int) (end int, ok bool) {
	if a.Quote != 0 {
		return 0, false
	}
	end = i
	for {
		j := skipSpace(text, end)
		if j >= len(text) || strings.HasPrefix(text[j:], "//") {
			return end, ok
		}
		k := j
		for k < len(text) && !isSpace(text[k]) {
			k++
		}
		word := text[j:k]
		if strings.ContainsAny(word, "=\"`'") {
			return end, ok
		}
		if !isKeyByte(word[0], true) {
			ok = true
		}
		end = k
	}
}

func parseArg(text string, i int) (Arg, int, *Error) {
	a := Arg{KeyOff: i}
	j := i
	for j < len(text) && isKeyByte(text[j], j == i) {
		j++
	}
	if j == i {
		return a, i, &Error{Off: i, Msg: fmt.Sprintf("expected key=value, found %s", quoteToken(text, i))}
	}
	a.Key = text[i:j]
	if j >= len(text) || text[j] != '=' {
		if j < len(text) && !isSpace(text[j]) {
			return a, j, &Error{Off: j, Msg: fmt.Sprintf("invalid character %s in key (keys are lower-case words joined by '-')", quoteRune(text, j))}
		}
		return a, j, &Error{Off: i, Msg: fmt.Sprintf("missing =value after %q (every argument is key=value)", a.Key)}
	}
	j++ // '='
	a.ValOff = j
	if j >= len(text) || isSpace(text[j]) {
		return a, j, &Error{Off: j, Msg: fmt.Sprintf("missing value after %s= (write %s=\"\" for an empty value)", a.Key, a.Key)}
	}
	switch q := text[j]; q {
	case '"':
		val, off, end, err := scanInterpreted(text, j)
		if err != nil {
			return a, end, err
		}
		a.Quote, a.Value, a.srcOff, j = q, val, off, end
	case '`', '\'':
		k := strings.IndexByte(text[j+1:], q)
		if k < 0 {
			return a, len(text), &Error{Off: j, Msg: fmt.Sprintf("unterminated %c-quoted value", q)}
		}
		a.Quote, a.Value, j = q, text[j+1:j+1+k], j+1+k+1
	default:
		k := j
		for k < len(text) && !isSpace(text[k]) {
			if c := text[k]; c == '"' || c == '`' || c == '\'' {
				return a, k, &Error{Off: k, Msg: fmt.Sprintf("quote %c inside unquoted value; quote the whole value", c)}
			}
			k++
		}
		a.Value, j = text[j:k], k
	}
	a.ValEnd = j
	if j < len(text) && !isSpace(text[j]) {
		return a, j, &Error{Off: j, Msg: fmt.Sprintf("unexpected %s after quoted value; separate arguments with spaces", quoteRune(text, j))}
	}
	return a, j, nil
}

// scanInterpreted reads the Go string literal starting at text[i] == '"',
// recording for every produced byte the offset it came from.
func scanInterpreted(text string, i int) (string, []int, int, *Error) {
	var (
		buf []byte
		off []int
	)
	j := i + 1
	for {
		if j >= len(text) {
			return "", nil, len(text), &Error{Off: i, Msg: "unterminated \"-quoted value"}
		}
		if text[j] == '"' {
			return string(buf), off, j + 1, nil
		}
		v, multibyte, tail, err := strconv.UnquoteChar(text[j:], '"')
		if err != nil {
			return "", nil, j + 1, &Error{Off: j, Msg: "invalid escape sequence in \"-quoted value"}
		}
		n := len(buf)
		if v < utf8.RuneSelf || !multibyte {
			buf = append(buf, byte(v))
		} else {
			buf = utf8.AppendRune(buf, v)
		}
		for range len(buf) - n {
			off = append(off, j)
		}
		j = len(text) - len(tail)
	}
}

// Render formats args as text that Parse reads back to the same keys and
// values: bare where possible, otherwise a Go "…" literal.
func Render(args []Arg) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Key)
		b.WriteByte('=')
		b.WriteString(RenderValue(a.Value))
	}
	return b.String()
}

// RenderValue formats one value: bare when Parse would read it back
// unchanged, else as a Go "…" literal.
func RenderValue(v string) string {
	if v == "" || !utf8.ValidString(v) {
		return strconv.Quote(v)
	}
	for _, r := range v {
		if r <= ' ' || r == 0x7f || r == '"' || r == '`' || r == '\'' || r == utf8.RuneError {
			return strconv.Quote(v)
		}
	}
	return v
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

func isKeyByte(c byte, first bool) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
		return true
	}
	return !first && ('0' <= c && c <= '9' || c == '-')
}

// quoteToken quotes the space-delimited token at s[i:] for a message.
func quoteToken(s string, i int) string {
	j := i
	for j < len(s) && !isSpace(s[j]) {
		j++
	}
	tok := s[i:j]
	if len(tok) > 20 {
		tok = tok[:20] + "…"
	}
	return strconv.Quote(tok)
}

func quoteRune(s string, i int) string {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return strconv.QuoteRune(r)
}
