package chronos

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// decl is one schedule as the leader fires it and as this instance
// declares it: the definition, compiled, in a compact form. From Start on,
// Scheduler.own holds this instance's declarations, sorted by ID; the
// leader's entry of a schedule this instance declares as the registry holds
// it shares that decl, and other schedules get a decl of their own from the
// registry's definition (newDecl).
//
// It keeps only what firing needs and what makes the definition again
// (definition), in 136 bytes: the trigger packed (its times in unix ns),
// the job's name, kind and options in a jobTemplate shared by every
// declaration with the same ones, the registry's spec dropped where the
// trigger says it (a simple trigger with a start), and the fields most
// schedules leave empty behind more. A round makes the plan it fires from
// out of it (plan). This is memory per schedule.
type decl struct {
	id   string
	spec string // as defined; "" where specOf derives it from the trigger
	trig packedTrigger
	// payload and job are the job of a schedule that is not a group (job
	// nil: the group's jobs are more.jobs).
	payload []byte
	job     *jobTemplate
	more    *declMore // nil when none of its fields is set
	// created is the registry's created (unix ms) that trig was compiled
	// for; 0: not known. An entry shares the decl only for that created.
	created  int64
	hash     defHash
	kind     declKind
	policy   uint8 // trigger.Policy
	overlap  uint8 // Overlap
	isolated bool  // Definition.Isolated
}

// declMore holds what few definitions have: the fields most leave empty,
// as defined, a group's jobs, and a trigger whose times packedTrigger
// cannot hold.
type declMore struct {
	zone, policy, group, overlap, source string
	lateAfter                            time.Duration
	failingAfter                         int
	jobs                                 []planJob
	trig                                 trigger.Trigger
}

// jobTemplate is what a single job has besides its payload: its name, its
// kind and its task options, as defined and decoded.
type jobTemplate struct {
	name, kind string
	options    map[string]string
	opts       *taskOptions
}

// packedTrigger is a trigger in 40 bytes instead of an interface and a
// 64-byte struct: a simple trigger's start, end (unix ns, noTime for none),
// interval and repeat count, or a cron trigger's schedule and start.
type packedTrigger struct {
	start, end    int64
	every, repeat int64
	cron          *cron.Schedule
}

// packTrigger packs t, or reports that it cannot.
func packTrigger(t trigger.Trigger) (packedTrigger, bool) {
	switch t := t.(type) {
	case trigger.Simple:
		start, ok1 := packTime(t.Start)
		end, ok2 := packTime(t.End)
		return packedTrigger{start: start, end: end, every: int64(t.Interval), repeat: int64(t.RepeatCount)}, ok1 && ok2
	case trigger.Cron:
		cs, ok := t.Schedule.(cron.Schedule)
		start, ok1 := packTime(t.Start)
		return packedTrigger{start: start, end: noTime, cron: &cs}, ok && ok1 && t.End.IsZero()
	}
	return packedTrigger{}, false
}

// jobCache shares, among the declarations compiled together, one
// jobTemplate per job name, kind and options, and one cron schedule per
// expression, zone and DST rule.
type jobCache struct {
	jobs  map[jobKey]*jobTemplate
	crons map[cronKey]*cron.Schedule
}

type jobKey struct{ name, kind, options string }

type cronKey struct {
	kind       declKind
	spec, zone string
}

// optionsKey is a map of task options as one string, in key order.
func optionsKey(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(m))
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k])
		b.WriteByte(0)
	}
	return b.String()
}

// declKind is a definition's trigger kind (Definition.Kind).
type declKind uint8

const (
	kindCron declKind = iota
	kindCronShiftGap
	kindInterval
	kindSimple
)

// declKinds are the Definition.Kind strings of the declKinds.
var declKinds = [...]string{kindCron: defKindCron, kindCronShiftGap: defKindCron + dstSuffix,
	kindInterval: defKindInterval, kindSimple: defKindSimple}

func (k declKind) String() string { return declKinds[k] }

// anchored reports whether a kind's fire times depend on when the schedule
// was first registered: cron (its start), interval, and a simple trigger
// without a start (its delay).
func (d *decl) anchored() bool { return d.kind != kindSimple || d.spec != "" }

// newDecl compiles def, first registered at created, with hash hash.
func newDecl(def *schedstore.Definition, created time.Time, hash defHash) (*decl, error) {
	d := &decl{}
	if err := d.init(def, created, hash, nil); err != nil {
		return nil, err
	}
	return d, nil
}

