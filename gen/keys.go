package gen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/chronos-go/chronos/runtime/trigger"
	"github.com/dave/jennifer/jen"
)

// valueType says how a key's value is read.
type valueType int

const (
	typeString   valueType = iota // any text
	typeID                        // schedule, group or job identifier
	typeCron                      // cron expression (runtime/cron)
	typeDuration                  // time.ParseDuration, > 0
	typeDelay                     // time.ParseDuration, >= 0
	typeCount                     // base-10 integer >= 0
	typeBool                      // true or false
	typeTime                      // RFC 3339 timestamp with offset
	typeZone                      // IANA time zone (runtime/cron.LoadLocation)
	typeEnum                      // one of key.enum
	typePolicy                    // misfire policy name (runtime/trigger.ParsePolicy)
)

var typeNames = [...]string{
	typeString:   "string",
	typeID:       "id",
	typeCron:     "cron",
	typeDuration: "duration",
	typeDelay:    "duration",
	typeCount:    "int",
	typeBool:     "bool",
	typeTime:     "time",
	typeZone:     "zone",
	typeEnum:     "enum",
	typePolicy:   "policy",
}

// place is the set of declarations a key may appear on.
type place uint8

const (
	onSchedule place = 1 << iota // //chronos:schedule (or a tag) with its own trigger
	onJob                        // //chronos:schedule group=… (joins a group's trigger)
	onGroup                      // //chronos:group
)

// triggerKind restricts a key to one kind of trigger.
type triggerKind uint8

const (
	anyTrigger    triggerKind = iota
	cronTrigger               // cron=…
	simpleTrigger             // every=…
)

// String is the key that selects the trigger kind, as messages name it.
func (k triggerKind) String() string {
	switch k {
	case cronTrigger:
		return "cron"
	case simpleTrigger:
		return "every"
	}
	return "any"
}

// key describes one directive key. The single table below drives parsing,
// validation, emission, -help-directives and docs/directives.md.
type key struct {
	name    string
	typ     valueType
	enum    []string // typeEnum: accepted values, in documentation order
	on      place
	trigger triggerKind
	doc     string

	// emit renders the key's setting as the chronos option the generated
	// code passes (emit_options.go). It is nil for the keys that make up a
	// trigger (cron, every and the simple trigger's fields) or name a
	// schedule (id, group): Check reads those into the model's Trigger and
	// IDs, and the emitter writes them from there.
	emit func(Option) jen.Code
}

// isOption reports whether k becomes a chronos option rather than part of
// a trigger or a schedule's identity.
func (k *key) isOption() bool { return k.emit != nil }

