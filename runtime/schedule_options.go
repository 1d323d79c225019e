package chronos

import (
	"fmt"
	"strconv"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
)

// schedOptions are the settings of a schedule that belong to the scheduler
// rather than to the tasks it enqueues. The zero value is the default: an ID
// derived from the trigger (see WithScheduleID), smartPolicy, UTC, Quartz's
// DST rule, fired once per cluster, overlapping runs allowed.
type schedOptions struct {
	id       string
	misfire  string
	zone     string
	dst      cron.DSTPolicy
	isolated bool
	overlap  Overlap
	source   string

	// Health thresholds (health.go); zero: the defaults.
	lateAfter    time.Duration
	failingAfter int
}

// schedOption is a ScheduleOption that sets scheduler settings only.
type schedOption func(*schedOptions)

func (f schedOption) applySchedule(c *scheduleConfig) { f(&c.sched) }

// WithScheduleID names the schedule. The ID is its identity in Redis: its
// durable state (last fired, pauses) and every dedup key hang off it, so
// keep it stable across releases. IDs must not contain '{' or '}'.
//
// Without this option the ID is derived from the task kind and the trigger:
//
//	<kind>@cron:<expression>[@<zone>]   RegisterCron
//	<kind>@every:<interval>              RegisterInterval (interval as time.Duration.String)
//	<kind>@simple:<spec>                 RegisterSimple (spec as stored, see Simple)
//
// for example "reports.daily@cron:0 0 * * *@Europe/Paris". Changing the
// expression therefore makes a new schedule; chronosgen always passes an
// explicit ID.
func WithScheduleID(id string) ScheduleOption {
	return schedOption(func(o *schedOptions) { o.id = id })
}

// WithMisfire sets the misfire policy by its directive name ("doNothing",
// "fireOnceNow", ...; see docs/misfire.md). The default is "smartPolicy".
// A policy of the other trigger kind is an error when registering.
func WithMisfire(policy string) ScheduleOption {
	return schedOption(func(o *schedOptions) { o.misfire = policy })
}

// WithTimeZone evaluates a cron expression in the IANA zone name (default
// UTC). It is an error for interval and simple schedules, whose fire times
// do not depend on a zone.
func WithTimeZone(name string) ScheduleOption {
	return schedOption(func(o *schedOptions) { o.zone = name })
}

// WithDST chooses what a cron schedule does with wall times a daylight
// saving change skips (default cron.DSTQuartz: skip them).
func WithDST(p cron.DSTPolicy) ScheduleOption {
	return schedOption(func(o *schedOptions) { o.dst = p })
}

// WithIsolated makes the schedule fire on every live instance instead of
// once per cluster, and run on the instance that fired it: local log
// collection, cache refresh. Its tasks go to the instance's own queue
// (IsolatedQueue), which every Server of the same process serves without
// configuration. See docs/scheduler.md, "Isolated schedules".
func WithIsolated(isolated bool) ScheduleOption {
	return schedOption(func(o *schedOptions) { o.isolated = isolated })
}

// WithOverlap sets what a firing does while an earlier run of the same
// schedule (and job) is still queued or running. The default is
// OverlapAllow.
func WithOverlap(o Overlap) ScheduleOption {
	return schedOption(func(c *schedOptions) { c.overlap = o })
}

// WithSource records where the schedule is declared ("file:line"), shown by
// the Inspector. chronosgen passes the directive's position.
func WithSource(file string, line int) ScheduleOption {
	return schedOption(func(o *schedOptions) { o.source = file + ":" + strconv.Itoa(line) })
}

// Overlap is what a firing does while the previous run of its schedule is
// still queued or running. It is enforced cluster-wide, inside the script
// that enqueues, so no race between instances can break it.
type Overlap int

const (
	// OverlapAllow enqueues every firing; runs may overlap.
	OverlapAllow Overlap = iota
	// OverlapSkip does not enqueue while the previous run is queued or
	// running; the skipped firing is recorded in the schedule's history.
	OverlapSkip
	// OverlapBufferOne keeps at most one firing waiting while the previous
	// run is queued or running, and queues it when that run finishes
	// (succeeds or goes to the dead letters). Further firings meanwhile are
	// skipped and recorded in the history. Runs never overlap.
	OverlapBufferOne
)

// String returns the name stored in the registry: "allow", "skip" or
// "bufferOne".
func (o Overlap) String() string {
	switch o {
	case OverlapAllow:
		return "allow"
	case OverlapSkip:
		return "skip"
	case OverlapBufferOne:
		return "bufferOne"
	}
	return "Overlap(" + strconv.Itoa(int(o)) + ")"
}

// parseOverlap is the inverse of Overlap.String; "" is OverlapAllow.
func parseOverlap(s string) (Overlap, error) {
	switch s {
	case "", "allow":
		return OverlapAllow, nil
	case "skip":
		return OverlapSkip, nil
	case "bufferOne":
		return OverlapBufferOne, nil
	}
	return 0, fmt.Errorf("unknown overlap policy %q (want allow, skip or bufferOne)", s)
}
