package cron

import "strings"

var quartzFields = [...]Field{Second, Minute, Hour, DayOfMonth, Month, DayOfWeek, Year}

var quartzSpecs = [...]fieldSpec{
	Second:     {lo: 0, hi: 59, fillHi: 59, wrap: 60, maxStar: 59, rangeMsg: "0-59"},
	Minute:     {lo: 0, hi: 59, fillHi: 59, wrap: 60, maxStar: 59, rangeMsg: "0-59"},
	Hour:       {lo: 0, hi: 23, fillHi: 23, wrap: 24, maxStar: 23, rangeMsg: "0-23"},
	DayOfMonth: {lo: 1, hi: 31, fillHi: 31, wrap: 31, maxStar: 31, rangeMsg: "1-31"},
	Month:      {lo: 1, hi: 12, fillHi: 12, wrap: 12, maxStar: 12, names: monthNames, nameBase: 1, rangeMsg: "1-12 (JAN-DEC)"},
	DayOfWeek:  {lo: 1, hi: 7, fillHi: 7, wrap: 7, maxStar: 7, names: dayNames, nameBase: 1, rangeMsg: "1-7 (SUN-SAT)"},
	Year:       {lo: minYear, hi: maxListedYear, fillHi: horizonYear, rangeMsg: "1970-2099"},
}

// quartz parses a 6- or 7-field Quartz expression.
func (p *parser) quartz(toks []token) (*Expression, error) {
	p.dialect = Quartz
	var s spec
	var question [Year + 1]bool
	for i, tok := range toks {
		f := quartzFields[i]
		var set valueSet
		q, err := p.quartzField(f, tok, &set, &s)
		if err != nil {
			return nil, err
		}
		question[f] = q
		switch f {
		case Second:
			s.second = set[0]
		case Minute:
			s.minute = set[0]
		case Hour:
			s.hour = uint32(set[0])
		case DayOfMonth:
			s.dom = uint32(set[0])
		case Month:
			s.month = uint16(set[0])
		case DayOfWeek:
			for v := 1; v <= 7; v++ {
				if set.has(v) {
					s.dow |= 1 << (v - 1)
				}
			}
		case Year:
			s.years = set
		}
	}
	if len(toks) == 6 {
		addRange((*valueSet)(&s.years), &quartzSpecs[Year], minYear, minYear, horizonYear, 1)
	}
	dow := toks[5]
	switch {
	case question[DayOfMonth] && question[DayOfWeek]:
		return nil, p.errorf(DayOfWeek, dow.off, len(dow.text),
			"'?' may stand in only one of day-of-month and day-of-week; give the other a value or '*' (e.g. \"0 0 12 * * ?\")")
	case question[DayOfMonth]:
		s.days = dayByDOW
	case question[DayOfWeek]:
		s.days = dayByDOM
	default:
		return nil, p.errorf(DayOfWeek, dow.off, len(dow.text),
			"day-of-month and day-of-week are both set; a Quartz expression needs '?' in exactly one of them (e.g. \"0 0 12 ? * MON\" or \"0 0 12 1 * ?\")")
	}
	s.finish()
	return &Expression{text: canonical(p.expr, toks), dialect: Quartz, spec: s}, nil
}

// quartzField parses one field into set (and into the day rules of s for
// L, W and #). It reports whether the field is '?'.
func (p *parser) quartzField(f Field, tok token, set *valueSet, s *spec) (question bool, err error) {
	if i := strings.IndexByte(tok.text, '?'); i >= 0 {
		switch {
		case f != DayOfMonth && f != DayOfWeek:
			return false, p.errorf(f, tok.off+i, 1, "'?' is allowed only in day-of-month or day-of-week, not in %s", f)
		case tok.text != "?":
			return false, p.because(p.errorf(f, tok.off+i, 1, "'?' must be the whole %s field, not part of %q", f, tok.text), quirkQuestionJunk)
		}
		return true, nil
	}
	fs := &quartzSpecs[f]
	base := 0
	if f == Year {
		base = minYear
	}
	inList := strings.IndexByte(tok.text, ',') >= 0
	for start := 0; start <= len(tok.text); {
		var it token
		it, start = nextItem(tok, start)
		if it.text == "" {
			return false, p.errorf(f, it.off, 0, "empty item in the %s list %q", f, tok.text)
		}
		lx := lexer{s: it.text, base: it.off}
		if err := p.quartzItem(&lx, f, fs, base, inList, set, s); err != nil {
			return false, err
		}
	}
	return false, nil
}

