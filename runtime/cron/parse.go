package cron

import (
	"fmt"
	"strings"
)

// Parse parses a cron expression. The dialect follows from its shape:
//
//   - 6 or 7 fields is Quartz: sec min hour day-of-month month day-of-week
//     [year], day-of-week 1-7 = SUN-SAT, exactly one of the two day fields
//     '?'. Example: "0 30 2 ? * MON-FRI".
//   - 5 fields is standard (Vixie) cron: min hour day-of-month month
//     day-of-week, day-of-week 0-7 with 0 and 7 = SUN. Example: "30 2 * * 1-5".
//   - @yearly, @annually, @monthly, @weekly, @daily, @midnight and @hourly
//     are standard descriptors.
//
// Fields are separated by spaces or tabs; names and letters are
// case-insensitive. Parse is stricter than Quartz: forms that Quartz
// accepts but silently misreads (trailing junk, dropped steps, a step of 0,
// years outside 1970-2099, ...) are errors; docs/cron.md lists them. Every
// error is a *SyntaxError.
func Parse(expr string) (*Expression, error) {
	toks := splitFields(expr)
	p := &parser{expr: expr}
	switch n := len(toks); {
	case n == 0:
		return nil, p.errorf(NoField, 0, len(expr), "empty expression; want 6 or 7 fields (Quartz: %s) or 5 (standard: %s)", quartzShape, standardShape)
	case strings.HasPrefix(toks[0].text, "@"):
		return p.descriptor(toks)
	case n == 5:
		return p.standard(toks)
	case n == 6 || n == 7:
		return p.quartz(toks)
	case n > 7:
		first, last := toks[7], toks[n-1]
		p.dialect = Quartz
		return nil, p.because(p.errorf(NoField, first.off, last.off+len(last.text)-first.off,
			"%d fields is too many; a Quartz expression has 6 or 7 (%s)", n, quartzShape), quirkExtraFields)
	default:
		return nil, p.errorf(NoField, len(strings.TrimRight(expr, " \t")), 0,
			"only %d fields; want 6 or 7 (Quartz: %s) or 5 (standard: %s)", n, quartzShape, standardShape)
	}
}

// MustParse is like Parse but panics if expr does not parse. It is meant
// for expressions fixed in source code and for package-level variables.
func MustParse(expr string) *Expression {
	e, err := Parse(expr)
	if err != nil {
		panic(err)
	}
	return e
}

const (
	quartzShape   = "sec min hour day-of-month month day-of-week [year]"
	standardShape = "min hour day-of-month month day-of-week"
)

// token is one whitespace-separated field and its byte offset in the
// expression.
type token struct {
	text string
	off  int
}

// splitFields splits on spaces and tabs only, as Quartz does.
func splitFields(expr string) []token {
	toks := make([]token, 0, 7)
	for i := 0; i < len(expr); {
		if expr[i] == ' ' || expr[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < len(expr) && expr[j] != ' ' && expr[j] != '\t' {
			j++
		}
		toks = append(toks, token{expr[i:j], i})
		i = j
	}
	return toks
}

// canonical joins the fields with single spaces, upper-cased. It returns
// expr itself when it is already in that form.
func canonical(expr string, toks []token) string {
	if isCanonical(expr, toks) {
		return expr
	}
	var b strings.Builder
	b.Grow(len(expr))
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.ToUpper(t.text))
	}
	return b.String()
}

// parser carries the expression for error reporting.
type parser struct {
	expr    string
	dialect Dialect
}

func (p *parser) errorf(f Field, off, n int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Expr: p.expr, Field: f, Offset: off, Len: n, Msg: fmt.Sprintf(format, args...)}
}

// valueSet collects the values of one field; bit i is value base+i.
type valueSet [4]uint64

func (s *valueSet) add(i int) { s[i/64] |= 1 << (i % 64) }

func (s *valueSet) has(i int) bool { return i >= 0 && i < 256 && s[i/64]&(1<<(i%64)) != 0 }

// lexer walks one comma-separated item of a field.
type lexer struct {
	s    string // the item
	i    int    // position in s
	base int    // offset of s in the expression
}

