package cron

import (
	"slices"
	"strings"
)

var standardFields = [...]Field{Minute, Hour, DayOfMonth, Month, DayOfWeek}

var standardSpecs = [...]fieldSpec{
	Minute:     {lo: 0, hi: 59, fillHi: 59, rangeMsg: "0-59"},
	Hour:       {lo: 0, hi: 23, fillHi: 23, rangeMsg: "0-23"},
	DayOfMonth: {lo: 1, hi: 31, fillHi: 31, rangeMsg: "1-31"},
	Month:      {lo: 1, hi: 12, fillHi: 12, names: monthNames, nameBase: 1, rangeMsg: "1-12 (JAN-DEC)"},
	DayOfWeek:  {lo: 0, hi: 7, fillHi: 7, names: dayNames, nameBase: 0, rangeMsg: "0-7 (0 and 7 = SUN)"},
}

// standard parses a 5-field Vixie cron expression. Seconds are always 0 and
// every year matches. When day-of-month or day-of-week starts with '*', a
// day must match both; when both are restricted, either may match.
func (p *parser) standard(toks []token) (*Expression, error) {
	p.dialect = Standard
	s := spec{second: 1}
	addRange((*valueSet)(&s.years), &quartzSpecs[Year], minYear, minYear, horizonYear, 1)
	for i, tok := range toks {
		f := standardFields[i]
		var set valueSet
		if err := p.standardField(f, tok, &set); err != nil {
			return nil, err
		}
		switch f {
		case Minute:
			s.minute = set[0]
		case Hour:
			s.hour = uint32(set[0])
		case DayOfMonth:
			s.dom = uint32(set[0])
		case Month:
			s.month = uint16(set[0])
		case DayOfWeek:
			for v := 0; v <= 7; v++ {
				if set.has(v) {
					s.dow |= 1 << (v % 7)
				}
			}
		}
	}
	s.days = dayEither
	if strings.HasPrefix(toks[2].text, "*") || strings.HasPrefix(toks[4].text, "*") {
		s.days = dayBoth
	}
	s.finish()
	return &Expression{text: canonical(p.expr, toks), dialect: Standard, spec: s}, nil
}

func (p *parser) standardField(f Field, tok token, set *valueSet) error {
	if i := strings.IndexAny(tok.text, "?LlWw#"); i >= 0 && !mayHoldNames(f, tok.text) {
		return p.errorf(f, tok.off+i, 1, "'%c' is Quartz syntax, not 5-field cron; write a 6- or 7-field Quartz expression (seconds first) to use ? L W #", tok.text[i])
	}
	fs := &standardSpecs[f]
	for start := 0; start <= len(tok.text); {
		var it token
		it, start = nextItem(tok, start)
		if it.text == "" {
			return p.errorf(f, it.off, 0, "empty item in the %s list %q", f, tok.text)
		}
		lx := lexer{s: it.text, base: it.off}
		if err := p.standardItem(&lx, f, fs, set); err != nil {
			return err
		}
	}
	return nil
}

// mayHoldNames reports whether the letters in text may be names: month and
// day-of-week names contain L and W (JUL, WED), and '?' and '#' never
// appear in them.
func mayHoldNames(f Field, text string) bool {
	return (f == Month || f == DayOfWeek) && !strings.ContainsAny(text, "?#")
}

func (p *parser) standardItem(lx *lexer, f Field, fs *fieldSpec, set *valueSet) error {
	if lx.peek() == '*' {
		lx.i++
		step := 1
		if lx.peek() == '/' {
			var err error
			if step, err = p.step(lx, f, fs, false); err != nil {
				return err
			}
		}
		addRange(set, fs, 0, fs.lo, fs.fillHi, step)
		return p.trailing(lx, f)
	}
	start := lx.off()
	v, _, err := p.valueOf(lx, f, fs)
	if err != nil {
		return err
	}
	switch lx.peek() {
	case '-':
		lx.i++
		v2, _, err := p.valueOf(lx, f, fs)
		if err != nil {
			return err
		}
		if v2 < v {
			return p.errorf(f, start, lx.off()-start, "%s range %q is reversed; 5-field cron ranges do not wrap around (write two ranges, e.g. 22-23,0-2)", f, lx.s[start-lx.base:lx.i])
		}
		step := 1
		if lx.peek() == '/' {
			if step, err = p.step(lx, f, fs, false); err != nil {
				return err
			}
		}
		addRange(set, fs, 0, v, v2, step)
	case '/':
		return p.errorf(f, start, len(lx.s), "%q: in 5-field cron a step needs '*' or a range (write */s or %d-%d/s)", lx.s, v, fs.hi)
	default:
		set.add(v)
	}
	return p.trailing(lx, f)
}

// descriptors maps the @ shortcuts to the 5-field expressions they stand for.
var descriptors = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

func (p *parser) descriptor(toks []token) (*Expression, error) {
	name := strings.ToLower(toks[0].text)
	d := toks[0]
	switch name {
	case "@reboot":
		return nil, p.errorf(NoField, d.off, len(d.text), "@reboot runs once at process start, which is not a schedule; chronos has no equivalent")
	case "@every":
		return nil, p.errorf(NoField, d.off, len(d.text), "@every is an interval, not a cron expression; use an interval schedule (every=) instead")
	}
	std, ok := descriptors[name]
	if !ok {
		names := make([]string, 0, len(descriptors))
		for k := range descriptors {
			names = append(names, k)
		}
		slices.Sort(names)
		return nil, p.errorf(NoField, d.off, len(d.text), "unknown descriptor %q (want one of %s)", d.text, strings.Join(names, " "))
	}
	if len(toks) > 1 {
		extra := toks[1]
		return nil, p.errorf(NoField, extra.off, len(p.expr)-extra.off, "%s stands alone; unexpected %q after it", name, extra.text)
	}
	e, err := Parse(std)
	if err != nil {
		panic("cron: bad built-in descriptor " + std + ": " + err.Error())
	}
	e.text = name
	return e, nil
}
