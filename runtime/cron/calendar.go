package cron

// Proleptic Gregorian calendar arithmetic on plain integers. The search in
// next.go runs on wall-clock fields and must not go through time.Date,
// whose normalisation of wall times in DST gaps and overlaps is
// unspecified; these helpers are also much cheaper than time.Time methods.

// civil is a wall-clock date and time of day, with no zone attached.
type civil struct {
	year, month, day     int
	hour, minute, second int
}

// daysFromCivil returns the number of days from 1970-01-01 to y-m-d.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := int64(y - era*400) // [0, 399]
	mp := m - 3
	if m <= 2 {
		mp = m + 9
	}
	doy := int64((153*mp+2)/5 + d - 1)     // [0, 365]
	doe := yoe*365 + yoe/4 - yoe/100 + doy // [0, 146096]
	return int64(era)*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	y = int(yoe + era*400)
	if m <= 2 {
		y++
	}
	return y, m, d
}

// weekdayOf returns the weekday (0 = Sunday) of the day that is days after
// 1970-01-01, a Thursday.
func weekdayOf(days int64) int {
	w := (days + 4) % 7
	if w < 0 {
		w += 7
	}
	return int(w)
}

// daysIn returns the length of month m of year y.
func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// civilOf splits wall seconds (seconds since 1970-01-01T00:00:00 on the
// wall clock) into fields.
func civilOf(wall int64) civil {
	days := wall / 86400
	secs := wall % 86400
	if secs < 0 {
		secs += 86400
		days--
	}
	y, m, d := civilFromDays(days)
	return civil{y, m, d, int(secs / 3600), int(secs / 60 % 60), int(secs % 60)}
}

// wall returns c as wall seconds, the inverse of civilOf. Fields may
// overflow (month 13, day 32, hour 24, minute 60) and roll over the way a
// lenient calendar does.
func (c civil) wall() int64 {
	if c.month > 12 {
		c.year += (c.month - 1) / 12
		c.month = (c.month-1)%12 + 1
	}
	return daysFromCivil(c.year, c.month, c.day)*86400 + int64(c.hour*3600+c.minute*60+c.second)
}

// mod returns a modulo n in [0, n).
func mod(a, n int64) int64 {
	a %= n
	if a < 0 {
		a += n
	}
	return a
}
