package cron

import "math/bits"

// The year range. Explicit year values must lie in [minYear, maxListedYear];
// a '*' year (or an open-ended step) runs up to horizonYear, the fixed end of
// every search. Quartz's own horizon is "the JVM's current year + 100", which
// moves with the host clock; ours never does.
const (
	minYear       = 1970
	maxListedYear = 2099
	horizonYear   = 2199
)

// dayRule says how the day-of-month and day-of-week fields combine.
type dayRule uint8

const (
	dayByDOM  dayRule = iota // Quartz, day-of-week is '?'
	dayByDOW                 // Quartz, day-of-month is '?'
	dayBoth                  // standard, either field starts with '*': both must match
	dayEither                // standard, both restricted: either may match
)

// domKind is the form of the day-of-month field.
type domKind uint8

const (
	domSet         domKind = iota // a plain set of days (dom)
	domLast                       // L or L-n: last day minus domN
	domLastWeekday                // LW or L-nW: weekday nearest to last day minus domN
	domWeekday                    // nW: weekday nearest to day domN
)

// dowKind is the form of the day-of-week field.
type dowKind uint8

const (
	dowSet  dowKind = iota // a plain set of weekdays (dow)
	dowLast                // dL: the last weekday dowDay of the month
	dowNth                 // d#k: the dowNth-th weekday dowDay of the month
)

// spec is a compiled expression: one bit set per field plus the day rules.
// It is comparable, so two expressions are equal when their specs are.
type spec struct {
	second, minute uint64    // bits 0-59
	hour           uint32    // bits 0-23
	dom            uint32    // bits 1-31
	month          uint16    // bits 1-12
	dow            uint8     // bits 0-6, 0 = Sunday (time.Weekday numbering)
	years          [4]uint64 // bit i = year minYear+i, up to horizonYear

	days    dayRule
	domKind domKind
	domN    int8 // offset for domLast/domLastWeekday, day for domWeekday
	dowKind dowKind
	dowDay  int8 // weekday for dowLast/dowNth
	dowNthK int8 // k for dowNth

	// dowMasks[w] holds the days of a month starting on weekday w that
	// match the plain weekday set; computed once by finish.
	dowMasks [7]uint32
}

// finish fills the derived tables after parsing.
func (s *spec) finish() {
	// Days 0, 7, 14, 21 and 28 after the first match of a weekday.
	const weekly = 1 | 1<<7 | 1<<14 | 1<<21 | 1<<28
	for first := range 7 {
		var m uint32
		for w := range 7 {
			if s.dow&(1<<w) != 0 {
				m |= weekly << (1 + (w-first+7)%7)
			}
		}
		s.dowMasks[first] = m
	}
}

// nextBit returns the smallest set bit of x at position >= from, or -1.
func nextBit(x uint64, from int) int {
	if from >= 64 {
		return -1
	}
	if from > 0 {
		x &^= 1<<from - 1
	}
	if x == 0 {
		return -1
	}
	return bits.TrailingZeros64(x)
}

// nextYear returns the smallest allowed year >= y, or -1.
func (s *spec) nextYear(y int) int {
	if y < minYear {
		y = minYear
	}
	i := y - minYear
	for w := i / 64; w < len(s.years); w++ {
		x := s.years[w]
		if w == i/64 {
			x &^= 1<<(i%64) - 1
		}
		if x != 0 {
			if y := minYear + w*64 + bits.TrailingZeros64(x); y <= horizonYear {
				return y
			}
			return -1
		}
	}
	return -1
}

// dayMask returns the days of month m of year y that match, as bits 1-31.
func (s *spec) dayMask(y, m int) uint32 {
	dim := daysIn(y, m)
	first := weekdayOf(daysFromCivil(y, m, 1))
	valid := uint32(1)<<(dim+1) - 2
	switch s.days {
	case dayByDOM:
		return s.domMask(dim, first) & valid
	case dayByDOW:
		return s.dowMask(dim, first) & valid
	case dayBoth:
		return s.domMask(dim, first) & s.dowMask(dim, first) & valid
	default:
		return (s.domMask(dim, first) | s.dowMask(dim, first)) & valid
	}
}

func (s *spec) domMask(dim, first int) uint32 {
	switch s.domKind {
	case domLast:
		if d := dim - int(s.domN); d >= 1 {
			return 1 << d
		}
		return 0
	case domLastWeekday:
		if d := dim - int(s.domN); d >= 1 {
			return 1 << nearestWeekday(d, dim, first)
		}
		return 0 // Quartz loops forever here (deviation: no fire this month)
	case domWeekday:
		if d := int(s.domN); d <= dim {
			return 1 << nearestWeekday(d, dim, first)
		}
		return 0 // Quartz rolls into the next month (deviation: no fire)
	}
	return s.dom
}

// nearestWeekday moves day d of a month with dim days whose first day is
// weekday first to the nearest Monday-Friday without leaving the month.
func nearestWeekday(d, dim, first int) int {
	switch (first + d - 1) % 7 {
	case 6: // Saturday
		if d == 1 {
			return 3
		}
		return d - 1
	case 0: // Sunday
		if d == dim {
			return d - 2
		}
		return d + 1
	}
	return d
}

func (s *spec) dowMask(dim, first int) uint32 {
	switch s.dowKind {
	case dowLast:
		f := 1 + (int(s.dowDay)-first+7)%7
		return 1 << (f + 7*((dim-f)/7))
	case dowNth:
		if d := 1 + (int(s.dowDay)-first+7)%7 + 7*(int(s.dowNthK)-1); d <= dim {
			return 1 << d
		}
		return 0
	}
	return s.dowMasks[first]
}

// maxSearchSteps bounds the odometer loop in search. A search that reaches
// the horizon takes a few thousand steps; the bound only guards against a
// bug turning into a hang.
const maxSearchSteps = 1 << 17

// search returns the smallest wall time >= c that matches s, or false when
// there is none up to the end of horizonYear. It works like an odometer:
// each field jumps to its next allowed value, and a field that runs out
// carries into the next larger one and resets the smaller ones.
func (s *spec) search(c civil) (civil, bool) {
	for range maxSearchSteps {
		if c.year < minYear {
			c = civil{year: minYear, month: 1, day: 1}
		}
		y := s.nextYear(c.year)
		if y < 0 {
			return civil{}, false
		}
		if y != c.year {
			c = civil{year: y, month: 1, day: 1}
		}
		m := nextBit(uint64(s.month), c.month)
		if m < 0 {
			c = civil{year: c.year + 1, month: 1, day: 1}
			continue
		}
		if m != c.month {
			c = civil{year: c.year, month: m, day: 1}
		}
		d := nextBit(uint64(s.dayMask(c.year, c.month)), c.day)
		if d < 0 {
			c = civil{year: c.year, month: c.month + 1, day: 1}
			continue
		}
		if d != c.day {
			c.day, c.hour, c.minute, c.second = d, 0, 0, 0
		}
		h := nextBit(uint64(s.hour), c.hour)
		if h < 0 {
			c.day, c.hour, c.minute, c.second = c.day+1, 0, 0, 0
			continue
		}
		if h != c.hour {
			c.hour, c.minute, c.second = h, 0, 0
		}
		mi := nextBit(s.minute, c.minute)
		if mi < 0 {
			c.hour, c.minute, c.second = c.hour+1, 0, 0
			continue
		}
		if mi != c.minute {
			c.minute, c.second = mi, 0
		}
		sec := nextBit(s.second, c.second)
		if sec < 0 {
			c.minute, c.second = c.minute+1, 0
			continue
		}
		c.second = sec
		return c, true
	}
	return civil{}, false
}
