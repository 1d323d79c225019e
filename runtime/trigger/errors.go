package trigger

import "errors"

// Sentinel errors returned (wrapped) by validation and [ParsePolicy]. Test for
// them with [errors.Is]; the error text carries the details.
var (
	// ErrSubSecondInterval reports a simple trigger whose interval is below
	// one second. chronos does not run sub-second schedules: every fire is a
	// Redis round trip and a dedup key.
	ErrSubSecondInterval = errors.New("interval below the 1s minimum")

	// ErrRepeatCount reports a repeat count below -1 (-1 means forever).
	ErrRepeatCount = errors.New("invalid repeat count")

	// ErrEndBeforeStart reports an end time before the start time.
	ErrEndBeforeStart = errors.New("end before start")

	// ErrNeverFires reports a trigger that has no fire time at all, for
	// example a cron expression whose only years are before the start, or
	// whose first fire lies after the end. Quartz refuses to schedule such a
	// trigger ("will never fire"), and so does chronos.
	ErrNeverFires = errors.New("trigger will never fire")

	// ErrNoSchedule reports a cron trigger without a schedule.
	ErrNoSchedule = errors.New("cron trigger has no schedule")

	// ErrUnknownPolicy reports a misfire policy name that no trigger kind
	// accepts.
	ErrUnknownPolicy = errors.New("unknown misfire policy")

	// ErrPolicyKind reports a misfire policy that exists, but for the other
	// trigger kind (fireNow on a cron trigger, doNothing on a simple one).
	ErrPolicyKind = errors.New("misfire policy does not apply to this trigger kind")
)

// detailError is an error with a human-readable message of its own that still
// matches a sentinel with errors.Is. It lets the generator show
// "interval 500ms is below the 1s minimum; ..." verbatim, without the
// sentinel's text appended.
type detailError struct {
	msg  string
	kind error
}

func (e *detailError) Error() string { return e.msg }
func (e *detailError) Unwrap() error { return e.kind }
