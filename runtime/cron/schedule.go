package cron

import "time"

// DSTPolicy chooses what a schedule does with wall times that a daylight
// saving change skips. Repeated wall times (fall back) always fire once, at
// the later instant, under every policy.
type DSTPolicy int

const (
	// DSTQuartz, the zero value, reproduces Quartz 2.3.2 exactly: a wall
	// time inside a spring-forward gap does not exist and is skipped, so a
	// daily 02:30 job in New York does not run on the day clocks go
	// forward. Quartz's search also passes through intermediate wall times
	// that its lenient calendar moves out of the gap, so near a gap that
	// does not start on the hour it can skip times that exist (Chatham,
	// 02:45 -> 03:45, loses 03:45); see docs/cron.md.
	DSTQuartz DSTPolicy = iota
	// DSTShiftGap runs a wall time lost in a spring-forward gap at the first
	// instant after the gap, as users of Vixie cron expect for jobs at fixed
	// times: the daily 02:30 job runs at 03:00 on that day. Several slots
	// in one gap collapse into that single run.
	DSTShiftGap
)

// String returns "quartz" or "shiftGap".
func (p DSTPolicy) String() string {
	switch p {
	case DSTQuartz:
		return "quartz"
	case DSTShiftGap:
		return "shiftGap"
	}
	return "DSTPolicy(?)"
}

// Schedule is an expression evaluated in a time zone. The zero Location
// means UTC and the zero DST policy means DSTQuartz.
type Schedule struct {
	Expr     *Expression
	Location *time.Location // nil means UTC
	DST      DSTPolicy
}

// maxGapRetries bounds how often one Next call may land in a DST gap and
// search again; a zone has at most a few gaps a year.
const maxGapRetries = 4096

// Next returns the first fire time strictly after after, in s.Location, with
// whole seconds. It returns the zero time when the schedule has no fire time
// after after up to the end of 2199 (or of its last listed year), and when
// s.Expr is nil.
//
// The search runs on wall-clock fields of the zone, as Quartz does: it
// starts at the wall time of after+1s (truncated to the second), finds the
// first matching wall time, and converts it to an instant, taking the later
// instant when the wall time occurs twice. So a daily 01:30 job runs once on
// the day clocks go back, and a job every 15 minutes is silent during the
// first pass of the repeated hour.
func (s Schedule) Next(after time.Time) time.Time {
	if s.Expr == nil {
		return time.Time{}
	}
	loc := s.Location
	if loc == nil {
		loc = time.UTC
	}
	from := after.Unix() + 1
	cur := from // the instant the search state stands for
	for range maxGapRetries {
		// The zone period of the state gives its wall time and, when the
		// answer falls well inside it (the common case), its offset too.
		var here zonePeriod
		if loc != time.UTC {
			here = periodAt(cur, loc)
		}
		w := cur + here.off
		c, ok := s.Expr.spec.search(civilOf(w))
		if !ok {
			return time.Time{}
		}
		cw := c.wall()
		u := cw - here.off
		if here.deepInside(u) {
			return time.Unix(u, 0).In(loc)
		}
		if s.DST == DSTQuartz {
			// Walk the transitions up to the candidate. Quartz's search can
			// only deviate from the plain one at a transition whose days it
			// visits; if it visits none, the candidate stands.
			r, rok, _ := resolve(cw, loc)
			until := u
			if rok {
				until = max(u, r)
			}
			visited, t := int64(0), cur
			for range 1024 {
				tt, near := nextTransition(t, until+neighbourWindow, loc)
				if !near {
					break
				}
				before, after := offsetAt(tt-1, loc), offsetAt(tt, loc)
				if s.Expr.spec.quartzMayVisit(w, tt+min(before, after)) || s.Expr.spec.quartzMayVisit(w, tt+max(before, after)-1) {
					visited = tt
					break
				}
				t = tt
			}
			if visited == 0 {
				if rok && r >= from {
					return time.Unix(r, 0).In(loc)
				}
				tt, near := nextTransition(cur, until+neighbourWindow, loc)
				if !near {
					return time.Time{} // not reached: a gap needs a transition
				}
				visited = tt
			}
			// Replay Quartz's own search from two days before the
			// transition (no fire time comes earlier) to three days after.
			tw := visited + offsetAt(visited-1, loc)
			start := max(w, tw-2*86400-mod(tw-2*86400, 86400))
			st, found, more := s.Expr.spec.quartzLoop(start, tw+3*86400, loc)
			if !more {
				return time.Time{}
			}
			u, _, _ := resolve(st, loc)
			if found && u >= from {
				return time.Unix(u, 0).In(loc)
			}
			cur = max(u, from)
			continue
		}
		// DSTShiftGap: the first matching wall time, with gap slots moved
		// to the end of their gap.
		u, ok, g := resolve(cw, loc)
		switch {
		case ok && u >= from:
			return time.Unix(u, 0).In(loc)
		case ok:
			cur = u + 1 // unreachable: a later wall time is a later instant
		case g.at >= from:
			return time.Unix(g.at, 0).In(loc)
		default:
			cur = max(g.at, cur+1) // unreachable: from lies before the gap
		}
	}
	return time.Time{}
}
