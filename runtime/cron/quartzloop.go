package cron

import "time"

// Near a DST transition Quartz's answer depends on the path its search
// takes, not only on which wall times match: getTimeAfter sets calendar
// fields stage by stage (second, minute, hour, day, month, year), and every
// intermediate wall time is resolved by Java's lenient calendar. A reset
// point that falls in a gap (say 03:00 when Chatham jumps from 02:45 to
// 03:45) is moved forward by the gap's length, and then setCalendarHour
// adds an hour when the hour changed, so 03:45, which exists, is lost.
// quartzLoop replays that search literally on wall-clock fields. Next uses
// it only within a few days of a transition; elsewhere the plain odometer
// search gives the same answer much faster.

// lenientWall resolves wall seconds as java.util.GregorianCalendar does:
// a wall time in a gap is read with the offset from before the change,
// which moves it forward by the gap's length. Other wall times are
// unchanged (an ambiguous one stands for the later instant).
func lenientWall(w int64, loc *time.Location) int64 {
	if _, ok, g := resolve(w, loc); !ok {
		return w + g.after - g.before
	}
	return w
}

// quartzLoop runs Quartz 2.3.2's getTimeAfter loop from wall time st (an
// existing wall time). It returns the matching wall time and found=true, or
// the loop's state once it has passed limit (found=false, more=true), or
// more=false when the schedule is exhausted.
func (s *spec) quartzLoop(st, limit int64, loc *time.Location) (w int64, found, more bool) {
	set := func(c civil) int64 { return lenientWall(c.wall(), loc) }
	// setHour is Quartz's setCalendarHour.
	setHour := func(c civil, hour int) int64 {
		c.hour = hour
		r := set(c)
		if rc := civilOf(r); rc.hour != hour && hour != 24 {
			rc.hour = hour + 1
			r = set(rc)
		}
		return r
	}
	first := func(x uint64) int { return nextBit(x, 0) }
	for range maxSearchSteps {
		if st >= limit {
			return st, false, true
		}
		c := civilOf(st)
		if c.year > horizonYear {
			return 0, false, false
		}
		// Second: no reset of the other fields, but the set re-resolves.
		if sec := nextBit(s.second, c.second); sec >= 0 {
			c.second = sec
		} else {
			c.second = first(s.second)
			c.minute++
		}
		st = set(c)
		c = civilOf(st)
		// Minute.
		mi, t, hr := nextBit(s.minute, c.minute), -1, c.hour
		if mi >= 0 {
			t = c.minute
		} else {
			mi, hr = first(s.minute), hr+1
		}
		if mi != t {
			c.second, c.minute = 0, mi
			st = setHour(c, hr)
			continue
		}
		// Hour.
		h, t, day := nextBit(uint64(s.hour), c.hour), -1, c.day
		if h >= 0 {
			t = c.hour
		} else {
			h, day = first(uint64(s.hour)), day+1
		}
		if h != t {
			c.second, c.minute, c.day = 0, 0, day
			st = setHour(c, h)
			continue
		}
		// Day.
		d := nextBit(uint64(s.dayMask(c.year, c.month)), c.day)
		if d < 0 {
			st = set(civil{year: c.year, month: c.month + 1, day: 1})
			continue
		}
		if d != c.day {
			st = set(civil{year: c.year, month: c.month, day: d})
			continue
		}
		// Month.
		m, t, y := nextBit(uint64(s.month), c.month), -1, c.year
		if m >= 0 {
			t = c.month
		} else {
			m, y = first(uint64(s.month)), y+1
		}
		if m != t {
			st = set(civil{year: y, month: m, day: 1})
			continue
		}
		// Year.
		ny := s.nextYear(c.year)
		if ny < 0 {
			return 0, false, false
		}
		if ny != c.year {
			st = set(civil{year: ny, month: 1, day: 1})
			continue
		}
		return st, true, true
	}
	return 0, false, false
}

// nextTransition returns the first instant after u at which loc's offset
// changes, if there is one before until. Zone boundaries where the offset
// stays the same are skipped. Beyond a zone's last listed transition Go's
// ZoneBounds reports such a boundary at every new year and keeps returning
// it for instants up to a day later, so the walk steps over it by a day
// (real transitions are never that close to a new year in that regime).
func nextTransition(u, until int64, loc *time.Location) (int64, bool) {
	p := periodAt(u, loc)
	for range 1024 {
		if !p.hasEnd || p.end > until {
			return 0, false
		}
		if offsetAt(p.end, loc) != p.off {
			return p.end, true
		}
		next := periodAt(p.end, loc)
		for probe := p.end + 3600; next.hasEnd && next.end <= p.end && probe <= p.end+2*86400; probe += 3600 {
			next = periodAt(probe, loc)
		}
		if next.hasEnd && next.end <= p.end {
			return 0, false // no progress; give up on the walk (not reached)
		}
		p = next
	}
	return 0, false
}

// quartzMayVisit reports whether Quartz's search, started at wall time w,
// can have a state on the calendar day containing wall time x. Only then
// can a transition near x change Quartz's answer: away from every state,
// its lenient calendar does plain arithmetic and the odometer search is
// exact. States fall on the start day and the next (hour carry), on days
// the day rule matches and the day after, and on the first day of a month;
// in a month or year the schedule excludes, only on the first day and on
// the first day the rule matches. The test errs on the side of yes.
func (s *spec) quartzMayVisit(w, x int64) bool {
	d, start := civilOf(x), civilOf(w)
	day := func(c civil) int64 { return daysFromCivil(c.year, c.month, c.day) }
	if n := day(d) - day(start); n == 0 || n == 1 {
		return true
	}
	mask := s.dayMask(d.year, d.month)
	if d.day == 1 || d.day == nextBit(uint64(mask), 1) {
		return true
	}
	y := d.year
	if s.month&(1<<d.month) == 0 || y < minYear || y > horizonYear || s.years[(y-minYear)/64]&(1<<((y-minYear)%64)) == 0 {
		return false
	}
	prev := civilOf(x - 86400)
	return mask&(1<<d.day) != 0 || d.day == 2 || s.dayMask(prev.year, prev.month)&(1<<prev.day) != 0
}
