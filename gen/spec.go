package gen

import (
	"errors"
	"fmt"
	"go/token"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/chronos-go/chronos/gen/directive"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// setting is one key=value of a directive, read against the key table.
type setting struct {
	key *key
	arg directive.Arg
	str string
	n   int
	b   bool
	dur time.Duration
	t   time.Time
}

// spec is a directive's settings, in the order written.
type spec struct {
	d        *rawDirective
	settings []setting
	dropped  bool // an argument was rejected (already reported)
}

func (s *spec) get(name string) (setting, bool) {
	for _, st := range s.settings {
		if st.key.name == name {
			return st, true
		}
	}
	return setting{}, false
}

func (s *spec) has(name string) bool { _, ok := s.get(name); return ok }

func (s *spec) str(name string) string { st, _ := s.get(name); return st.str }

// pos is the position of the key name, or of the directive when unset.
func (s *spec) pos(name string) token.Pos {
	if st, ok := s.get(name); ok {
		return s.d.keyPos(st.arg)
	}
	return s.d.pos
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)

// readSpec reads d's arguments as keys of the table, reporting unknown and
// repeated keys and malformed values. It does not check how keys combine.
func readSpec(d *rawDirective, r *reporter) *spec {
	s := &spec{d: d}
	for _, a := range d.args {
		k := lookupKey(a.Key)
		if k == nil {
			msg := fmt.Sprintf("unknown key %q", a.Key)
			if sug := suggest(a.Key, keyNames()); sug != "" {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			}
			r.errorf(d.keyPos(a), "unknown-key", "%s", msg)
			// A known key in the wrong case (Every=1m) can only mean that
			// key: read it as such, so that what depends on it (its value,
			// the trigger it selects) is checked in this run too.
			if k = lookupKeyFold(a.Key); k == nil {
				s.dropped = true
				continue
			}
		}
		if prev, ok := s.get(k.name); ok {
			r.errorf(d.keyPos(a), "duplicate-key", "key %q repeated", k.name)
			r.related(d.keyPos(prev.arg), "first set here")
			continue
		}
		st := setting{key: k, arg: a, str: a.Value}
		if err := parseValue(&st); err != nil {
			r.errorf(d.valPos(a, 0), "bad-value", "%s=%s: %v", a.Key, directive.RenderValue(a.Value), err)
			s.dropped = true
			continue
		}
		s.settings = append(s.settings, st)
	}
	return s
}

// parseValue reads st.arg.Value according to st.key.typ. Checks that need
// the runtime's time engine (cron, zone, policy) run later, with the
// trigger kind known.
func parseValue(st *setting) error {
	v := st.arg.Value
	switch st.key.typ {
	case typeID:
		if !idPattern.MatchString(v) || len(v) > 128 {
			return errors.New("want letters, digits and . _ : - (starting with a letter or digit, at most 128 bytes)")
		}
	case typeString, typeCron, typeZone, typePolicy:
		if v == "" {
			return errors.New("empty value")
		}
	case typeDuration, typeDelay:
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("want a Go duration such as 30s, 5m or 1h30m")
		}
		if d < 0 || d == 0 && st.key.typ == typeDuration {
			return errors.New("must be positive")
		}
		st.dur = d
	case typeCount:
		// 32 bits: the generated code passes an int, which may be that
		// small on the platform the user builds for.
		n, err := strconv.ParseInt(v, 10, 32)
		if errors.Is(err, strconv.ErrRange) && n > 0 {
			return fmt.Errorf("out of range: at most %d", math.MaxInt32)
		}
		if err != nil || n < 0 {
			return errors.New("want a non-negative integer")
		}
		st.n = int(n)
	case typeBool:
		switch v {
		case "true":
			st.b = true
		case "false":
		default:
			return errors.New("want true or false")
		}
	case typeTime:
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return errors.New("want an RFC 3339 time with offset, such as 2026-01-02T15:04:05Z or 2026-01-02T15:04:05+09:00")
		}
		st.t = t.UTC()
	case typeEnum:
		for _, e := range st.key.enum {
			if v == e {
				return nil
			}
		}
		msg := "want one of " + strings.Join(st.key.enum, ", ")
		if sug := suggest(v, st.key.enum); sug != "" {
			msg += fmt.Sprintf("; did you mean %s?", sug)
		}
		return errors.New(msg)
	}
	return nil
}

// checkPlace reports keys that do not belong on a directive of place p with
// a trigger of kind k (anyTrigger when the directive has none of its own).
func checkPlace(s *spec, p place, k triggerKind, r *reporter) {
	for _, st := range s.settings {
		key := st.key
		switch {
		case key.on&p == 0 && p == onJob:
			r.errorf(s.d.keyPos(st.arg), "conflicting-keys", "%s cannot be set on a job of group %q; the group's //chronos:group sets the trigger and its policies", key.name, s.str("group"))
		case key.on&p == 0 && p == onGroup:
			r.errorf(s.d.keyPos(st.arg), "misplaced-key", "%s applies to //chronos:schedule, not //chronos:group", key.name)
		case key.on&p == 0:
			r.errorf(s.d.keyPos(st.arg), "misplaced-key", "%s applies to %s only", key.name, key.placesText())
		case key.trigger != anyTrigger && k != anyTrigger && key.trigger != k:
			r.errorf(s.d.keyPos(st.arg), "conflicting-keys", "%s applies to %s= triggers, and this one is %s=", key.name, key.trigger, k)
		}
	}
}

