package chronos

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// ErrSchedulerStarted is returned when a schedule is registered, or Start is
// called, after the scheduler has started: the set of schedules an instance
// declares is fixed for its lifetime, which is what makes the rolling-deploy
// rule (docs/scheduler.md) well defined.
var ErrSchedulerStarted = errors.New("chronos: scheduler already started")

// ErrSchedulerNotStarted is returned by Shutdown on a scheduler that was
// never started.
var ErrSchedulerNotStarted = errors.New("chronos: scheduler not started")

// Simple is Aspectran's (and Quartz's) simple trigger: a first fire, then
// Repeat more fires Every apart, optionally bounded by End.
//
// The first fire is at Start if set, otherwise StartDelay after the
// schedule was first registered in Redis (so every instance, and every
// restart, agrees on it).
type Simple struct {
	// Every is the interval between fires; at least one second unless
	// Repeat is 0.
	Every time.Duration
	// StartDelay puts the first fire this long after the schedule's first
	// registration. Ignored when Start is set.
	StartDelay time.Duration
	// Start is the first fire time; End, if set, is after the last.
	Start, End time.Time
	// Repeat is the number of fires after the first (Quartz's
	// repeatCount); -1 repeats forever.
	Repeat int
}

// Trigger kinds as stored in the registry's "kind" field.
const (
	defKindCron     = "cron"
	defKindInterval = "interval"
	defKindSimple   = "simple"
	// A cron schedule with cron.DSTShiftGap is stored as kind
	// "cron:shiftGap": the registry has no DST field of its own.
	dstSuffix = ":shiftGap"
)

// mainJob names the only job of a schedule that is not a group.
const mainJob = "main"

// RegisterCron declares a schedule that enqueues args at every fire time of
// the cron expression expr (5 fields: standard cron; 6-7: Quartz; see
// docs/cron.md). Options are schedule options and task options; see
// WithScheduleID for the default ID. It returns an error for a bad
// expression, zone or misfire policy, and ErrSchedulerStarted after Start.
func RegisterCron[A TaskArgs](s *Scheduler, expr string, args A, opts ...ScheduleOption) error {
	cfg := collect(opts)
	def := schedstore.Definition{Kind: defKindCron, Spec: expr}
	if cfg.sched.dst == cron.DSTShiftGap {
		def.Kind += dstSuffix
	}
	return s.declare(def, cfg, args)
}

// RegisterInterval declares a schedule that enqueues args every interval,
// at multiples of every since the Unix epoch (every 30s fires at :00 and
// :30), starting with the first such time after the schedule was first
// registered. every must be at least one second.
func RegisterInterval[A TaskArgs](s *Scheduler, every time.Duration, args A, opts ...ScheduleOption) error {
	cfg := collect(opts)
	return s.declare(schedstore.Definition{Kind: defKindInterval, Spec: every.String()}, cfg, args)
}

// RegisterSimple declares a schedule with a simple trigger (see Simple).
func RegisterSimple[A TaskArgs](s *Scheduler, t Simple, args A, opts ...ScheduleOption) error {
	cfg := collect(opts)
	return s.declare(schedstore.Definition{Kind: defKindSimple, Spec: encodeSimple(t)}, cfg, args)
}

func collect(opts []ScheduleOption) scheduleConfig {
	var cfg scheduleConfig
	for _, o := range opts {
		if o != nil {
			o.applySchedule(&cfg)
		}
	}
	return cfg
}

// encodeSimple is the registry form of a simple trigger:
// "every=<dur>;repeat=<n>" plus ";delay=<dur>", ";start=<unix ms>" and
// ";end=<unix ms>" when set.
func encodeSimple(t Simple) string {
	b := make([]byte, 0, 64)
	b = append(append(b, "every="...), t.Every.String()...)
	b = strconv.AppendInt(append(b, ";repeat="...), int64(t.Repeat), 10)
	if t.StartDelay != 0 && t.Start.IsZero() {
		b = append(append(b, ";delay="...), t.StartDelay.String()...)
	}
	if !t.Start.IsZero() {
		b = strconv.AppendInt(append(b, ";start="...), t.Start.UnixMilli(), 10)
	}
	if !t.End.IsZero() {
		b = strconv.AppendInt(append(b, ";end="...), t.End.UnixMilli(), 10)
	}
	return string(b)
}

