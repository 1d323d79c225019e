package chronos

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/chronos-go/chronos/runtime/cron"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// GroupTrigger is the trigger of a Group: CronTrigger or SimpleTrigger.
type GroupTrigger struct {
	kind string // defKindCron or defKindSimple
	spec string
}

// CronTrigger fires a group at the fire times of a cron expression; zone and
// DST come from the group's options (WithTimeZone, WithDST).
func CronTrigger(expr string) GroupTrigger { return GroupTrigger{kind: defKindCron, spec: expr} }

// SimpleTrigger fires a group with a simple trigger.
func SimpleTrigger(t Simple) GroupTrigger {
	return GroupTrigger{kind: defKindSimple, spec: encodeSimple(t)}
}

// Group is one trigger that enqueues several jobs, each of which an
// operator can pause on its own (Inspector.PauseSchedule with a job name).
// All jobs of a firing are enqueued in one atomic step, under one dedup key.
type Group struct {
	s    *Scheduler
	id   string
	def  schedstore.Definition
	task taskOptions // group-wide task options, overridden per job
	err  error       // first error; returned by every AddJob
}

// NewGroup declares a group schedule with ID id (also its schedule ID).
// opts are schedule options and task options that apply to every job.
// Errors (a bad trigger, a duplicate ID, registering after Start) are
// returned by AddJob, so generated code checks one place.
func NewGroup(s *Scheduler, id string, trig GroupTrigger, opts ...ScheduleOption) *Group {
	cfg := collect(opts)
	g := &Group{s: s, id: id, task: cfg.task}
	g.def = schedstore.Definition{ID: id, Kind: trig.kind, Spec: trig.spec, Group: id}
	if trig.kind == defKindCron && cfg.sched.dst == cron.DSTShiftGap {
		g.def.Kind += dstSuffix
	}
	switch {
	case trig.kind == "":
		g.err = errors.New("zero GroupTrigger; use CronTrigger or SimpleTrigger")
	case cfg.sched.id != "" && cfg.sched.id != id:
		g.err = fmt.Errorf("WithScheduleID(%q) conflicts with the group ID", cfg.sched.id)
	}
	if g.err == nil {
		g.err = finishDefinition(&g.def, cfg, s.now())
	}
	if g.err == nil {
		g.err = s.addGroup(g)
	}
	if g.err != nil {
		g.err = fmt.Errorf("chronos: group %q: %w", id, g.err)
	}
	return g
}

// AddJob adds a job that the group's trigger enqueues with args. name
// identifies the job within the group (for pausing it and in the history);
// opts override the group's task options for this job.
func AddJob[A TaskArgs](g *Group, name string, args A, opts ...EnqueueOption) error {
	if g.err != nil {
		return g.err
	}
	task := g.task
	for _, o := range opts {
		var c enqueueConfig
		c.task = task
		o.applyEnqueue(&c)
		task = c.task
	}
	job, err := encodeJob(name, args, task)
	if err != nil {
		return fmt.Errorf("chronos: group %q, job %q: %w", g.id, name, err)
	}
	return g.s.addGroupJob(g, job)
}

// encodeJob is the registry form of one job.
func encodeJob(name string, args TaskArgs, task taskOptions) (schedstore.Job, error) {
	kind := args.Kind()
	if kind == "" {
		return schedstore.Job{}, fmt.Errorf("%T has an empty Kind", args)
	}
	payload, err := json.Marshal(args)
	if err != nil {
		return schedstore.Job{}, fmt.Errorf("encode args %T: %w", args, err)
	}
	o, err := encodeTaskOptions(task)
	if err != nil {
		return schedstore.Job{}, err
	}
	return schedstore.Job{Name: name, Kind: kind, Payload: payload, Options: o}, nil
}
