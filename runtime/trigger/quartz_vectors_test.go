package trigger

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
)

// The oracle vectors: what Quartz 2.3.2's RAMJobStore does with a trigger
// at "now" (misfire handling once, then every fire with next <= now),
// generated from the real library by tools/quartzoracle. The files are part
// of the repository; a missing file fails the test.
var vectorDir = filepath.Join("..", "..", "testdata", "quartz")

// vectorTime is an RFC 3339 time or JSON null (the zero time).
type vectorTime struct{ time.Time }

func (v *vectorTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		v.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	v.Time = t
	return err
}

// vectorCommon holds the fields both files share.
type vectorCommon struct {
	ID             string       `json:"id"`
	Start          vectorTime   `json:"start"`
	End            vectorTime   `json:"end"`
	Prev           vectorTime   `json:"prev"`
	Next           vectorTime   `json:"next"`
	TimesTriggered int          `json:"times_triggered"`
	Now            vectorTime   `json:"now"`
	ThresholdMS    int64        `json:"threshold_ms"`
	Policy         string       `json:"policy"`
	Misfired       bool         `json:"misfired"`
	Fires          []vectorTime `json:"fires"`
	FiresCapped    bool         `json:"fires_capped"`
	FiresTotal     *int         `json:"fires_total"`
}

type cronVector struct {
	vectorCommon
	Expr  string `json:"expr"`
	Zone  string `json:"zone"`
	After struct {
		Next     vectorTime `json:"next"`
		Prev     vectorTime `json:"prev"`
		Complete bool       `json:"complete"`
	} `json:"after"`
}

type simpleVector struct {
	vectorCommon
	IntervalMS  int64 `json:"interval_ms"`
	RepeatCount int   `json:"repeat_count"`
	After       struct {
		Start          vectorTime `json:"start"`
		Next           vectorTime `json:"next"`
		Prev           vectorTime `json:"prev"`
		RepeatCount    int        `json:"repeat_count"`
		TimesTriggered int        `json:"times_triggered"`
		Complete       bool       `json:"complete"`
	} `json:"after"`
}

// readVectors decodes one JSON object per line of the named file.
func readVectors[V any](t *testing.T, name string) []V {
	t.Helper()
	f, err := os.Open(filepath.Join(vectorDir, name))
	if err != nil {
		t.Fatalf("oracle vectors missing (regenerate with make vectors): %v", err)
	}
	defer f.Close()
	var out []V
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var v V
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s:%d: %v", name, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no vectors", name)
	}
	return out
}

// uncapped disables chronos's MaxFires cap so Due is comparable with
// Quartz, which replays everything.
const uncapped = 1 << 30

// vectorCase is one decoded vector ready for Due.
type vectorCase struct {
	common  vectorCommon
	trig    Trigger
	state   State // the persisted state before now, from the vector
	catchup Catchup
}

// check runs Due like the oracle's store and reports every mismatch with
// the vector; then it checks the chronos cap against the uncapped result.
func (vc vectorCase) check(t *testing.T, checkAfter func(t *testing.T, got State)) {
	t.Helper()
	v := vc.common
	res := vc.catchup.Due(vc.trig, vc.state, v.Now.Time)
	if res.Misfired != v.Misfired {
		t.Errorf("misfired = %v; Quartz %v", res.Misfired, v.Misfired)
	}
	total := len(v.Fires)
	if v.FiresTotal != nil {
		total = *v.FiresTotal
	}
	if len(res.Fires) != total {
		t.Errorf("%d fires; Quartz %d", len(res.Fires), total)
	}
	if !v.FiresCapped && len(v.Fires) != total {
		t.Errorf("vector lists %d fires of %d without fires_capped", len(v.Fires), total)
	}
	for i, want := range v.Fires {
		if i >= len(res.Fires) {
			break
		}
		if got := res.Fires[i].At; !got.Equal(want.Time) {
			t.Errorf("fire %d at %v; Quartz %v", i, got, want.Time)
			break
		}
	}
	if res.Dropped != 0 {
		t.Errorf("dropped %d with the cap disabled", res.Dropped)
	}
	checkAfter(t, res.State)

	// The same evaluation with a small cap keeps the newest fires of the
	// uncapped run, drops the rest, and ends in the same state.
	const maxKept = 7
	if len(res.Fires) > maxKept {
		c := vc.catchup
		c.MaxFires = maxKept
		small := c.Due(vc.trig, vc.state, v.Now.Time)
		if !equalFires(small.Fires, res.Fires[len(res.Fires)-maxKept:]) || small.Dropped != len(res.Fires)-maxKept {
			t.Errorf("with MaxFires %d: %d fires, %d dropped; want the last %d of %d", maxKept, len(small.Fires), small.Dropped, maxKept, len(res.Fires))
		}
		if !equalState(small.State, res.State) {
			t.Errorf("with MaxFires %d: state %+v; uncapped %+v", maxKept, small.State, res.State)
		}
	}
}