func (lx *lexer) peek() byte {
	if lx.i < len(lx.s) {
		return upper(lx.s[lx.i])
	}
	return 0
}

func (lx *lexer) off() int { return lx.base + lx.i }

func (lx *lexer) end() bool { return lx.i >= len(lx.s) }

// digits reads a run of decimal digits. It returns the value (saturated at
// a large number, so huge inputs report as out of range instead of
// overflowing), the offset of the run and its length.
func (lx *lexer) digits() (v, off, n int) {
	off = lx.off()
	for lx.i < len(lx.s) && isDigit(lx.s[lx.i]) {
		if v < 1e9 {
			v = v*10 + int(lx.s[lx.i]-'0')
		}
		lx.i++
		n++
	}
	return v, off, n
}

// letters reads a run of ASCII letters, upper-cased.
func (lx *lexer) letters() (word string, off int) {
	off = lx.off()
	start := lx.i
	for lx.i < len(lx.s) && isLetter(lx.s[lx.i]) {
		lx.i++
	}
	return strings.ToUpper(lx.s[start:lx.i]), off
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func isCanonical(expr string, toks []token) bool {
	if len(toks) == 0 || toks[0].off != 0 {
		return false
	}
	last := toks[len(toks)-1]
	if last.off+len(last.text) != len(expr) {
		return false
	}
	for i := 1; i < len(toks); i++ {
		if toks[i].off != toks[i-1].off+len(toks[i-1].text)+1 || expr[toks[i].off-1] != ' ' {
			return false
		}
	}
	for i := 0; i < len(expr); i++ {
		if 'a' <= expr[i] && expr[i] <= 'z' {
			return false
		}
	}
	return true
}

// nextItem returns the comma-separated item of tok that starts at byte
// start, and the start of the following one (len(tok.text)+1 at the end).
func nextItem(tok token, start int) (item token, next int) {
	end := strings.IndexByte(tok.text[start:], ',')
	if end < 0 {
		end = len(tok.text) - start
	}
	return token{tok.text[start : start+end], tok.off + start}, start + end + 1
}

var (
	monthNames = []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
	dayNames   = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}
)

// fieldSpec describes the values one field accepts in one dialect.
type fieldSpec struct {
	lo, hi   int      // allowed values
	fillHi   int      // upper end of '*' and open-ended steps (the horizon for years)
	wrap     int      // modulus for Quartz wrap-around ranges; 0 = reversed ranges are errors
	maxStar  int      // largest step after '*' or a bare '/' (Quartz checks these); 0 = unchecked
	names    []string // names for values nameBase, nameBase+1, ...
	nameBase int
	rangeMsg string // how the allowed range is described in errors
}