func decodeSimple(spec string) (Simple, error) {
	var t Simple
	for part := range strings.SplitSeq(spec, ";") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return t, fmt.Errorf("simple trigger %q: bad part %q", spec, part)
		}
		var err error
		switch k {
		case "every":
			t.Every, err = time.ParseDuration(v)
		case "delay":
			t.StartDelay, err = time.ParseDuration(v)
		case "repeat":
			t.Repeat, err = strconv.Atoi(v)
		case "start", "end":
			var ms int64
			ms, err = strconv.ParseInt(v, 10, 64)
			if k == "start" {
				t.Start = time.UnixMilli(ms).UTC()
			} else {
				t.End = time.UnixMilli(ms).UTC()
			}
		default:
			err = errors.New("unknown field")
		}
		if err != nil {
			return t, fmt.Errorf("simple trigger %q: %s: %w", spec, k, err)
		}
	}
	return t, nil
}

// plan is a stored definition compiled for firing: its trigger, policy and
// jobs ready to encode.
type plan struct {
	trig    trigger.Trigger
	policy  trigger.Policy
	overlap Overlap
	jobs    []planJob
}

// planJob is one job of a plan with its task options decoded.
type planJob struct {
	schedstore.Job              // name, kind, payload and options, as defined
	opts           *taskOptions // Options decoded; shared by every job with the default options (defaultTaskOptions)
}

// defaultTaskOptions is the options of every scheduled job registered
// without task options: one copy for all of them, not one per schedule.
var defaultTaskOptions = &taskOptions{}

// compile builds the plan of def for a schedule first registered at
// created (the anchor of interval and delayed simple triggers, and the
// start of cron triggers).
func compile(def schedstore.Definition, created time.Time) (*plan, error) {
	p := &plan{}
	if err := p.build(&def, created, nil); err != nil {
		return nil, err
	}
	return p, nil
}

// build compiles def into p for a schedule first registered at created.
// The jobs go into jobs when it has room for them (a declaration's own
// array), into a new slice otherwise.
func (p *plan) build(def *schedstore.Definition, created time.Time, jobs []planJob) error {
	trig, err := compileTrigger(def, created)
	if err != nil {
		return err
	}
	p.trig = trig
	if p.policy, err = trigger.ParsePolicy(def.Policy, trig.Kind()); err != nil {
		return err
	}
	if p.overlap, err = parseOverlap(def.Overlap); err != nil {
		return err
	}
	if cap(jobs) < len(def.Jobs) {
		jobs = make([]planJob, 0, len(def.Jobs))
	}
	p.jobs = jobs[:0]
	for _, j := range def.Jobs {
		o, err := decodeTaskOptions(j.Options)
		if err != nil {
			return fmt.Errorf("job %q: %w", j.Name, err)
		}
		opts := defaultTaskOptions
		if o != *defaultTaskOptions {
			opts = &o
		}
		p.jobs = append(p.jobs, planJob{Job: j, opts: opts})
	}
	return nil
}