// init compiles def into d, for created and with hash hash; cache, if not
// nil, shares job templates and cron schedules.
func (d *decl) init(def *schedstore.Definition, created time.Time, hash defHash, cache *jobCache) error {
	var p plan
	if err := p.build(def, created, nil); err != nil {
		return err // an unknown kind too, as compile says it
	}
	kind := -1
	for k, s := range declKinds {
		if s == def.Kind {
			kind = k
		}
	}
	if kind < 0 {
		return fmt.Errorf("unknown trigger kind %q", def.Kind)
	}
	*d = decl{id: def.ID, spec: def.Spec, hash: hash, kind: declKind(kind), isolated: def.Isolated, created: msOf(created),
		policy: uint8(p.policy), overlap: uint8(p.overlap)}
	if def.Zone != "" || def.Policy != "" || def.Group != "" || def.Overlap != "" || def.Source != "" ||
		def.LateAfter != 0 || def.FailingAfter != 0 || len(p.jobs) != 1 {
		d.more = &declMore{zone: def.Zone, policy: def.Policy, group: def.Group, overlap: def.Overlap, source: def.Source,
			lateAfter: def.LateAfter, failingAfter: def.FailingAfter}
	}
	if len(p.jobs) == 1 {
		j := &p.jobs[0]
		d.payload = j.Payload
		d.job = cache.job(j)
	} else {
		d.more.jobs = p.jobs
	}
	d.setTrigger(p.trig, cache, def)
	if d.kind == kindSimple && simpleSpec(p.trig) == def.Spec {
		d.spec = "" // the trigger says it: specOf
	}
	return nil
}

// job returns the template of planJob j, shared if c is not nil.
func (c *jobCache) job(j *planJob) *jobTemplate {
	t := &jobTemplate{name: j.Name, kind: j.Kind, options: j.Options, opts: j.opts}
	if c == nil {
		return t
	}
	k := jobKey{j.Name, j.Kind, optionsKey(j.Options)}
	if shared := c.jobs[k]; shared != nil {
		return shared
	}
	if c.jobs == nil {
		c.jobs = map[jobKey]*jobTemplate{}
	}
	c.jobs[k] = t
	return t
}

// setTrigger keeps t as d's trigger; cache, if not nil, shares cron
// schedules (those of def's kind, spec and zone).
func (d *decl) setTrigger(t trigger.Trigger, cache *jobCache, def *schedstore.Definition) {
	pt, ok := packTrigger(t)
	if !ok {
		pt = packedTrigger{}
		d.extra().trig = t
	} else if d.more != nil {
		d.more.trig = nil
	}
	if pt.cron != nil && cache != nil {
		k := cronKey{d.kind, def.Spec, def.Zone}
		if shared := cache.crons[k]; shared != nil {
			pt.cron = shared
		} else {
			if cache.crons == nil {
				cache.crons = map[cronKey]*cron.Schedule{}
			}
			cache.crons[k] = pt.cron
		}
	}
	d.trig = pt
}

// extra returns d.more, made if need be.
func (d *decl) extra() *declMore {
	if d.more == nil {
		d.more = &declMore{}
	}
	return d.more
}

// trigger is d's trigger.
func (d *decl) trigger() trigger.Trigger {
	if d.more != nil && d.more.trig != nil {
		return d.more.trig
	}
	t := &d.trig
	if t.cron != nil {
		return trigger.Cron{Schedule: *t.cron, Start: unpackTime(t.start)}
	}
	return trigger.Simple{Start: unpackTime(t.start), Interval: time.Duration(t.every), RepeatCount: int(t.repeat),
		End: unpackTime(t.end)}
}

// plan is the plan of d with trigger trig (d.trigger()), made for a round
// that fires it: one allocation for a single job.
func (d *decl) plan(trig trigger.Trigger) *plan {
	if d.job == nil {
		return &plan{trig: trig, policy: trigger.Policy(d.policy), overlap: Overlap(d.overlap), jobs: d.more.jobs}
	}
	pj := &struct {
		plan
		jobs [1]planJob
	}{}
	pj.jobs[0] = planJob{Job: schedstore.Job{Name: d.job.name, Kind: d.job.kind, Payload: d.payload, Options: d.job.options},
		opts: d.job.opts}
	pj.plan = plan{trig: trig, policy: trigger.Policy(d.policy), overlap: Overlap(d.overlap), jobs: pj.jobs[:]}
	return &pj.plan
}

