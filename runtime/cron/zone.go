package cron

import (
	"fmt"
	"sync"
	"time"
	_ "time/tzdata" // zones work on hosts without /usr/share/zoneinfo
)

// zonePeriod is a span of instants [start, end) with one UTC offset.
type zonePeriod struct {
	start, end       int64 // unix seconds; valid only with hasStart/hasEnd
	hasStart, hasEnd bool
	off              int64 // seconds east of UTC
}

func periodAt(u int64, loc *time.Location) zonePeriod {
	t := time.Unix(u, 0).In(loc)
	_, off := t.Zone()
	s, e := t.ZoneBounds()
	p := zonePeriod{off: int64(off), hasStart: !s.IsZero(), hasEnd: !e.IsZero()}
	if p.hasStart {
		p.start = s.Unix()
	}
	if p.hasEnd {
		p.end = e.Unix()
	}
	return p
}

func (p zonePeriod) contains(u int64) bool {
	return (!p.hasStart || u >= p.start) && (!p.hasEnd || u < p.end)
}

// gap describes a spring-forward transition: at instant at the offset
// changes from before to after (after > before), so wall times in
// [at+before, at+after) do not exist.
type gap struct {
	at            int64
	before, after int64
}

// neighbourWindow is how close (in seconds) a candidate instant must be to a
// zone period's edge before resolve looks at the adjacent period. It is
// larger than any UTC offset change in the tz database (Samoa skipped a
// whole day in 2011).
const neighbourWindow = 2 * 86400

// resolve converts wall seconds w in loc to an instant. It detects gaps and
// overlaps itself instead of relying on time.Date, whose choice of offset is
// unspecified there: an ambiguous wall time resolves to the later instant
// (Quartz's rule), and a wall time in a gap returns ok == false with the gap.
func resolve(w int64, loc *time.Location) (u int64, ok bool, g gap) {
	if loc == time.UTC {
		return w, true, gap{}
	}
	p := periodAt(w, loc)
	var best int64
	try := func(q zonePeriod) {
		if x := w - q.off; q.contains(x) && (!ok || x > best) {
			best, ok = x, true
		}
	}
	try(p)
	x := w - p.off
	var prev, next zonePeriod
	hasPrev := p.hasStart && x-p.start < neighbourWindow
	if hasPrev {
		prev = periodAt(p.start-1, loc)
		try(prev)
	}
	hasNext := p.hasEnd && p.end-x < neighbourWindow
	if hasNext {
		next = periodAt(p.end, loc)
		try(next)
	}
	if ok {
		return best, true, gap{}
	}
	switch {
	case hasPrev && x < p.start:
		return 0, false, gap{at: p.start, before: prev.off, after: p.off}
	case hasNext && x >= p.end:
		return 0, false, gap{at: p.end, before: p.off, after: next.off}
	}
	// Not reachable with real zone data; fall back to the period's offset.
	return x, true, gap{}
}

// deepInside reports whether instant u lies in p at least neighbourWindow
// away from both of its edges. Then u is the only instant whose wall time
// is u+p.off, so resolve's neighbour lookups can be skipped.
func (p zonePeriod) deepInside(u int64) bool {
	return (!p.hasStart || u-p.start >= neighbourWindow) && (!p.hasEnd || p.end-u > neighbourWindow)
}

var zoneCache sync.Map // name -> *time.Location

// LoadLocation returns the time zone with the given IANA name, such as
// "Europe/Paris". The empty name and "UTC" mean UTC. "Local" is rejected:
// it names whatever zone each host happens to be configured with, so
// replicas would disagree about when a schedule fires.
//
// The tz database is embedded in the binary (package time/tzdata), so names
// resolve even on hosts without /usr/share/zoneinfo. Go's lookup order
// still prefers the ZONEINFO variable and the host's files when they exist.
// Errors wrap ErrInvalidZone. Loaded zones are cached.
func LoadLocation(name string) (*time.Location, error) {
	switch name {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return nil, fmt.Errorf("%w %q: the host's local zone differs from machine to machine; name an IANA zone such as \"Europe/Paris\"", ErrInvalidZone, name)
	}
	if loc, ok := zoneCache.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%w %q: not a zone in the IANA tz database (want a name such as \"America/New_York\"): %v", ErrInvalidZone, name, err)
	}
	zoneCache.Store(name, loc)
	return loc, nil
}