// compileTrigger builds the trigger of def for a schedule first registered
// at created, and checks it.
func compileTrigger(def *schedstore.Definition, created time.Time) (trigger.Trigger, error) {
	var trig trigger.Trigger
	kind, shiftGap := strings.CutSuffix(def.Kind, dstSuffix)
	if def.Zone != "" && kind != defKindCron {
		return nil, fmt.Errorf("time zone %q: only cron schedules have one", def.Zone)
	}
	switch kind {
	case defKindCron:
		expr, err := cron.Parse(def.Spec)
		if err != nil {
			return nil, err
		}
		sc := cron.Schedule{Expr: expr}
		if shiftGap {
			sc.DST = cron.DSTShiftGap
		}
		if def.Zone != "" {
			if sc.Location, err = cron.LoadLocation(def.Zone); err != nil {
				return nil, fmt.Errorf("time zone %q: %w", def.Zone, err)
			}
		}
		trig = trigger.Cron{Schedule: sc, Start: created.Truncate(time.Second)}
	case defKindInterval:
		every, err := time.ParseDuration(def.Spec)
		if err != nil {
			return nil, fmt.Errorf("interval %q: %w", def.Spec, err)
		}
		if every < time.Second {
			return nil, fmt.Errorf("interval %v: %w", every, trigger.ErrSubSecondInterval)
		}
		e := every.Nanoseconds()
		start := (created.UnixNano() + e - 1) / e * e
		trig = trigger.Simple{Start: time.Unix(0, start).UTC(), Interval: every, RepeatCount: trigger.RepeatForever}
	case defKindSimple:
		t, err := decodeSimple(def.Spec)
		if err != nil {
			return nil, err
		}
		start := t.Start
		if start.IsZero() {
			start = created.Add(t.StartDelay).Truncate(time.Millisecond)
		}
		trig = trigger.Simple{Start: start, Interval: t.Every, RepeatCount: t.Repeat, End: t.End}
	default:
		return nil, fmt.Errorf("unknown trigger kind %q", def.Kind)
	}
	if err := trig.Validate(); err != nil {
		return nil, err
	}
	return trig, nil
}

// Task options as stored in schedstore.Job.Options. WithDeadline,
// WithProcessAt and WithDedupKey are absolute or one-off and make no sense
// for a recurring schedule; they are rejected when registering.
const (
	optQueue     = "queue"
	optMaxRetry  = "max_retry"
	optTimeout   = "timeout"
	optProcessIn = "process_in"
)

func encodeTaskOptions(o taskOptions) (map[string]string, error) {
	if !o.deadline.IsZero() || !o.processAt.IsZero() || o.dedupKey != "" {
		return nil, errors.New("WithDeadline, WithProcessAt and WithDedupKey do not apply to schedules (each trigger is deduplicated by the scheduler)")
	}
	m := map[string]string{}
	if o.queue != "" {
		m[optQueue] = o.queue
	}
	if o.maxRetrySet {
		m[optMaxRetry] = strconv.Itoa(o.maxRetry)
	}
	if o.timeout > 0 {
		m[optTimeout] = o.timeout.String()
	}
	if o.processIn > 0 {
		m[optProcessIn] = o.processIn.String()
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

func decodeTaskOptions(m map[string]string) (taskOptions, error) {
	var o taskOptions
	var err error
	for k, v := range m {
		switch k {
		case optQueue:
			o.queue = v
		case optMaxRetry:
			o.maxRetry, err = strconv.Atoi(v)
			o.maxRetrySet = true
		case optTimeout:
			o.timeout, err = time.ParseDuration(v)
		case optProcessIn:
			o.processIn, err = time.ParseDuration(v)
		}
		if err != nil {
			return o, fmt.Errorf("option %s=%q: %w", k, v, err)
		}
	}
	return o, nil
}

// defaultID is the ID of a schedule registered without WithScheduleID; see
// WithScheduleID for the rule.
func defaultID(taskKind string, def schedstore.Definition) string {
	kind, _ := strings.CutSuffix(def.Kind, dstSuffix)
	id := taskKind + "@"
	switch kind {
	case defKindInterval:
		id += "every:" + def.Spec
	default:
		id += kind + ":" + def.Spec
	}
	if def.Zone != "" {
		id += "@" + def.Zone
	}
	return id
}

// finishDefinition fills def from cfg and checks it compiles.
func finishDefinition(def *schedstore.Definition, cfg scheduleConfig, now time.Time) error {
	so := cfg.sched
	def.Zone, def.Isolated, def.Source = so.zone, so.isolated, so.source
	if err := setHealthThresholds(def, so); err != nil {
		return err
	}
	if so.misfire != "" && so.misfire != trigger.PolicySmart.String() {
		def.Policy = so.misfire
	}
	if so.overlap != OverlapAllow {
		if _, err := parseOverlap(so.overlap.String()); err != nil {
			return err
		}
		def.Overlap = so.overlap.String()
	}
	if so.isolated && so.overlap != OverlapAllow {
		return errors.New("isolated schedules do not support overlap control")
	}
	_, err := compile(*def, now)
	return err
}