func (p *parser) quartzItem(lx *lexer, f Field, fs *fieldSpec, base int, inList bool, set *valueSet, s *spec) error {
	listErr := func(what string) error {
		e := p.errorf(f, lx.base, len(lx.s), "%s cannot be combined with other values in a %s list", what, f)
		switch what {
		case "'#'":
			p.because(e, quirkNthInList)
		case "'W'":
			p.because(e, quirkWeekdayInList)
		}
		return e
	}
	c := lx.peek()
	switch {
	case c == '*' || c == '/':
		if c == '*' {
			lx.i++
		}
		step := 1
		if lx.peek() == '/' {
			var err error
			if step, err = p.step(lx, f, fs, true); err != nil {
				return err
			}
		}
		addRange(set, fs, base, fs.lo, fs.fillHi, step)
		return p.trailing(lx, f)

	case f == DayOfMonth && c == 'L':
		if inList {
			return listErr("'L'")
		}
		lx.i++
		kind, n := domLast, 0
		if lx.peek() == '-' {
			lx.i++
			v, off, digits := lx.digits()
			switch {
			case digits == 0:
				return p.errorf(f, lx.off(), 0, "'L-' in %q must be followed by a number of days", lx.s)
			case v > 30:
				return p.errorf(f, off, digits, "offset %d from the last day in %q is too large (at most 30)", v, lx.s)
			}
			n = v
		}
		if lx.peek() == 'W' {
			lx.i++
			kind = domLastWeekday
		}
		s.domKind, s.domN = kind, int8(n)
		return p.trailing(lx, f)

	case f == DayOfWeek && strings.EqualFold(lx.s, "L"):
		if inList {
			return listErr("'L'")
		}
		lx.i++
		set.add(7) // Quartz: 'L' alone in day-of-week is 7 = SAT
		return nil

	case f == DayOfWeek && c == 'L':
		return p.because(p.errorf(f, lx.base, len(lx.s), "%q is not a day-of-week item: 'L' alone means Saturday, and the last given weekday of the month is written 6L or FRIL", lx.s), quirkTrailingJunk)
	}

	start := lx.off()
	v, isName, err := p.valueOf(lx, f, fs)
	if err != nil {
		return err
	}
	switch lx.peek() {
	case '-':
		lx.i++
		v2, isName2, err := p.valueOf(lx, f, fs)
		if se, ok := err.(*SyntaxError); ok && f == DayOfWeek && se.Len > 0 && strings.Trim(p.expr[se.Offset:se.Offset+se.Len], "0") == "" {
			p.because(se, quirkDOWZeroEnd) // Quartz does not check a range's end for 0
		}
		if err != nil {
			return err
		}
		if isName != isName2 {
			return p.errorf(f, start, lx.off()-start, "range %q mixes a name and a number; use two names or two numbers", lx.s[start-lx.base:lx.i])
		}
		if v2 < v && fs.wrap == 0 {
			return p.errorf(f, start, lx.off()-start, "%s range %d-%d is reversed", f, v, v2)
		}
		step := 1
		switch lx.peek() {
		case '/':
			if isName {
				return p.because(p.errorf(f, lx.off(), len(lx.s)-lx.i, "a step after a name range (%q) is not supported: Quartz silently ignores it; write the range with numbers", lx.s), quirkDroppedStep)
			}
			if step, err = p.step(lx, f, fs, false); err != nil {
				return err
			}
		case 'W':
			if f == DayOfMonth {
				return p.because(p.errorf(f, lx.off(), 1, "'W' needs a single day, not a range (%q); Quartz would silently ignore it", lx.s), quirkDroppedSuffix)
			}
		case 'L', '#':
			if f == DayOfWeek {
				return p.because(p.errorf(f, lx.off(), 1, "'%c' needs a single weekday, not a range (%q); Quartz would silently ignore it", lx.peek(), lx.s), quirkDroppedSuffix)
			}
		}
		addRange(set, fs, base, v, v2, step)
	case '/':
		if isName {
			return p.because(p.errorf(f, lx.off(), len(lx.s)-lx.i, "a step after a name (%q) is not supported: Quartz silently ignores it; use a number", lx.s), quirkDroppedStep)
		}
		step, err := p.step(lx, f, fs, true) // Quartz checks a/s like */s
		if err != nil {
			return err
		}
		addRange(set, fs, base, v, fs.fillHi, step)
	case 'W':
		if f != DayOfMonth {
			break
		}
		if inList {
			return listErr("'W'")
		}
		lx.i++
		s.domKind, s.domN = domWeekday, int8(v)
	case 'L':
		if f != DayOfWeek {
			break
		}
		if inList {
			return listErr("'L'")
		}
		lx.i++
		s.dowKind, s.dowDay = dowLast, int8(v-1)
	case '#':
		if f != DayOfWeek {
			break
		}
		if inList {
			return listErr("'#'")
		}
		lx.i++
		k, off, n := lx.digits()
		if n == 0 || k < 1 || k > 5 {
			return p.errorf(f, off, n, "'#' in %q must be followed by a number 1-5 (the week of the month)", lx.s)
		}
		s.dowKind, s.dowDay, s.dowNthK = dowNth, int8(v-1), int8(k)
	default:
		set.add(v - base)
	}
	return p.trailing(lx, f)
}
