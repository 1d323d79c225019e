package console

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/cron"
)

// describeTrigger says in words when a schedule fires ("at 02:00 every
// day", "every 30 seconds"). It returns "" when it has no words for the
// trigger; the page then shows the trigger as written only.
func describeTrigger(s *chronos.ScheduleInfo) string {
	switch s.Trigger {
	case "interval":
		d, err := time.ParseDuration(s.Spec)
		if err != nil {
			return ""
		}
		return "every " + durationWords(d)
	case "simple":
		return describeSimple(s.Spec)
	case "cron":
		return describeCron(s.Spec)
	}
	return ""
}

// durationWords is d as "second", "30 seconds", "hour" or "1h30m".
func durationWords(d time.Duration) string {
	units := []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}}
	for _, u := range units {
		if d >= u.d && d%u.d == 0 {
			n := d / u.d
			if n == 1 {
				return u.name
			}
			return fmt.Sprintf("%d %ss", n, u.name)
		}
	}
	return strings.TrimSuffix(strings.TrimSuffix(d.String(), "0s"), "0m")
}

// describeSimple reads the registry form of a simple trigger
// ("every=10s;repeat=5;start=…").
func describeSimple(spec string) string {
	var (
		every          time.Duration
		repeat         = 0
		delay          time.Duration
		start, end     time.Time
		hasRepeat, bad bool
	)
	for part := range strings.SplitSeq(spec, ";") {
		k, v, _ := strings.Cut(part, "=")
		var err error
		switch k {
		case "every":
			every, err = time.ParseDuration(v)
		case "repeat":
			repeat, err = strconv.Atoi(v)
			hasRepeat = true
		case "delay":
			delay, err = time.ParseDuration(v)
		case "start", "end":
			var ms int64
			ms, err = strconv.ParseInt(v, 10, 64)
			if k == "start" {
				start = time.UnixMilli(ms).UTC()
			} else {
				end = time.UnixMilli(ms).UTC()
			}
		default:
			bad = true
		}
		bad = bad || err != nil
	}
	if bad || !hasRepeat {
		return ""
	}
	first := "at registration"
	switch {
	case !start.IsZero():
		first = "at " + start.Format("2006-01-02 15:04:05Z")
	case delay > 0:
		first = durationWords(delay) + " after registration"
		if !strings.ContainsAny(first[:1], "0123456789") {
			first = "one " + first
		}
	}
	var b strings.Builder
	switch {
	case repeat == 0:
		b.WriteString("once, " + first)
	case repeat < 0:
		fmt.Fprintf(&b, "every %s from %s", durationWords(every), strings.TrimPrefix(first, "at "))
	default:
		fmt.Fprintf(&b, "%d times, every %s from %s", repeat+1, durationWords(every), strings.TrimPrefix(first, "at "))
	}
	if !end.IsZero() {
		b.WriteString(", until " + end.Format("2006-01-02 15:04:05Z"))
	}
	return b.String()
}

