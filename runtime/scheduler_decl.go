package chronos

import (
	"fmt"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// decl is one schedule as the leader fires it and as this instance
// declares it: the definition, compiled, in a compact form. From Start on,
// Scheduler.own holds this instance's declarations, sorted by ID; the
// leader's entry of a schedule this instance declares as the registry holds
// it shares that decl (its ID, hash, plan and jobs), and other schedules
// get a decl of their own from the registry's definition (newDecl).
//
// It keeps only what firing needs and what makes the definition again
// (definition): the registry's spec is dropped where the plan's trigger
// says the same (a simple trigger with a start), and the fields most
// schedules leave empty are behind more. This is memory per schedule.
type decl struct {
	id   string
	spec string // as defined; "" where specOf derives it from the plan
	plan plan
	// jobs holds the job of a schedule that is not a group: plan.jobs is
	// this array, so a single job costs no allocation of its own.
	jobs [1]planJob
	more *declMore // nil when none of its fields is set
	// created is the registry's created (unix ms) that plan was compiled
	// for; 0: not known. An entry shares the decl only for that created.
	created int64
	hash    defHash
	kind    declKind
	// isolated is Definition.Isolated.
	isolated bool
}

// declMore holds the fields of a definition that few schedules set, as
// defined.
type declMore struct {
	zone, policy, group, overlap, source string
	lateAfter                            time.Duration
	failingAfter                         int
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
	if err := d.init(def, created, hash); err != nil {
		return nil, err
	}
	return d, nil
}

// init compiles def into d, for created and with hash hash.
func (d *decl) init(def *schedstore.Definition, created time.Time, hash defHash) error {
	kind := -1
	for k, s := range declKinds {
		if s == def.Kind {
			kind = k
		}
	}
	if kind < 0 {
		return fmt.Errorf("unknown trigger kind %q", def.Kind)
	}
	*d = decl{id: def.ID, spec: def.Spec, hash: hash, kind: declKind(kind), isolated: def.Isolated, created: msOf(created)}
	if err := d.plan.build(def, created, d.jobs[:]); err != nil {
		return err
	}
	if def.Zone != "" || def.Policy != "" || def.Group != "" || def.Overlap != "" || def.Source != "" ||
		def.LateAfter != 0 || def.FailingAfter != 0 {
		d.more = &declMore{zone: def.Zone, policy: def.Policy, group: def.Group, overlap: def.Overlap, source: def.Source,
			lateAfter: def.LateAfter, failingAfter: def.FailingAfter}
	}
	if d.kind == kindSimple && simpleSpec(d.plan.trig) == def.Spec {
		d.spec = "" // the trigger says it: specOf
	}
	return nil
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
		return simpleSpec(d.plan.trig)
	}
	return d.spec
}

// anchor compiles d's plan again for created (unix ms), the registry's,
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
		d.plan.trig = trig
	}
	d.created = created
}

// definition is the definition d was compiled from.
func (d *decl) definition() schedstore.Definition {
	def := schedstore.Definition{ID: d.id, Kind: d.kind.String(), Spec: d.specOf(), Isolated: d.isolated,
		Jobs: make([]schedstore.Job, len(d.plan.jobs))}
	for i, j := range d.plan.jobs {
		def.Jobs[i] = j.Job
	}
	if m := d.more; m != nil {
		def.Zone, def.Policy, def.Group, def.Overlap, def.Source = m.zone, m.policy, m.group, m.overlap, m.source
		def.LateAfter, def.FailingAfter = m.lateAfter, m.failingAfter
	}
	return def
}

// jobNames returns the names of d's jobs, whose pauses the mirror keeps.
func (d *decl) jobNames() []string {
	out := make([]string, len(d.plan.jobs))
	for i, j := range d.plan.jobs {
		out[i] = j.Name
	}
	return out
}

// compileOwn compiles this instance's declarations, sorted by ID, at
// created (they were checked when registered, at their registration
// time; the leader's entries share them once anchor set the registry's
// created).
func compileOwn(defs []schedstore.Definition, created time.Time) ([]decl, error) {
	own := make([]decl, len(defs))
	for i := range defs {
		if err := own[i].init(&defs[i], created, hashOf(defs[i].Hash())); err != nil {
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
