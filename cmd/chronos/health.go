package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

func healthCommands() []command {
	return []command{
		{name: "health", synopsis: "[-o text|json]", run: runHealth,
			summary: "Report late and failing schedules, one line each; exit status 1 if there is any. See docs/health.md."},
	}
}

// healthStates are the states in the order problems are printed and
// counted.
var healthStates = []chronos.HealthState{
	chronos.HealthLate, chronos.HealthFailing, chronos.HealthOK, chronos.HealthPaused, chronos.HealthRetired,
}

// unhealthyError is the outcome of a health check that found late or
// failing schedules: exit status 1, with this line on stderr after the
// report.
type unhealthyError struct {
	total  int
	counts map[chronos.HealthState]int
}

func (e *unhealthyError) Error() string {
	n := e.counts[chronos.HealthLate] + e.counts[chronos.HealthFailing]
	return fmt.Sprintf("%d of %d schedules need attention: %d late, %d failing",
		n, e.total, e.counts[chronos.HealthLate], e.counts[chronos.HealthFailing])
}

func runHealth(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("health")
	format := fs.String("o", "text", "output `format`: text (one line per late or failing schedule) or json (every schedule); -json is -o json")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	switch *format {
	case "text":
	case "json":
		c.json = true
	default:
		return usagef("-o %q: want text or json", *format)
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	hs, err := insp.ScheduleHealth(ctx)
	if err != nil {
		return err
	}
	ids := slices.Sorted(maps.Keys(hs))
	counts := map[chronos.HealthState]int{}
	for _, id := range ids {
		counts[hs[id].State]++
	}
	var outcome error
	if counts[chronos.HealthLate]+counts[chronos.HealthFailing] > 0 {
		outcome = &unhealthyError{total: len(ids), counts: counts}
	}

	if c.json {
		out := healthReport{Healthy: outcome == nil, Counts: map[string]int{}, Schedules: []healthView{}}
		for _, st := range healthStates {
			out.Counts[string(st)] = counts[st]
		}
		for _, id := range ids {
			out.Schedules = append(out.Schedules, newHealthView(id, hs[id]))
		}
		if err := c.printJSON(out); err != nil {
			return err
		}
		return outcome
	}

	if outcome == nil {
		var parts []string
		for _, st := range healthStates {
			if counts[st] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
			}
		}
		fmt.Fprintf(c.stdout, "no schedule is late or failing (%d schedules: %s)\n", len(ids), cmp.Or(strings.Join(parts, ", "), "none"))
		return nil
	}
	// Late first: a stopped scheduler makes every schedule late, and
	// that is the line to read first.
	slices.SortStableFunc(ids, func(a, b string) int {
		return cmp.Compare(slices.Index(healthStates, hs[a].State), slices.Index(healthStates, hs[b].State))
	})
	t := newTable(c.stdout)
	for _, id := range ids {
		if h := hs[id]; h.State.Problem() {
			t.row(string(h.State), id, h.Reason)
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	return outcome
}

// healthReport is the JSON form of "chronos health".
type healthReport struct {
	Healthy   bool           `json:"healthy"` // nothing late or failing
	Counts    map[string]int `json:"counts"`  // schedules by state
	Schedules []healthView   `json:"schedules"`
}

// healthView is the JSON form of one schedule's health.
type healthView struct {
	ID           string    `json:"id,omitempty"`
	State        string    `json:"state"`
	Reason       string    `json:"reason,omitempty"`
	Since        time.Time `json:"since,omitzero"`
	Lateness     string    `json:"lateness"`
	LastRun      time.Time `json:"last_run,omitzero"`
	LastOutcome  string    `json:"last_outcome,omitempty"`
	LastSuccess  time.Time `json:"last_success,omitzero"`
	Failures     int       `json:"failures"`
	LateAfter    string    `json:"late_after"`
	FailingAfter int       `json:"failing_after"`
}

func newHealthView(id string, h *chronos.Health) healthView {
	return healthView{
		ID: id, State: string(h.State), Reason: h.Reason, Since: utc(h.Since), Lateness: fmtDuration(h.Lateness),
		LastRun: utc(h.LastRun), LastOutcome: h.LastOutcome, LastSuccess: utc(h.LastSuccess),
		Failures: h.Failures, LateAfter: h.LateAfter.String(), FailingAfter: h.FailingAfter,
	}
}
