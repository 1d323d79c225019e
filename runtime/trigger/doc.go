// Package trigger computes when recurring jobs fire and what happens when
// they fire late, following Quartz 2.3.2's CronTrigger and SimpleTrigger
// semantics exactly.
//
// Everything here is a pure function of its arguments: nothing reads the
// clock and nothing touches Redis. The scheduler persists a [State] per
// schedule and calls [Catchup.Due] with the current time whenever it looks at
// a schedule: on every tick, on becoming leader, after a stall or a clock
// jump, and when a paused schedule is resumed. The generator calls
// [Trigger.Validate] and [ParsePolicy] at go generate time, so that a bad
// directive fails the build instead of the deployment.
//
// A [Cron] trigger fires at the times of a cron expression between an
// inclusive start and an inclusive end. A [Simple] trigger fires at start,
// start+interval, ... repeatCount+1 times, with an exclusive end. When the
// scheduler was not running at a fire time (a crash, a deploy, a pause), the
// trigger's misfire [Policy] decides whether the missed runs are replayed,
// collapsed into one run now, or skipped; see docs/misfire.md for the table
// of what each policy does.
package trigger
