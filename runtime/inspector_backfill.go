package chronos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// DefaultMaxBackfill is the most fire times a backfill may cover unless
// BackfillOptions.MaxSlots allows more: a mistyped range (30 days of a
// 15-second schedule is 172,800 firings) is refused before anything is
// enqueued.
const DefaultMaxBackfill = 10_000

// planCountCap bounds how many fire times PlanBackfill counts.
const planCountCap = 10_000_000

// ErrBackfillTooLarge is returned (wrapped) by BackfillSchedule for a range
// with more fire times than BackfillOptions.MaxSlots. Nothing was asked.
var ErrBackfillTooLarge = errors.New("chronos: backfill range has too many fire times")

// BackfillOptions configure a backfill.
type BackfillOptions struct {
	// Who asked, for the leader's log and the console.
	Who string
	// MaxSlots is the most fire times the range may hold (default
	// DefaultMaxBackfill); a larger range is refused with
	// ErrBackfillTooLarge. The leader fires the range a chunk at a time
	// (backfillChunk per second), so a large one does not flood the queue.
	MaxSlots int
}

// BackfillPlan is what a backfill of a range fires, computed without
// asking for it: a dry run.
type BackfillPlan struct {
	// Count is the number of fire times in the range: the firings the
	// backfill makes.
	Count int
	// More reports that the range holds more than ten million fire times,
	// which PlanBackfill does not count further.
	More bool
	// First and Last are the first and last fire times in the range (Last
	// is the last counted when More is set; both zero when Count is 0).
	First, Last time.Time
}

// PlanBackfill returns what BackfillSchedule(ctx, id, from, to, …) would
// fire under the definition in force now, computed as the leader computes
// it. It returns an error wrapping ErrScheduleNotFound for an unknown
// schedule and ErrIsolatedSchedule for an isolated one.
func (i *Inspector) PlanBackfill(ctx context.Context, id string, from, to time.Time) (*BackfillPlan, error) {
	sc, err := i.getSchedule(ctx, id)
	if err != nil {
		return nil, err
	}
	if sc.Isolated {
		return nil, fmt.Errorf("chronos: backfill %q: %w", id, ErrIsolatedSchedule)
	}
	if to.Before(from) {
		return nil, fmt.Errorf("chronos: backfill %q: the range ends (%v) before it starts (%v)", id, to, from)
	}
	p, err := compile(sc.Definition, sc.Created)
	if err != nil {
		return nil, fmt.Errorf("chronos: backfill %q: %w", id, err)
	}
	plan := &BackfillPlan{}
	trig := backfillTrigger(p.trig, from)
	t, ok := trig.FireTimeAfter(from.Add(-time.Millisecond))
	for ; ok && !t.After(to); t, ok = trig.FireTimeAfter(t) {
		if plan.Count == planCountCap {
			plan.More = true
			break
		}
		if plan.Count == 0 {
			plan.First = t
		}
		plan.Last = t
		plan.Count++
	}
	return plan, nil
}

// backfillTrigger is trig for a backfill from from: a cron trigger starts
// at the schedule's creation, and a backfill may reach back before it.
func backfillTrigger(trig trigger.Trigger, from time.Time) trigger.Trigger {
	if c, ok := trig.(trigger.Cron); ok && from.Before(c.Start) {
		c.Start = from
		return c
	}
	return trig
}

// BackfillSchedule asks the leader to fire schedule id for each of its fire
// times in [from, to], whether or not they ran before; each task carries
// its fire time as TriggerTime. It returns the request ID.
//
// The range is counted first: one of more than opts.MaxSlots fire times
// (default DefaultMaxBackfill) is refused with an error wrapping
// ErrBackfillTooLarge that names the count and the limit, and nothing is
// asked. The leader fires the whole range, a chunk at a time, and records
// its progress in the request (Requests), so a leader change continues
// where the last one stopped; each fire time has its own dedup key, so
// none runs twice. Pauses apply as for TriggerSchedule. An isolated
// schedule cannot be backfilled (ErrIsolatedSchedule).
func (i *Inspector) BackfillSchedule(ctx context.Context, id string, from, to time.Time, opts BackfillOptions) (string, error) {
	plan, err := i.PlanBackfill(ctx, id, from, to)
	if err != nil {
		return "", err
	}
	limit := opts.MaxSlots
	if limit <= 0 {
		limit = DefaultMaxBackfill
	}
	if plan.More || plan.Count > limit {
		n := fmt.Sprint(plan.Count)
		if plan.More {
			n = "more than " + n
		}
		return "", fmt.Errorf("chronos: backfill %q: [%s, %s] holds %s fire times, more than the limit of %d; "+
			"raise it with BackfillOptions.MaxSlots (chronos backfill -max N) or backfill a shorter range: %w",
			id, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), n, limit, ErrBackfillTooLarge)
	}
	st, err := i.registry(ctx)
	if err != nil {
		return "", fmt.Errorf("chronos: backfill %q: %w", id, err)
	}
	r, err := st.RequestBackfill(ctx, id, from, to, plan.Count, opts.Who)
	if errors.Is(err, schedstore.ErrNotFound) {
		return "", fmt.Errorf("chronos: backfill %q: %w", id, ErrScheduleNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("chronos: backfill %q: %w", id, err)
	}
	return r.ID, nil
}

// OperatorRequest is a trigger-now or backfill request the leader has not
// finished yet.
type OperatorRequest struct {
	ID       string
	Kind     string // "trigger" or "backfill"
	Schedule string
	Who      string
	Created  time.Time
	// From and To are a backfill's range, Planned its fire times, Fired
	// those fired so far and Next the next one to fire (zero before the
	// first chunk).
	From, To time.Time
	Planned  int
	Fired    int
	Next     time.Time
}

// Requests returns the pending operator requests of every partition,
// oldest first, with the progress of each backfill.
func (i *Inspector) Requests(ctx context.Context) ([]*OperatorRequest, error) {
	st, err := i.registry(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: pending requests: %w", err)
	}
	rs, err := st.Requests(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("chronos: pending requests: %w", err)
	}
	out := make([]*OperatorRequest, len(rs))
	for k, r := range rs {
		out[k] = &OperatorRequest{ID: r.ID, Kind: string(r.Kind), Schedule: r.Schedule, Who: r.Who, Created: r.Created,
			From: r.From, To: r.To, Planned: r.Planned, Fired: r.Fired, Next: r.Next}
	}
	return out, nil
}