// simpleSpec is the spec of a simple trigger with a start (encodeSimple),
// or "" for any other trigger.
func simpleSpec(t trigger.Trigger) string {
	st, ok := t.(trigger.Simple)
	if !ok || st.Start.IsZero() {
		return ""
	}
	return encodeSimple(Simple{Every: st.Interval, Repeat: st.RepeatCount, Start: st.Start, End: st.End})
}

// specOf is d's spec as defined.
func (d *decl) specOf() string {
	if d.spec == "" {
		return simpleSpec(d.trigger())
	}
	return d.spec
}

// anchor compiles d's trigger again for created (unix ms), the registry's,
// if its fire times depend on it. The definition compiled once already,
// so it does again.
func (d *decl) anchor(created int64) {
	if created == 0 || created == d.created {
		return
	}
	if d.anchored() {
		def := d.definition()
		trig, err := compileTrigger(&def, msTime(created))
		if err != nil {
			return // cannot happen; an entry compiles a decl of its own
		}
		cs := d.trig.cron
		d.setTrigger(trig, nil, &def)
		if cs != nil && d.trig.cron != nil {
			d.trig.cron = cs // the same expression, zone and rule: keep the shared one
		}
	}
	d.created = created
}

// jobs is d's jobs, as defined.
func (d *decl) jobs() []schedstore.Job {
	if d.job == nil {
		out := make([]schedstore.Job, len(d.more.jobs))
		for i, j := range d.more.jobs {
			out[i] = j.Job
		}
		return out
	}
	return []schedstore.Job{{Name: d.job.name, Kind: d.job.kind, Payload: d.payload, Options: d.job.options}}
}

// definition is the definition d was compiled from.
func (d *decl) definition() schedstore.Definition {
	def := schedstore.Definition{ID: d.id, Kind: d.kind.String(), Spec: d.specOf(), Isolated: d.isolated, Jobs: d.jobs()}
	if m := d.more; m != nil {
		def.Zone, def.Policy, def.Group, def.Overlap, def.Source = m.zone, m.policy, m.group, m.overlap, m.source
		def.LateAfter, def.FailingAfter = m.lateAfter, m.failingAfter
	}
	return def
}

// jobNames returns the names of d's jobs, whose pauses the mirror keeps.
func (d *decl) jobNames() []string {
	if d.job == nil {
		out := make([]string, len(d.more.jobs))
		for i, j := range d.more.jobs {
			out[i] = j.Name
		}
		return out
	}
	return []string{d.job.name}
}

// compileOwn compiles this instance's declarations, sorted by ID, at
// created (they were checked when registered, at their registration
// time; the leader's entries share them once anchor set the registry's
// created).
func compileOwn(defs []schedstore.Definition, created time.Time) ([]decl, error) {
	own := make([]decl, len(defs))
	var cache jobCache
	for i := range defs {
		if err := own[i].init(&defs[i], created, hashOf(defs[i].Hash()), &cache); err != nil {
			return nil, fmt.Errorf("schedule %q: %w", defs[i].ID, err)
		}
		own[i].created = 0 // compiled for no registry's created yet: anchor
	}
	return own, nil
}

// definitions makes this instance's declarations again, for Register and
// the mirror's seeds.
func (s *Scheduler) definitions() []schedstore.Definition {
	out := make([]schedstore.Definition, len(s.own))
	for i := range s.own {
		out[i] = s.own[i].definition()
	}
	return out
}

// shared returns this instance's declaration of schedule id if the
// registry holds it as declared (hash) and first registered at created
// (unix ms): the leader's entry then shares it.
func (s *Scheduler) shared(id string, hash defHash, created int64) *decl {
	if i, ok := s.declared(id); ok && created != 0 && s.own[i].hash == hash && s.own[i].created == created {
		return &s.own[i]
	}
	return nil
}

// declared returns the position of schedule id among this instance's
// declarations (Scheduler.own, sorted by ID), from Start on.
func (s *Scheduler) declared(id string) (int, bool) {
	own := s.own
	lo, hi := 0, len(own)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c := strings.Compare(own[m].id, id); c == 0 {
			return m, true
		} else if c < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, false
}