var (
	dayNames   = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	monthNames = []string{"", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	dayAbbr    = map[string]int{"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}
	monthAbbr  = map[string]int{"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6, "JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}
	ordinals   = []string{"", "first", "second", "third", "fourth", "fifth"}
	descriptor = map[string]string{
		"@yearly": "at 00:00 on 1 January", "@annually": "at 00:00 on 1 January",
		"@monthly": "at 00:00 on day 1 of the month", "@weekly": "at 00:00 on Sunday",
		"@daily": "at 00:00 every day", "@midnight": "at 00:00 every day", "@hourly": "every hour at minute 00",
	}
)

// cronFields is an expression split into Quartz order, with the
// day-of-week numbering of its dialect.
type cronFields struct {
	sec, min, hour, dom, month, dow, year string
	quartz                                bool // day-of-week 1 = Sunday; else 0 (and 7) = Sunday
}

// describeCron says in words when expr fires, or "" when it cannot.
func describeCron(expr string) string {
	e, err := cron.Parse(expr)
	if err != nil {
		return ""
	}
	text := e.String()
	if d, ok := descriptor[text]; ok {
		return d
	}
	f := strings.Fields(text)
	var c cronFields
	switch len(f) {
	case 5:
		c = cronFields{sec: "0", min: f[0], hour: f[1], dom: f[2], month: f[3], dow: f[4], year: "*"}
	case 6, 7:
		c = cronFields{sec: f[0], min: f[1], hour: f[2], dom: f[3], month: f[4], dow: f[5], year: "*", quartz: true}
		if len(f) == 7 {
			c.year = f[6]
		}
	default:
		return ""
	}
	when, frequent := c.timeWords()
	day, ok := c.dayWords()
	if when == "" || !ok {
		return ""
	}
	parts := []string{when}
	if day != "every day" || !frequent {
		parts = append(parts, day)
	}
	if c.month != "*" {
		m, ok := listWords(c.month, monthName)
		if !ok {
			return ""
		}
		parts = append(parts, "in "+m)
	}
	if c.year != "*" {
		y, ok := listWords(c.year, func(s string) (string, bool) { return s, isNum(s) })
		if !ok {
			return ""
		}
		parts = append(parts, "in "+y)
	}
	return strings.Join(parts, " ")
}

// timeWords describes the second, minute and hour fields. frequent reports
// a phrase of the "every N minutes" kind, which needs no "every day".
func (c cronFields) timeWords() (string, bool) {
	switch {
	case isNum(c.sec) && isNum(c.min) && isNum(c.hour):
		return "at " + clock(c.hour, c.min, c.sec), false
	case isNum(c.sec) && isNum(c.min) && isNumList(c.hour):
		var ts []string
		for h := range strings.SplitSeq(c.hour, ",") {
			ts = append(ts, clock(h, c.min, c.sec))
		}
		return "at " + joinAnd(ts), false
	case isNum(c.sec) && isNum(c.min) && c.hour == "*":
		return "every hour at minute " + twoDigits(c.min) + secondsSuffix(c.sec), true
	case isNum(c.sec) && isNum(c.min):
		if n, from, ok := step(c.hour); ok {
			return fmt.Sprintf("every %d hours from %s", n, clock(from, c.min, c.sec)), true
		}
		if a, b, ok := numRange(c.hour); ok {
			return fmt.Sprintf("every hour from %s to %s", clock(a, c.min, c.sec), clock(b, c.min, c.sec)), true
		}
	case isNum(c.sec) && c.min == "*":
		return "every minute" + secondsSuffix(c.sec) + hourWords(c.hour), true
	case isNum(c.sec):
		if n, from, ok := step(c.min); ok {
			w := fmt.Sprintf("every %d minutes", n)
			if from != "0" {
				w += " from minute " + from
			}
			return w + secondsSuffix(c.sec) + hourWords(c.hour), true
		}
	case c.sec == "*" && c.min == "*" && c.hour == "*":
		return "every second", true
	default:
		if n, from, ok := step(c.sec); ok && c.min == "*" && c.hour == "*" {
			w := fmt.Sprintf("every %d seconds", n)
			if from != "0" {
				w += " from second " + from
			}
			return w, true
		}
	}
	return "", false
}

func hourWords(h string) string {
	if h == "*" {
		return ""
	}
	if isNum(h) {
		return fmt.Sprintf(" from %s:00 to %s:59", twoDigits(h), twoDigits(h))
	}
	if a, b, ok := numRange(h); ok {
		return fmt.Sprintf(" from %s:00 to %s:59", twoDigits(a), twoDigits(b))
	}
	return " in hours " + h
}

func secondsSuffix(sec string) string {
	if sec == "0" {
		return ""
	}
	return " at second " + sec
}

// dayWords describes the day-of-month and day-of-week fields.
func (c cronFields) dayWords() (string, bool) {
	anyDOM := c.dom == "*" || c.dom == "?"
	anyDOW := c.dow == "*" || c.dow == "?"
	switch {
	case anyDOM && anyDOW:
		return "every day", true
	case anyDOW:
		return c.domWords()
	case anyDOM:
		return c.dowWords()
	}
	// Vixie cron fires when either field matches.
	d, ok1 := c.domWords()
	w, ok2 := c.dowWords()
	return d + " and " + w, ok1 && ok2
}

func (c cronFields) domWords() (string, bool) {
	switch d := c.dom; {
	case d == "L":
		return "on the last day of the month", true
	case d == "LW":
		return "on the last weekday of the month", true
	case strings.HasPrefix(d, "L-") && isNum(d[2:]):
		return fmt.Sprintf("%s days before the last day of the month", d[2:]), true
	case strings.HasSuffix(d, "W") && isNum(d[:len(d)-1]):
		return fmt.Sprintf("on the weekday nearest day %s of the month", d[:len(d)-1]), true
	}
	if n, from, ok := step(c.dom); ok {
		return fmt.Sprintf("every %d days from day %s of the month", n, from), true
	}
	w, ok := listWords(c.dom, func(s string) (string, bool) { return s, isNum(s) })
	if !ok {
		return "", false
	}
	if strings.ContainsAny(c.dom, ",-") {
		return "on days " + w + " of the month", true
	}
	return "on day " + w + " of the month", true
}

func (c cronFields) dowWords() (string, bool) {
	d := c.dow
	if day, nth, ok := strings.Cut(d, "#"); ok {
		name, ok1 := c.dayName(day)
		n, err := strconv.Atoi(nth)
		if !ok1 || err != nil || n < 1 || n >= len(ordinals) {
			return "", false
		}
		return fmt.Sprintf("on the %s %s of the month", ordinals[n], name), true
	}
	if day, ok := strings.CutSuffix(d, "L"); ok && day != "" {
		name, ok := c.dayName(day)
		return "on the last " + name + " of the month", ok
	}
	w, ok := listWords(d, c.dayName)
	return "on " + w, ok
}

func (c cronFields) dayName(s string) (string, bool) {
	if n, ok := dayAbbr[s]; ok {
		return dayNames[n], true
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return "", false
	}
	if c.quartz {
		n-- // 1 = Sunday
	}
	if n == 7 {
		n = 0
	}
	if n < 0 || n > 6 {
		return "", false
	}
	return dayNames[n], true
}

func monthName(s string) (string, bool) {
	if n, ok := monthAbbr[s]; ok {
		return monthNames[n], true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 12 {
		return "", false
	}
	return monthNames[n], true
}

// listWords renders a list of values and ranges ("MON-FRI,SUN") with
// name: "Monday to Friday and Sunday".
func listWords(field string, name func(string) (string, bool)) (string, bool) {
	var parts []string
	for item := range strings.SplitSeq(field, ",") {
		if a, b, ok := strings.Cut(item, "-"); ok {
			na, ok1 := name(a)
			nb, ok2 := name(b)
			if !ok1 || !ok2 {
				return "", false
			}
			parts = append(parts, na+" to "+nb)
			continue
		}
		n, ok := name(item)
		if !ok {
			return "", false
		}
		parts = append(parts, n)
	}
	return joinAnd(parts), true
}

func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// step reads "*/n" and "a/n".
func step(f string) (n int, from string, ok bool) {
	base, s, found := strings.Cut(f, "/")
	if !found {
		return 0, "", false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, "", false
	}
	if base == "*" {
		base = "0"
	}
	if !isNum(base) {
		return 0, "", false
	}
	return n, base, true
}

func numRange(f string) (string, string, bool) {
	a, b, ok := strings.Cut(f, "-")
	return a, b, ok && isNum(a) && isNum(b)
}

func isNum(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func isNumList(s string) bool {
	for p := range strings.SplitSeq(s, ",") {
		if !isNum(p) {
			return false
		}
	}
	return true
}

func twoDigits(s string) string {
	if len(s) == 1 {
		return "0" + s
	}
	return s
}

func clock(h, m, s string) string {
	t := twoDigits(h) + ":" + twoDigits(m)
	if s != "0" {
		t += ":" + twoDigits(s)
	}
	return t
}