func policyFor(t *testing.T, name string, k Kind) Policy {
	t.Helper()
	p, err := ParsePolicy(name, k)
	if err != nil {
		t.Fatalf("policy: %v", err)
	}
	return p
}

// TestQuartzMisfireVectors replays every oracle vector through Due and
// expects zero mismatches: the same misfire decision, the same fire times
// and the same state afterwards. It also checks that walking the trigger
// from Initial with Triggered reaches the vector's pre-outage state.
func TestQuartzMisfireVectors(t *testing.T) {
	t.Run("cron", func(t *testing.T) {
		for _, v := range readVectors[cronVector](t, "misfire_cron.jsonl") {
			t.Run(v.ID, func(t *testing.T) {
				expr, err := cron.Parse(v.Expr)
				if err != nil {
					t.Fatalf("cron.Parse(%q): %v", v.Expr, err)
				}
				loc, err := cron.LoadLocation(v.Zone)
				if err != nil {
					t.Fatalf("cron.LoadLocation(%q): %v", v.Zone, err)
				}
				trig := Cron{Schedule: cron.Schedule{Expr: expr, Location: loc}, Start: v.Start.Time, End: v.End.Time}
				state := Initial(trig)
				for range v.TimesTriggered {
					state = Triggered(trig, state)
				}
				want := State{Next: v.Next.Time, Prev: v.Prev.Time, Start: v.Start.Time, TimesTriggered: v.TimesTriggered,
					RepeatCount: RepeatForever, Complete: v.Next.IsZero()}
				if !equalState(state, want) {
					t.Errorf("walk from Initial: %+v; Quartz %+v", state, want)
				}
				vc := vectorCase{common: v.vectorCommon, trig: trig, state: want, catchup: Catchup{
					Policy:    policyFor(t, v.Policy, KindCron),
					Threshold: time.Duration(v.ThresholdMS) * time.Millisecond,
					MaxFires:  uncapped,
				}}
				vc.check(t, func(t *testing.T, got State) {
					if !got.Next.Equal(v.After.Next.Time) || !got.Prev.Equal(v.After.Prev.Time) || got.Complete != v.After.Complete {
						t.Errorf("after: next %v prev %v complete %v; Quartz next %v prev %v complete %v",
							got.Next, got.Prev, got.Complete, v.After.Next.Time, v.After.Prev.Time, v.After.Complete)
					}
				})
			})
		}
	})
	t.Run("simple", func(t *testing.T) {
		for _, v := range readVectors[simpleVector](t, "misfire_simple.jsonl") {
			t.Run(v.ID, func(t *testing.T) {
				trig := Simple{Start: v.Start.Time, Interval: time.Duration(v.IntervalMS) * time.Millisecond,
					RepeatCount: v.RepeatCount, End: v.End.Time}
				state := Initial(trig)
				for range v.TimesTriggered {
					state = Triggered(trig, state)
				}
				want := State{Next: v.Next.Time, Prev: v.Prev.Time, Start: v.Start.Time, TimesTriggered: v.TimesTriggered,
					RepeatCount: v.RepeatCount, Complete: v.Next.IsZero()}
				if !equalState(state, want) {
					t.Errorf("walk from Initial: %+v; Quartz %+v", state, want)
				}
				vc := vectorCase{common: v.vectorCommon, trig: trig, state: want, catchup: Catchup{
					Policy:    policyFor(t, v.Policy, KindSimple),
					Threshold: time.Duration(v.ThresholdMS) * time.Millisecond,
					MaxFires:  uncapped,
				}}
				checkSimpleMisfireStep(t, v, trig, want, vc.catchup.Policy)
				vc.check(t, func(t *testing.T, got State) {
					a := v.After
					wantAfter := State{Next: a.Next.Time, Prev: a.Prev.Time, Start: a.Start.Time,
						TimesTriggered: a.TimesTriggered, RepeatCount: a.RepeatCount, Complete: a.Complete}
					if !equalState(got, wantAfter) {
						t.Errorf("after: %+v; Quartz %+v", got, wantAfter)
					}
				})
			})
		}
	})
}

// checkSimpleMisfireStep compares the state right after updateAfterMisfire
// with the one the oracle's README says can be recovered from a vector: its
// next fire is fires[0] (or after.next when nothing was due), its
// timesTriggered is after.times_triggered - fires_total, and start and
// repeat count are those after the delivery loop.
func checkSimpleMisfireStep(t *testing.T, v simpleVector, trig Simple, s State, p Policy) {
	t.Helper()
	if !v.Misfired || v.FiresTotal == nil {
		return
	}
	got, _ := trig.misfire(p, s, v.Now.Time)
	want := State{Next: v.After.Next.Time, Start: v.After.Start.Time, RepeatCount: v.After.RepeatCount,
		TimesTriggered: v.After.TimesTriggered - *v.FiresTotal}
	if len(v.Fires) > 0 {
		want.Next = v.Fires[0].Time
	}
	want.Complete = want.Next.IsZero()
	got.Prev = time.Time{}
	if !equalState(got, want) {
		t.Errorf("right after updateAfterMisfire: %+v; Quartz %+v", got, want)
	}
}
