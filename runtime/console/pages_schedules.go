package console

import (
	"net/http"
	"slices"
	"strings"

	chronos "github.com/chronos-go/chronos/runtime"
)

// scheduleRow is one schedule as the list and the detail page show it.
type scheduleRow struct {
	*chronos.ScheduleInfo
	Words      string // the trigger in words; "" when there are none
	Written    string // the trigger as written
	ZoneNext   string // the next fire in the schedule's zone, if not UTC
	PausedJobs []string
	Health     *Health // nil: unknown or not available
}

// schedulesData is the schedule list with its filters.
type schedulesData struct {
	Rows            []scheduleRow
	Total           int
	Q, Status       string
	HealthFilter    string
	HealthAvailable bool
	HealthErr       string
	RetireAvailable bool
	Return          string // this page, for the forms to come back to
}

// statusFilters are the values of the list's status filter.
var statusFilters = []string{"active", "paused", "complete", "isolated", "group"}

func newScheduleRow(s *chronos.ScheduleInfo, health map[string]Health) scheduleRow {
	row := scheduleRow{ScheduleInfo: s, Words: describeTrigger(s), Written: writtenTrigger(s),
		ZoneNext: inZone(s.NextFire, s.TimeZone), PausedJobs: pausedJobs(s)}
	if h, ok := health[s.ID]; ok {
		row.Health = &h
	}
	return row
}

// writtenTrigger is the trigger as the code declared it.
func writtenTrigger(s *chronos.ScheduleInfo) string {
	switch s.Trigger {
	case "interval":
		return "every " + s.Spec
	case "":
		return s.Spec
	}
	return s.Trigger + " " + s.Spec
}

func (c *Console) schedulesPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	d := schedulesData{Q: strings.TrimSpace(q.Get("q")), Status: q.Get("status"), HealthFilter: q.Get("health"),
		RetireAvailable: c.opts.Retire != nil, Return: r.URL.RequestURI()}
	if d.Status != "" && !slices.Contains(statusFilters, d.Status) {
		return badRequestf("Unknown status filter %q: want one of %s.", d.Status, strings.Join(statusFilters, ", "))
	}
	if d.HealthFilter != "" && !slices.Contains(healthStates, HealthState(d.HealthFilter)) {
		return badRequestf("Unknown health filter %q.", d.HealthFilter)
	}
	scheds, err := c.insp.Schedules(r.Context())
	if err != nil {
		return err
	}
	d.Total = len(scheds)
	health, avail, herr := c.health(r, scheds)
	d.HealthAvailable, d.HealthErr = avail, herr
	needle := strings.ToLower(d.Q)
	for _, s := range scheds {
		row := newScheduleRow(s, health)
		if !matchesStatus(row, d.Status) || needle != "" && !strings.Contains(searchText(row), needle) {
			continue
		}
		if d.HealthFilter != "" && (row.Health == nil || string(row.Health.State) != d.HealthFilter) {
			continue
		}
		d.Rows = append(d.Rows, row)
	}
	c.render(w, r, http.StatusOK, "schedules", "Schedules", d)
	return nil
}

func matchesStatus(r scheduleRow, status string) bool {
	switch status {
	case "active":
		return r.Paused == nil && len(r.PausedJobs) == 0 && !r.Complete
	case "paused":
		return r.Paused != nil || len(r.PausedJobs) > 0
	case "complete":
		return r.Complete
	case "isolated":
		return r.Isolated
	case "group":
		return r.Group != ""
	}
	return true
}

// searchText is what the search box matches, lower-cased: the ID, the
// trigger as written and in words, the group, the source and the jobs.
func searchText(r scheduleRow) string {
	parts := []string{r.ID, r.Written, r.Words, r.Group, r.Source, r.TimeZone}
	for _, j := range r.Jobs {
		parts = append(parts, j.Name, j.Kind, j.Queue)
	}
	return strings.ToLower(strings.Join(parts, "\x00"))
}
