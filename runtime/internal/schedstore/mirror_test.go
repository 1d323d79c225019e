package schedstore

import (
	"reflect"
	"testing"
	"time"
)

// What an instance saw of a schedule, seeded into a registry that lost it,
// is the schedule as it was: definition, creation, declarer, state and
// pauses. A second seed from an older look only moves the state forward.
func TestSeedPutsALostScheduleBackAsItWas(t *testing.T) {
	w := newWorld(t)
	st, _ := w.instance("a", "v1", def("s", "x"))
	w.clk.Advance(time.Minute)
	if err := st.SaveState(ctx, holdLease(t, w), "s", TriggerState{Prev: t0, Next: t0.Add(time.Hour), TimesTriggered: 3}, "fired"); err != nil {
		t.Fatal(err)
	}
	if err := st.Pause(ctx, "s", Pause{Note: "maintenance", Who: "ops"}); err != nil {
		t.Fatal(err)
	}
	// Two changes in one millisecond: the second scores one more, so a
	// reader that holds the first still sees that there is another.
	changes, last, err := st.ChangedSince(ctx, t0)
	want := w.clk.Now().Add(time.Millisecond)
	if err != nil || len(changes) != 1 || changes[0] != (Change{ID: "s", At: want.UnixMilli()}) || !last.Equal(want) {
		t.Fatalf("ChangedSince = %v, %v, %v; want s, changed now + 1ms", changes, last, err)
	}
	seen := mustGet(t, st, "s")

	if err := w.rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := st.Seed(ctx, []Schedule{seen})
	if err != nil || res.Created != 1 {
		t.Fatalf("Seed = %+v, %v", res, err)
	}
	if got := mustGet(t, st, "s"); !reflect.DeepEqual(got, seen) {
		t.Fatalf("seeded\n %+v\nwant\n %+v", got, seen)
	}
	older := seen
	older.State.Prev = t0.Add(-time.Hour)
	if res, _ := st.Seed(ctx, []Schedule{older}); res.Created+res.Advanced != 0 {
		t.Fatalf("an older seed changed %+v", res)
	}
	newer := seen
	newer.State.Prev = t0.Add(time.Hour)
	if res, _ := st.Seed(ctx, []Schedule{newer}); res.Advanced != 1 || !mustGet(t, st, "s").State.Prev.Equal(newer.State.Prev) {
		t.Fatalf("a newer seed: %+v", res)
	}
}

// GetStates reads what an instance remembers of the schedules it
// declares, as GetMany would, without the definitions: creation, state,
// retirement, and the pauses of the schedule and of the jobs named.
func TestGetStatesReadsEverythingButTheDefinition(t *testing.T) {
	w := newWorld(t)
	g := def("g", "x")
	g.Group, g.Jobs = "g", []Job{{Name: "a", Kind: "k"}, {Name: "b", Kind: "k"}}
	st, _ := w.instance("i", "v1", g, def("s", "y"))
	term := holdLease(t, w)
	ts := TriggerState{Prev: t0, Next: t0.Add(time.Minute), Start: t0, TimesTriggered: 4, RepeatCount: -1}
	if err := st.SaveState(ctx, term, "s", ts, "fired"); err != nil {
		t.Fatal(err)
	}
	if err := st.Pause(ctx, "g", Pause{Job: "b", Note: "n", Who: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Pause(ctx, "s", Pause{Note: "whole", Who: "w", Until: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	jobs := func(id string) []string {
		if id == "g" {
			return []string{"a", "b"}
		}
		return []string{"main"}
	}
	ids := []string{"g", "s", "missing"}
	full, err := st.GetMany(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.GetStates(ctx, ids, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("GetStates = %d schedules, want 2: %v", len(got), got)
	}
	for _, id := range []string{"g", "s"} {
		a, b := full[id], got[id]
		if len(b.Jobs) != 0 || b.Spec != "" {
			t.Errorf("%s: GetStates read the definition: %+v", id, b.Definition)
		}
		if b.ID != id || !b.Created.Equal(a.Created) || !b.DefChanged.Equal(a.DefChanged) || !b.Retired.Equal(a.Retired) ||
			b.State.TriggerState != a.State.TriggerState || b.State.LastOutcome != a.State.LastOutcome ||
			!b.State.Saved.Equal(a.State.Saved) || !reflect.DeepEqual(b.State.Pause, a.State.Pause) ||
			!reflect.DeepEqual(b.State.JobPauses, a.State.JobPauses) {
			t.Errorf("%s: GetStates %+v\nGetMany %+v", id, b, a)
		}
	}
	if got["g"].State.JobPauses["b"].Note != "n" || got["s"].State.Pause == nil {
		t.Fatalf("pauses not read: %+v", got)
	}
}