// keys is the table of every key, in documentation order. Options are
// emitted in this order too, which keeps the generated code stable.
//
// A new option key is one row here with its emit function, plus a case in
// keyCases (keys_test.go), which proves that every row is parsed,
// documented and emitted.
var keys = []key{
	{name: "id", typ: typeID, on: onSchedule | onJob | onGroup,
		doc: "Stable identifier, persisted by the scheduler. Default `<package>.<Recv>.<Method>` (or `<package>.<Func>`); required when a handler has several schedules."},
	{name: "group", typ: typeID, on: onSchedule | onJob,
		doc: "Join the `//chronos:group` with this id: the job fires on the group's trigger; trigger keys are then not allowed."},
	{name: "cron", typ: typeCron, on: onSchedule | onGroup, trigger: cronTrigger,
		doc: "Cron expression: 5 fields or `@descriptor` (standard), 6–7 fields (Quartz, with seconds). Quote it."},
	{name: "every", typ: typeDuration, on: onSchedule | onGroup, trigger: simpleTrigger,
		doc: "Simple trigger interval (Go duration, at least 1s)."},
	{name: "start-delay", typ: typeDelay, on: onSchedule | onGroup, trigger: simpleTrigger,
		doc: "Delay before the first fire of a simple trigger."},
	{name: "start", typ: typeTime, on: onSchedule | onGroup, trigger: simpleTrigger,
		doc: "First fire time of a simple trigger (RFC 3339); excludes `start-delay`."},
	{name: "end", typ: typeTime, on: onSchedule | onGroup, trigger: simpleTrigger,
		doc: "No fires after this time (RFC 3339)."},
	{name: "repeat", typ: typeCount, on: onSchedule | onGroup, trigger: simpleTrigger,
		doc: "Repeats after the first fire (Quartz repeatCount): `repeat=9` fires 10 times. Default: forever."},
	{name: "forever", typ: typeBool, on: onSchedule | onGroup, trigger: simpleTrigger,
		doc: "`forever=true` repeats without end (the default); excludes `repeat`."},
	{name: "tz", typ: typeZone, on: onSchedule | onGroup, trigger: cronTrigger,
		doc: "IANA time zone the cron expression is read in. Default UTC.", emit: emitTimeZone},
	{name: "dst", typ: typeEnum, enum: []string{"quartz", "shiftGap"}, on: onSchedule | onGroup, trigger: cronTrigger,
		doc: "Daylight-saving handling: `quartz` (default; skipped local times do not fire) or `shiftGap` (fire at the first instant after the gap).", emit: emitDST},
	{name: "misfire", typ: typePolicy, on: onSchedule | onGroup,
		doc: misfireDoc(), emit: emitMisfire},
	{name: "isolated", typ: typeBool, on: onSchedule | onGroup,
		doc: "`true` fires on every live instance instead of once per cluster.", emit: emitIsolated},
	{name: "overlap", typ: typeEnum, enum: []string{"allow", "skip", "bufferOne"}, on: onSchedule | onGroup,
		doc: "What a fire does while the previous run is still going: `allow` (default), `skip`, `bufferOne`.", emit: emitOverlap},
	{name: "late-after", typ: typeDuration, on: onSchedule | onGroup,
		doc: "Schedule health: late once a fire time is this long past with nothing enqueued. Default 1m.", emit: emitLateAfter},
	{name: "failing-after", typ: typeCount, on: onSchedule | onGroup,
		doc: "Schedule health: failing once this many runs in a row failed. Default 3 (also for 0).", emit: emitFailingAfter},
	{name: "queue", typ: typeString, on: onSchedule | onJob | onGroup,
		doc: "Queue the tasks are enqueued on.", emit: emitQueue},
	{name: "max-retry", typ: typeCount, on: onSchedule | onJob | onGroup,
		doc: "Retries after a failed attempt.", emit: emitMaxRetry},
	{name: "timeout", typ: typeDuration, on: onSchedule | onJob | onGroup,
		doc: "Per-attempt time limit of each task.", emit: emitTimeout},
	{name: "process-in", typ: typeDuration, on: onSchedule | onJob | onGroup,
		doc: "Enqueue each task to run this long after its fire time.", emit: emitProcessIn},
}

func lookupKey(name string) *key {
	for i := range keys {
		if keys[i].name == name {
			return &keys[i]
		}
	}
	return nil
}

// misfireDoc is the meaning of the misfire key: the policies of each
// trigger kind as the runtime lists them, so a policy added there shows up
// in -help-directives and docs/directives.md without an edit here.
func misfireDoc() string {
	return "Misfire policy, by trigger kind. cron: " + policyList(trigger.KindCron) +
		". every: " + policyList(trigger.KindSimple) + "."
}

