package schedstore

// Field names of a schedule hash ({<ns>}:sched:<id>). They are exported so
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

	// Which instance's declaration is in force (see Declarer).
	FieldDeclaredBy      = "declared_by"
	FieldDeclaredVersion = "declared_version"
	FieldDeclaredStart   = "declared_start"
	FieldCreated         = "created"
	FieldDefChanged      = "def_changed" // last time the definition hash changed

	// State (written by the firing path).
	FieldNextFire       = "next_fire"
	FieldLastFired      = "last_fired"
	FieldTimesTriggered = "times_triggered"
	FieldLastOutcome    = "last_outcome"

	// Pause of the whole schedule.
	FieldPaused     = "paused"
	FieldPauseNote  = "pause_note"
	FieldPauseUntil = "pause_until"
	FieldPausedBy   = "paused_by"
	FieldPausedAt   = "paused_at"

	// FieldJobPausePrefix + job name holds the JSON PauseInfo of one paused
	// job of a group.
	FieldJobPausePrefix = "jobpause:"
)
