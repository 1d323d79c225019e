// Package firing is the scheduler's firing loop: one goroutine per instance
// that sleeps until the earliest next fire time among all schedules, hands
// everything due to a callback in one batch, and reschedules each entry with
// its own next function.
//
// The schedules live in an indexed min-heap keyed by next fire time, so
// adding, removing, rescheduling, pausing and resuming one of n schedules
// costs O(log n) and a wake-up costs O(k log n) for k due entries; nothing
// is polled and no goroutine runs per schedule.
//
// The loop never spins through a backlog. When it wakes late (the process
// was paused, the host overloaded, or the wall clock stepped forward), each
// due entry appears once in the batch with the earliest fire time it was
// due for and Folded set if later fire times also passed; the entry is then
// rescheduled after now. Deciding what the missed fire times mean is the
// misfire policy's job, which needs durable state the loop does not have.
// To let the caller run that catch-up, the loop compares wall-clock and
// monotonic progress on every wake-up and reports stalls and wall-clock
// jumps through Config.OnAnomaly before it hands over the batch.
//
// Queue is the same loop for callers that keep their own entries and
// compute each next fire time themselves (the scheduler's leader): it
// orders the caller's entries without an index by ID or a NextFunc, hands
// each due entry over once, and leaves putting it back to the caller.
//
// The loop reads time only through a Clock, so tests drive it with a
// ManualClock and never sleep.
package firing
