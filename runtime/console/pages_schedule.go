package console

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// Counts shown by the schedule page.
const (
	detailNextFires = 10
	detailHistory   = 50
	detailRuns      = 50
)

// scheduleData is the schedule page.
type scheduleData struct {
	Row             scheduleRow
	HealthAvailable bool
	RetireAvailable bool
	Next            []fireTime
	History         []firingRow
	Runs            []*chronos.RunRecord
	Chart           chart
	Return          string
}

type fireTime struct {
	At    time.Time
	Zoned string
}

// firingRow is a firing with the kind of each job, so that its task IDs
// can link to the task page, which finds run records by kind.
type firingRow struct {
	*chronos.FiringRecord
	Kinds map[string]string // job → kind
}

func (c *Console) schedulePage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("id")
	s, err := c.insp.Schedule(ctx, id)
	if err != nil {
		return err
	}
	health, avail, _ := c.health(r, []*chronos.ScheduleInfo{s})
	d := scheduleData{Row: newScheduleRow(s, health), HealthAvailable: avail,
		RetireAvailable: c.opts.Retire != nil, Return: r.URL.RequestURI()}
	next, err := c.insp.NextFireTimes(ctx, id, detailNextFires)
	if err != nil {
		return err
	}
	for _, t := range next {
		d.Next = append(d.Next, fireTime{At: t, Zoned: inZone(t, s.TimeZone)})
	}
	hist, err := c.insp.ScheduleHistory(ctx, id, detailHistory)
	if err != nil {
		return err
	}
	kinds := map[string]string{}
	for _, j := range s.Jobs {
		kinds[j.Name] = j.Kind
	}
	for _, h := range hist {
		d.History = append(d.History, firingRow{FiringRecord: h, Kinds: kinds})
	}
	// Run records are kept per kind; keep this schedule's.
	seen := map[string]bool{}
	for _, j := range s.Jobs {
		if seen[j.Kind] {
			continue
		}
		seen[j.Kind] = true
		runs, err := c.insp.ListRuns(ctx, j.Kind, 500)
		if err != nil {
			return err
		}
		for _, run := range runs {
			if run.ScheduleID == id {
				d.Runs = append(d.Runs, run)
			}
		}
	}
	slices.SortStableFunc(d.Runs, func(a, b *chronos.RunRecord) int { return b.Start.Compare(a.Start) })
	if len(d.Runs) > detailRuns {
		d.Runs = d.Runs[:detailRuns]
	}
	d.Chart = runChart(d.Runs)
	c.render(w, r, http.StatusOK, "schedule", "Schedule "+id, d)
	return nil
}

// chart is a bar chart of run durations over time, drawn as inline SVG by
// the template: one bar per run, oldest on the left, coloured by outcome.
type chart struct {
	Width, Height int
	Bars          []bar
	Max           string // the duration at the top of the scale
	From, To      string // the first and last run's start
	Empty         bool
}

type bar struct {
	X, Y, W, H float64
	Class      string // success, retry, dead
	Title      string
}

func runChart(newestFirst []*chronos.RunRecord) chart {
	ch := chart{Width: 600, Height: 120}
	if len(newestFirst) == 0 {
		ch.Empty = true
		return ch
	}
	runs := slices.Clone(newestFirst)
	slices.Reverse(runs)
	var top time.Duration
	for _, r := range runs {
		top = max(top, r.Duration)
	}
	top = max(top, time.Microsecond)
	slot := float64(ch.Width) / float64(max(len(runs), 20))
	for i, r := range runs {
		h := float64(ch.Height-4) * float64(r.Duration) / float64(top)
		h = max(h, 2)
		class := r.Status
		if class != "success" && class != "retry" && class != "dead" {
			class = "other"
		}
		ch.Bars = append(ch.Bars, bar{X: float64(i)*slot + 1, Y: float64(ch.Height) - h, W: max(slot-2, 1), H: h, Class: class,
			Title: fmt.Sprintf("%s %s: %s in %s", fmtUTC(r.Start), r.TaskID, r.Status, fmtDuration(r.Duration))})
	}
	ch.Max = fmtDuration(top)
	ch.From, ch.To = fmtUTC(runs[0].Start), fmtUTC(runs[len(runs)-1].Start)
	return ch
}