// readTrigger checks and returns the trigger of a schedule or group spec.
// ok is false when it has errors (already reported).
func readTrigger(s *spec, r *reporter) (Trigger, triggerKind, bool) {
	cronSet, everySet := s.has("cron"), s.has("every")
	var kind triggerKind
	switch {
	case cronSet && everySet:
		r.errorf(s.pos("every"), "conflicting-keys", "cron and every both set; a trigger has one of them")
		return Trigger{}, anyTrigger, false
	case !cronSet && !everySet:
		if s.d.bad || s.dropped {
			return Trigger{}, anyTrigger, false // a reported error may have hidden the trigger
		}
		if s.d.name == "group" {
			r.errorf(s.d.pos, "missing-trigger", "a group needs cron=\"…\" or every=…")
		} else {
			r.errorf(s.d.pos, "missing-trigger", "a schedule needs cron=\"…\" or every=…, or group=… to join a group")
		}
		return Trigger{}, anyTrigger, false
	case cronSet:
		kind = cronTrigger
	default:
		kind = simpleTrigger
	}
	before := len(r.diags)
	var t Trigger
	if kind == cronTrigger {
		st, _ := s.get("cron")
		t.Cron = st.str
		if e := checkCron(st.str); e != nil {
			code := "bad-cron"
			if errors.Is(e, trigger.ErrNeverFires) {
				code = "never-fires" // about the whole expression, not one field
			}
			r.errorf(s.d.valPos(st.arg, e.Offset), code, "%v", e)
		}
		if st, ok := s.get("tz"); ok {
			if err := loadZone(st.str); err != nil {
				r.errorf(s.d.valPos(st.arg, 0), "bad-zone", "unknown time zone %q", st.str)
			}
		}
	} else {
		st, _ := s.get("every")
		t.Every = st.dur
		t.Repeat = repeatForever
		if st, ok := s.get("start-delay"); ok {
			t.StartDelay, t.Simple = st.dur, true
		}
		if st, ok := s.get("start"); ok {
			t.Start, t.Simple = st.t, true
			if s.has("start-delay") {
				r.errorf(s.d.keyPos(st.arg), "conflicting-keys", "start and start-delay both set; use one")
			}
		}
		if st, ok := s.get("end"); ok {
			t.End, t.Simple = st.t, true
		}
		if st, ok := s.get("repeat"); ok {
			t.Repeat, t.Simple = st.n, true
			if f, ok := s.get("forever"); ok && f.b {
				r.errorf(s.d.keyPos(f.arg), "conflicting-keys", "forever=true and repeat=%d both set; use one", st.n)
			}
		} else if f, ok := s.get("forever"); ok && !f.b {
			r.errorf(s.d.keyPos(f.arg), "conflicting-keys", "forever=false needs repeat=N (the number of repeats after the first fire)")
		}
		if err := checkSimple(t); err != nil {
			at := "every"
			if errors.Is(err, trigger.ErrEndBeforeStart) {
				at = "end"
			}
			st, _ := s.get(at)
			r.errorf(s.d.valPos(st.arg, 0), "bad-trigger", "%v", err)
		}
	}
	if st, ok := s.get("misfire"); ok {
		if err := checkPolicy(st.str, kind); err != nil {
			r.errorf(s.d.valPos(st.arg, 0), "misfire-mismatch", "misfire=%s: %v", st.str, err)
		}
	}
	checkIsolatedOverlap(s, r)
	return t, kind, len(r.diags) == before
}

// checkIsolatedOverlap mirrors the runtime's rule that overlap control is
// cluster-wide and so does not apply to isolated schedules, which run on
// every instance (runtime/schedule.go, finishDefinition).
func checkIsolatedOverlap(s *spec, r *reporter) {
	iso, ok := s.get("isolated")
	if !ok || !iso.b {
		return
	}
	if ov, ok := s.get("overlap"); ok && ov.arg.Value != "allow" {
		r.errorf(s.d.keyPos(ov.arg), "conflicting-keys",
			"overlap=%s cannot be combined with isolated=true: overlap control is cluster-wide, and an isolated schedule runs on every instance", ov.arg.Value)
	}
}

// options returns the settings that become chronos options, in key-table
// order. Keys that make up the trigger or identity are not options (the
// table says which: they have no emit function).
func (s *spec) options() []Option {
	var opts []Option
	for i := range keys {
		k := &keys[i]
		if !k.isOption() {
			continue
		}
		if st, ok := s.get(k.name); ok {
			opts = append(opts, Option{Key: k.name, Str: st.str, Int: st.n, Bool: st.b, Dur: st.dur})
		}
	}
	return opts
}
