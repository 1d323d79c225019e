package cron

import (
	"fmt"
	"sync"
	"time"
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

// offsetAt returns loc's UTC offset at instant u, in seconds.
func offsetAt(u int64, loc *time.Location) int64 {
	_, off := time.Unix(u, 0).In(loc).Zone()
	return int64(off)
}

// resolve converts wall seconds w in loc to an instant. It detects gaps and
// overlaps itself instead of relying on time.Date, whose choice of offset is
// unspecified there: an ambiguous wall time resolves to the later instant
// (Quartz's rule), and a wall time in a gap returns ok == false with the gap.
//
// The candidate offsets are those in force two days before and after w
// (and at w itself); an offset o fits when the instant w-o really has
// offset o. This does not trust time.Time.ZoneBounds, which beyond the
// zone's last listed transition reports boundaries at every new year where
// nothing changes.
func resolve(w int64, loc *time.Location) (u int64, ok bool, g gap) {
	if loc == time.UTC {
		return w, true, gap{}
	}
	before, after := offsetAt(w-neighbourWindow, loc), offsetAt(w+neighbourWindow, loc)
	for _, o := range [...]int64{before, after, offsetAt(w, loc)} {
		if x := w - o; offsetAt(x, loc) == o && (!ok || x > u) {
			u, ok = x, true
		}
	}
	if ok {
		return u, true, gap{}
	}
	// A gap: the clock jumped forward from the smaller offset to the larger.
	old, nu := min(before, after), max(before, after)
	at, _ := time.Unix(w-old, 0).In(loc).ZoneBounds()
	if at.IsZero() || nu == old {
		return w - old, true, gap{} // not reachable with real zone data
	}
	return 0, false, gap{at: at.Unix(), before: old, after: nu}
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
// Zones come from the tz database embedded in this package (TZDataVersion),
// never from the host: generate time and run time, and every replica, agree
// on every offset. Errors wrap ErrInvalidZone. Loaded zones are cached.
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
	loc, err := loadEmbeddedZone(name)
	if err != nil {
		return nil, fmt.Errorf("%w %q: not a zone in the IANA tz database (want a name such as \"America/New_York\"): %v", ErrInvalidZone, name, err)
	}
	zoneCache.Store(name, loc)
	return loc, nil
}