// valueOf reads a number or, where the field has names, a three-letter
// name. It reports whether it read a name.
func (p *parser) valueOf(lx *lexer, f Field, fs *fieldSpec) (v int, isName bool, err error) {
	c := lx.peek()
	switch {
	case isDigit(c):
		v, off, n := lx.digits()
		if v < fs.lo || v > fs.hi {
			e := p.errorf(f, off, n, "%s", p.rangeError(f, fs, v))
			switch {
			case f == Year:
				p.because(e, quirkYearRange)
			case f == DayOfMonth && v == 0 && lx.peek() == 'W':
				p.because(e, quirkZeroW)
			case f == DayOfWeek && lx.peek() == '#':
				p.because(e, quirkNthDay)
			}
			return 0, false, e
		}
		return v, false, nil
	case isLetter(c):
		word, off := lx.letters()
		if f == DayOfWeek && p.dialect == Quartz && len(word) == 4 && word[3] == 'L' {
			word = word[:3] // FRIL: the L is the last-weekday suffix
			lx.i--
		}
		if fs.names == nil {
			if f == DayOfMonth {
				return 0, false, p.errorf(f, off, len(word), "%q is not a day-of-month item; want a day number, L, L-n, LW, L-nW or nW (e.g. 15W)", lx.s)
			}
			if strings.Trim(word, "LW") == "" {
				e := p.errorf(f, off, len(word), "'%s' is not allowed in the %s field; 'L' and 'W' belong to day-of-month (and 'L' to day-of-week)", word, f)
				if word == "L" {
					p.because(e, quirkLetterL)
				}
				return 0, false, e
			}
			return 0, false, p.errorf(f, off, len(word), "%q is not a number; the %s field takes %s", word, f, fs.rangeMsg)
		}
		for i, name := range fs.names {
			if word == name {
				return fs.nameBase + i, true, nil
			}
		}
		if len(word) > 3 && len(word) <= 9 {
			for _, name := range fs.names {
				if strings.HasPrefix(word, name) {
					return 0, false, p.because(p.errorf(f, off, len(word), "%q is not a %s name; names are exactly three letters, so write %s", word, f, name), quirkTrailingJunk)
				}
			}
		}
		e := p.errorf(f, off, len(word), "unknown %s name %q (want one of %s)", f, word, strings.Join(fs.names, " "))
		if f == Month && word == "L" {
			p.because(e, quirkLetterL)
		}
		return 0, false, e
	case c == 0:
		return 0, false, p.errorf(f, lx.off(), 0, "missing %s value at the end of %q", f, lx.s)
	default:
		return 0, false, p.errorf(f, lx.off(), 1, "unexpected %q in %s item %q", lx.s[lx.i:lx.i+1], f, lx.s)
	}
}

func (p *parser) rangeError(f Field, fs *fieldSpec, v int) string {
	msg := fmt.Sprintf("%s %d is out of range %s", f, v, fs.rangeMsg)
	if f == DayOfWeek && p.dialect == Quartz && v == 0 {
		msg += "; in a 6- or 7-field (Quartz) expression Sunday is 1 and Saturday is 7, unlike 5-field cron where Sunday is 0"
	}
	return msg
}

// step reads "/s" at the lexer. check says to limit the step to the
// field's size, as Quartz does after '*', a bare '/' and a single value
// (but not after a range: 0-59/70 is accepted).
func (p *parser) step(lx *lexer, f Field, fs *fieldSpec, check bool) (int, error) {
	slash := lx.off()
	lx.i++ // '/'
	v, off, n := lx.digits()
	switch {
	case n == 0:
		return 0, p.errorf(f, slash, 1, "'/' in %s item %q must be followed by a step (a number)", f, lx.s)
	case v == 0:
		return 0, p.because(p.errorf(f, off, n, "step 0 in %s item %q; a step must be at least 1", f, lx.s), quirkStepZero)
	case check && fs.maxStar > 0 && v > fs.maxStar:
		return 0, p.errorf(f, off, n, "step %d in %s item %q is larger than the field allows (at most %d)", v, f, lx.s, fs.maxStar)
	}
	return v, nil
}

// addRange adds a..b in steps of step. With fs.wrap set and b < a the range
// wraps through the top of the field, as in Quartz (22-2 in hours is
// 22,23,0,1,2; day-of-month wraps mod 31).
func addRange(set *valueSet, fs *fieldSpec, base, a, b, step int) {
	if step == 1 && a <= b {
		for i := a - base; i <= b-base; {
			if i%64 == 0 && b-base-i >= 63 {
				set[i/64] = ^uint64(0) // a whole word at once
				i += 64
				continue
			}
			set.add(i)
			i++
		}
		return
	}
	wrapped := b < a
	if wrapped {
		b += fs.wrap
	}
	for i := a; i <= b; i += step {
		v := i
		if wrapped {
			v = i % fs.wrap
			if v == 0 && fs.lo == 1 {
				v = fs.wrap
			}
		}
		set.add(v - base)
	}
}

// trailing reports junk left after an item was read.
func (p *parser) trailing(lx *lexer, f Field) error {
	if lx.end() {
		return nil
	}
	rest := lx.s[lx.i:]
	return p.because(p.errorf(f, lx.off(), len(rest), "unexpected %q in %s item %q", rest, f, lx.s), quirkTrailingJunk)
}
