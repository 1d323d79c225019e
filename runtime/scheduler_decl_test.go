package chronos

import (
	"fmt"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/cron"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// declaredEverything registers one schedule of every kind and with every
// option a definition can carry.
func declaredEverything(t *testing.T) *Scheduler {
	t.Helper()
	s := NewScheduler(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), SchedulerConfig{})
	start := time.Date(2026, 12, 2, 3, 4, 5, 678_000_000, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(RegisterCron(s, "0 0 * * *", tick{N: 1}))
	must(RegisterCron(s, "30 2 * * *", tick{N: 2}, WithScheduleID("zoned"), WithTimeZone("Europe/Paris"),
		WithDST(cron.DSTShiftGap), WithMisfire("doNothing"), WithOverlap(OverlapSkip), WithSource("a.go", 12),
		WithLateAfter(time.Minute), WithFailingAfter(3), WithQueue("reports"), WithMaxRetry(2), WithTimeout(time.Minute)))
	must(RegisterInterval(s, 90*time.Second, tick{N: 3}, WithProcessIn(time.Second)))
	must(RegisterSimple(s, Simple{Every: time.Minute, Repeat: -1, StartDelay: 5 * time.Second}, tick{N: 4}))
	must(RegisterSimple(s, Simple{Every: time.Hour, Repeat: 3, Start: start, End: start.Add(24 * time.Hour)}, tick{N: 5},
		WithScheduleID("bounded"), WithMisfire("rescheduleNowWithExistingRepeatCount")))
	must(RegisterSimple(s, Simple{Start: start}, tick{N: 6}, WithScheduleID("once")))
	must(RegisterSimple(s, Simple{Every: time.Second, Repeat: -1, Start: start}, tick{N: 7}, WithScheduleID("isolated"),
		WithIsolated(true)))
	g := NewGroup(s, "group", CronTrigger("0 */5 * * * ?"), WithQueue("g"))
	must(AddJob(g, "a", tick{N: 8}))
	must(AddJob(g, "b", tick{N: 9}, WithQueue("other")))
	return s
}

// TestDeclarationsMakeTheirDefinitionsAgain checks that the compact form
// of a declaration gives back the definition it was compiled from, which
// is what Register and the mirror's seeds write.
func TestDeclarationsMakeTheirDefinitionsAgain(t *testing.T) {
	s := declaredEverything(t)
	var defs []schedstore.Definition
	for _, d := range s.decls {
		defs = append(defs, *d)
	}
	own, err := compileOwn(defs, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i := range own {
		got := own[i].definition()
		if !reflect.DeepEqual(got, defs[i]) {
			t.Errorf("definition of %s:\n got %+v\nwant %+v", defs[i].ID, got, defs[i])
		}
		if own[i].hash != hashOf(defs[i].Hash()) {
			t.Errorf("%s: hash %v, want %s", defs[i].ID, own[i].hash, defs[i].Hash())
		}
	}
	if own[0].more != nil || own[0].spec == "" {
		t.Errorf("a plain cron schedule holds more (%+v) or no spec", own[0].more)
	}
	var plain []*decl
	for i := range own {
		if own[i].job != nil && own[i].job.options == nil {
			plain = append(plain, &own[i])
		}
	}
	if len(plain) < 3 || plain[0].job != plain[len(plain)-1].job {
		t.Errorf("%d declarations of one job name, kind and options do not share a template", len(plain))
	}
	for i := range own {
		if own[i].id == "once" && own[i].spec != "" {
			t.Errorf("a simple trigger with a start keeps its spec %q", own[i].spec)
		}
	}
}

// TestAnchoredDeclarationsCompileAsTheRegistrysDefinition checks that a
// declaration anchored at the registry's created has the plan the leader
// would compile from the registry's definition.
func TestAnchoredDeclarationsCompileAsTheRegistrysDefinition(t *testing.T) {
	s := declaredEverything(t)
	var defs []schedstore.Definition
	for _, d := range s.decls {
		defs = append(defs, *d)
	}
	own, err := compileOwn(defs, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Not on a whole interval nor second: the anchor moves interval and
	// delayed simple triggers.
	created := time.UnixMilli(1_796_170_000_123).UTC()
	for i := range own {
		own[i].anchor(created.UnixMilli())
		want, err := compile(defs[i], created)
		if err != nil {
			t.Fatal(err)
		}
		got := own[i].plan(own[i].trigger())
		if !reflect.DeepEqual(got.trig, want.trig) || got.policy != want.policy || got.overlap != want.overlap ||
			!reflect.DeepEqual(got.jobs, want.jobs) {
			t.Errorf("%s: plan\n got %+v\nwant %+v", defs[i].ID, got, want)
		}
		if own[i].created != created.UnixMilli() {
			t.Errorf("%s: created %d, want %d", defs[i].ID, own[i].created, created.UnixMilli())
		}
	}
}

// TestEntryStateRoundTrips checks that an entry gives back the trigger
// states it is set to, the zero time and times beyond packedState's range
// included.
func TestEntryStateRoundTrips(t *testing.T) {
	at := time.Date(2026, 12, 2, 3, 4, 5, 678_901_234, time.UTC)
	far := time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, st := range []trigger.State{
		{},
		{Next: at, Prev: at.Add(-time.Hour), Start: at.Add(-48 * time.Hour), TimesTriggered: 48, RepeatCount: -1},
		{Prev: at, Start: at, TimesTriggered: 1 << 40, RepeatCount: 1 << 40, Complete: true},
		{Next: far, Prev: at, Start: at, RepeatCount: 5},
		{Next: at, Start: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		var e schedEntry
		e.setState(st)
		if got := e.state(); !sameState(got, st) || !got.Next.Equal(e.next()) || got.Complete != e.complete() {
			t.Errorf("set %+v, got %+v (next %v, complete %v)", st, got, e.next(), e.complete())
		}
		e.setState(trigger.State{Next: at})
		if e.more != nil {
			t.Errorf("after %+v, a packable state keeps more: %+v", st, e.more)
		}
	}
	if n := unsafe.Sizeof(schedEntry{}); n > 64 {
		t.Errorf("schedEntry is %d bytes, want at most 64", n)
	}
	if n := unsafe.Sizeof(mirrored{}); n > 72 {
		t.Errorf("mirrored is %d bytes, want at most 72", n)
	}
}

// TestEncodeSimpleWritesTheRegistrysSpec checks encodeSimple against the
// format the registry has always held, which schedule IDs and definition
// hashes are made of.
func TestEncodeSimpleWritesTheRegistrysSpec(t *testing.T) {
	start := time.Date(2026, 12, 2, 3, 4, 5, 678_901_234, time.UTC)
	want := func(s Simple) string {
		out := fmt.Sprintf("every=%s;repeat=%d", s.Every, s.Repeat)
		if s.StartDelay != 0 && s.Start.IsZero() {
			out += fmt.Sprintf(";delay=%s", s.StartDelay)
		}
		if !s.Start.IsZero() {
			out += fmt.Sprintf(";start=%d", s.Start.UnixMilli())
		}
		if !s.End.IsZero() {
			out += fmt.Sprintf(";end=%d", s.End.UnixMilli())
		}
		return out
	}
	for _, s := range []Simple{
		{},
		{Every: time.Minute, Repeat: -1},
		{Every: 90 * time.Second, Repeat: 3, StartDelay: 1500 * time.Millisecond},
		{Every: time.Hour, Repeat: 7, StartDelay: time.Second, Start: start},
		{Every: 36 * time.Hour, Repeat: -1, Start: start, End: start.Add(240 * time.Hour)},
		{Start: time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC), End: time.Date(1969, 7, 21, 0, 0, 0, 0, time.UTC)},
	} {
		got := encodeSimple(s)
		if got != want(s) {
			t.Errorf("encodeSimple(%+v) = %q, want %q", s, got, want(s))
		}
		if back, err := decodeSimple(got); err != nil || encodeSimple(back) != got {
			t.Errorf("%q decodes to %+v (%v), which encodes to %q", got, back, err, encodeSimple(back))
		}
	}
}