func policyList(k trigger.Kind) string {
	def, _ := trigger.ParsePolicy("", k) // the policy an unset misfire= means
	var names []string
	for _, p := range trigger.Policies(k) {
		n := "`" + p.String() + "`"
		if p == def {
			n += " (default)"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

// directiveNames are the //chronos: directives, with where they go.
var directiveNames = []struct{ name, on, doc string }{
	{"schedule", "function or method", "Schedule the handler; several lines declare several schedules."},
	{"group", "package clause or type", "Declare a trigger shared by the jobs that name it with `group=`."},
	{"schedules", "struct type", "Read `chronos:\"…\"` tags on the struct's func-typed fields as schedules."},
}

// placesText lists the directives a key may appear on.
func (k *key) placesText() string {
	var s []string
	if k.on&onSchedule != 0 {
		s = append(s, "schedule")
	}
	if k.on&onJob != 0 {
		s = append(s, "job")
	}
	if k.on&onGroup != 0 {
		s = append(s, "group")
	}
	return strings.Join(s, ", ")
}

func (k *key) typeText() string {
	if k.typ == typeEnum {
		return strings.Join(k.enum, " \\| ")
	}
	if k.typ == typeDelay {
		return "duration (≥ 0)"
	}
	return typeNames[k.typ]
}

// KeyTable renders the key table as Markdown. It is the table in
// docs/directives.md and the output of chronosgen -help-directives.
func KeyTable() string {
	var b strings.Builder
	b.WriteString("| key | value | on | trigger | meaning |\n|---|---|---|---|---|\n")
	for i := range keys {
		k := &keys[i]
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.name, k.typeText(), k.placesText(), k.trigger, k.doc)
	}
	return b.String()
}

// suggest returns the candidate s most plausibly misspells, or "" when none
// is close enough or two are equally close. A candidate that differs from s
// only in case wins outright (Every → every, DoNothing → doNothing);
// otherwise edit distance decides, counted ignoring case.
func suggest(s string, candidates []string) string {
	var folded []string
	for _, c := range candidates {
		if strings.EqualFold(s, c) && !slices.Contains(folded, c) {
			folded = append(folded, c)
		}
	}
	switch len(folded) {
	case 1:
		return folded[0]
	case 0:
	default:
		return "" // ambiguous: nightly and Nightly both exist
	}
	best, bestD, tie := "", max(1, len(s)/3)+1, false
	lower := strings.ToLower(s)
	for _, c := range candidates {
		d := editDistance(lower, strings.ToLower(c))
		switch {
		case d < bestD:
			best, bestD, tie = c, d, false
		case d == bestD && best != "" && c != best:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// lookupKeyFold returns the key that name spells in another case (Every,
// MAX-RETRY), or nil.
func lookupKeyFold(name string) *key {
	for i := range keys {
		if strings.EqualFold(keys[i].name, name) {
			return &keys[i]
		}
	}
	return nil
}

func keyNames() []string {
	names := make([]string, len(keys))
	for i := range keys {
		names[i] = keys[i].name
	}
	return names
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// HelpDirectives is the text of chronosgen -help-directives: the
// directives, the quoting rules and the key table.
func HelpDirectives() string {
	var b strings.Builder
	b.WriteString("Directives (one per line, no space after //):\n\n")
	for _, d := range directiveNames {
		fmt.Fprintf(&b, "  //chronos:%-10s on a %s. %s\n", d.name, d.on, strings.ReplaceAll(d.doc, "`", ""))
	}
	b.WriteString(`
Arguments are key=value, separated by spaces. A value is bare (no spaces or
quotes), "Go-quoted" (Go escapes), ` + "`raw`" + ` or 'single-quoted' (no escapes;
handy inside struct tags). A struct tag takes the same keys:
  Field func(context.Context) error ` + "`" + `chronos:"cron='0 0 2 * * ?' tz=UTC"` + "`" + `

Keys:

`)
	for i := range keys {
		k := &keys[i]
		fmt.Fprintf(&b, "  %-12s %-22s on %s", k.name, strings.ReplaceAll(k.typeText(), "\\|", "|"), k.placesText())
		if k.trigger != anyTrigger {
			fmt.Fprintf(&b, "; %s= triggers only", k.trigger)
		}
		fmt.Fprintf(&b, "\n  %12s %s\n", "", strings.ReplaceAll(k.doc, "`", ""))
	}
	b.WriteString("\nSee docs/directives.md for the full description.\n")
	return b.String()
}
