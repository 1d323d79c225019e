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
