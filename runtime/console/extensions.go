package console

import (
	"context"
	"time"
)

// The interfaces in this file are capabilities the console shows but the
// runtime does not provide yet (schedule health, retiring a schedule, the
// start of the leader's term). The console calls them when Options, or the
// Inspector itself, provides them, and shows "not available" otherwise, so
// it works with every runtime version.

// HealthState is the health of a schedule, as issue 11 §3 defines it.
type HealthState string

// The health states of a schedule.
const (
	// HealthOK: the schedule fires on time and its runs succeed.
	HealthOK HealthState = "ok"
	// HealthLate: a fire time passed more than a grace period ago and
	// nothing was enqueued for it.
	HealthLate HealthState = "late"
	// HealthFailing: its last runs failed or were dead-lettered.
	HealthFailing HealthState = "failing"
	// HealthPaused: the schedule (or every job of it) is paused.
	HealthPaused HealthState = "paused"
	// HealthRetired: no live instance declares the schedule any more.
	HealthRetired HealthState = "retired"
)

// Health is the health of one schedule.
type Health struct {
	State HealthState
	// Reason says why, in one line, for the page
	// ("fire time 02:00Z passed 5m ago, grace 1m").
	Reason string
	// Since is when the schedule entered State; zero if unknown.
	Since time.Time
}

// HealthSource computes the health of schedules.
type HealthSource interface {
	// ScheduleHealth returns the health of each schedule of ids that it
	// knows; a schedule missing from the map shows as unknown.
	ScheduleHealth(ctx context.Context, ids []string) (map[string]Health, error)
}

// Retirer retires schedules: a retired schedule stops firing and leaves
// the registry once no live instance declares it.
type Retirer interface {
	// RetireSchedule retires schedule id on behalf of who. It returns an
	// error wrapping chronos.ErrScheduleNotFound for an unknown schedule.
	RetireSchedule(ctx context.Context, id, who string) error
}

// LeaderSincer tells when the current leader's term began.
type LeaderSincer interface {
	// LeaderSince returns the start of the term with fencing epoch epoch,
	// or the zero time if it is not known.
	LeaderSince(ctx context.Context, epoch int64) (time.Time, error)
}
