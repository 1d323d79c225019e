package schedstore

import (
	"testing"
	"time"
)

// The health thresholds travel with the definition but are not part of it:
// a release that only tunes them changes what operators are told, never
// when the schedule fires.
func TestHealthThresholdsAreStoredButAreNoDefinitionChange(t *testing.T) {
	w := newWorld(t)
	plain := def("s", "0 0 * * * ?")
	tuned := plain
	tuned.LateAfter, tuned.FailingAfter = 5*time.Minute, 2
	if plain.Hash() != tuned.Hash() {
		t.Fatal("the health thresholds change the definition hash")
	}

	st, _ := w.instance("a", "v1", plain)
	sc := mustGet(t, st, "s")
	if sc.LateAfter != 0 || sc.FailingAfter != 0 {
		t.Fatalf("thresholds %v, %d; want none stored", sc.LateAfter, sc.FailingAfter)
	}

	// A new release declares thresholds: they are in force, the
	// definition did not change, and nobody reports a conflict.
	w.clk.Advance(time.Second)
	newer, inst := w.instance("b", "v1")
	res, err := newer.Register(ctx, inst.Declarer(), []Definition{tuned})
	if err != nil || res.Outcomes["s"] != Claimed || len(res.Conflicts) > 0 {
		t.Fatalf("register tuned: %v conflicts %v err %v; want claimed without conflict", res.Outcomes, res.Conflicts, err)
	}
	sc = mustGet(t, st, "s")
	if sc.LateAfter != 5*time.Minute || sc.FailingAfter != 2 {
		t.Fatalf("thresholds %v, %d; want 5m and 2", sc.LateAfter, sc.FailingAfter)
	}
	if !sc.DefChanged.Equal(t0) || sc.DefHash != plain.Hash() {
		t.Fatalf("def changed %v hash %s: tuning health counted as a definition change", sc.DefChanged, sc.DefHash)
	}

	// The next release drops them again: back to the defaults.
	w.clk.Advance(time.Second)
	last, inst := w.instance("c", "v1")
	if _, err := last.Register(ctx, inst.Declarer(), []Definition{plain}); err != nil {
		t.Fatal(err)
	}
	if sc = mustGet(t, st, "s"); sc.LateAfter != 0 || sc.FailingAfter != 0 {
		t.Fatalf("thresholds %v, %d after they were dropped; want none", sc.LateAfter, sc.FailingAfter)
	}
}

func TestNegativeHealthThresholdsAreInvalid(t *testing.T) {
	d := def("s", "0 0 * * * ?")
	d.LateAfter = -time.Second
	if err := d.Validate(); err == nil {
		t.Error("a negative LateAfter is valid")
	}
	d.LateAfter, d.FailingAfter = 0, -1
	if err := d.Validate(); err == nil {
		t.Error("a negative FailingAfter is valid")
	}
}

// Schedule health counts lateness from the end of a pause, so the store
// remembers when an operator ended one.
func TestResumeRecordsWhenThePauseOfTheScheduleEnded(t *testing.T) {
	w := newWorld(t)
	g := def("group", "x")
	g.Jobs = append(g.Jobs, Job{Name: "extra", Kind: "other"})
	st, _ := w.instance("a", "v1", g)

	if ok, err := st.Resume(ctx, "group", ""); ok || err != nil {
		t.Fatalf("Resume without a pause = %v, %v; want false", ok, err)
	}
	if sc := mustGet(t, st, "group"); !sc.State.Resumed.IsZero() {
		t.Fatalf("resumed at %v without a pause", sc.State.Resumed)
	}

	if err := st.Pause(ctx, "group", Pause{Who: "ops"}); err != nil {
		t.Fatal(err)
	}
	w.clk.Advance(time.Hour)
	if ok, err := st.Resume(ctx, "group", ""); !ok || err != nil {
		t.Fatalf("Resume = %v, %v", ok, err)
	}
	sc := mustGet(t, st, "group")
	if sc.State.Pause != nil || !sc.State.Resumed.Equal(t0.Add(time.Hour)) {
		t.Fatalf("pause %+v resumed %v; want none, resumed an hour after t0", sc.State.Pause, sc.State.Resumed)
	}

	// Resuming one job of a group is not the end of a schedule's pause.
	if err := st.Pause(ctx, "group", Pause{Job: "extra"}); err != nil {
		t.Fatal(err)
	}
	w.clk.Advance(time.Hour)
	if ok, _ := st.Resume(ctx, "group", "extra"); !ok {
		t.Fatal("Resume of the job reported no pause")
	}
	if sc := mustGet(t, st, "group"); !sc.State.Resumed.Equal(t0.Add(time.Hour)) {
		t.Fatalf("resumed %v after a job's resume; want unchanged", sc.State.Resumed)
	}
}
