package schedstore

// Field names of a schedule hash (<p>sched:<id>, keys.go). They are exported so
// that the scheduler's firing script can update the state fields in the same
// script as its enqueue. Times are Unix milliseconds; booleans are "1" or
// absent.
const (
	// Definition (written by Register and Sweep).
	FieldID       = "id"
	FieldKind     = "kind"
	FieldSpec     = "spec"
	FieldZone     = "zone"
	FieldPolicy   = "policy"
	FieldIsolated = "isolated"
	FieldGroup    = "group"
	FieldJobs     = "jobs" // JSON array of Job
	FieldOverlap  = "overlap"
	FieldSource   = "source"
	FieldDefHash  = "def_hash"

	// Health thresholds of the definition, outside def_hash (see
	// Definition.LateAfter).
	FieldLateAfter    = "late_after"    // milliseconds
	FieldFailingAfter = "failing_after" // runs

	// Which instance's declaration is in force (see Declarer).
	FieldDeclaredBy      = "declared_by"
	FieldDeclaredVersion = "declared_version"
	FieldDeclaredStart   = "declared_start"
	FieldCreated         = "created"
	FieldDefChanged      = "def_changed" // last time the definition hash changed

	// Trigger state (written by the firing path; see TriggerState).
	FieldNextFire       = "next_fire"     // TriggerState.Next
	FieldLastFired      = "last_fired"    // TriggerState.Prev
	FieldTriggerStart   = "trigger_start" // TriggerState.Start
	FieldTimesTriggered = "times_triggered"
	FieldRepeatCount    = "repeat_count"
	FieldComplete       = "complete"
	FieldLastOutcome    = "last_outcome"
	FieldStateSaved     = "state_saved" // when the trigger state was last written

	// Retirement: set while no live instance declares the schedule (or an
	// operator retired it); the leader does not fire it, and its state is
	// kept until RetireGrace deletes it (a tombstone).
	FieldRetired   = "retired"    // when it was retired (ms)
	FieldRetiredBy = "retired_by" // "" when the sweep retired it; the operator otherwise

	// Pause of the whole schedule.
	FieldPaused     = "paused"
	FieldPauseNote  = "pause_note"
	FieldPauseUntil = "pause_until"
	FieldPausedBy   = "paused_by"
	FieldPausedAt   = "paused_at"
	// FieldResumedAt is when an operator last ended a pause of the whole
	// schedule (Resume): the earliest the schedule could fire again, which
	// schedule health counts lateness from.
	FieldResumedAt = "resumed_at"

	// FieldJobPausePrefix + job name holds the JSON PauseInfo of one paused
	// job of a group.
	FieldJobPausePrefix = "jobpause:"
)
