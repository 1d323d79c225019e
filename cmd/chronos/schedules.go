package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/cron"
)

// Counts shown by "chronos schedule".
const (
	detailNextFires = 5
	detailHistory   = 10
)

func scheduleCommands() []command {
	return []command{
		{name: "schedules", synopsis: "", run: runSchedules,
			summary: "List every schedule: trigger, zone, next fire, last firing and outcome, pause, health, source."},
		{name: "schedule", synopsis: "ID", run: runSchedule,
			summary: fmt.Sprintf("Show one schedule in full, its next %d fire times and its last %d firings.", detailNextFires, detailHistory)},
	}
}

func runSchedules(ctx context.Context, c *cli, args []string) error {
	if _, err := c.parse(c.flagSet("schedules"), args); err != nil {
		return err
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	list, err := insp.Schedules(ctx)
	if err != nil {
		return err
	}
	health, err := insp.ScheduleHealth(ctx)
	if err != nil {
		return err
	}
	if c.json {
		out := make([]*scheduleView, len(list))
		for k, s := range list {
			out[k] = newScheduleView(s)
			if h := health[s.ID]; h != nil {
				hv := newHealthView("", h)
				out[k].Health = &hv
			}
		}
		return c.printJSON(out)
	}
	t := newTable(c.stdout, "ID", "TRIGGER", "ZONE", "NEXT FIRE", "LAST FIRED", "LAST OUTCOME", "PAUSED", "HEALTH", "SOURCE")
	for _, s := range list {
		var state string
		if h := health[s.ID]; h != nil {
			state = string(h.State)
		}
		t.row(s.ID, triggerText(s), s.TimeZone, nextText(s), fmtTime(s.LastFired), s.LastOutcome, pausedText(s), state, s.Source)
	}
	return t.flush()
}

func runSchedule(ctx context.Context, c *cli, args []string) error {
	pos, err := c.parse(c.flagSet("schedule"), args, "ID")
	if err != nil {
		return err
	}
	id := pos[0]
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	s, err := insp.Schedule(ctx, id)
	if err != nil {
		return checkFound(err, "schedule", id)
	}
	next, err := insp.NextFireTimes(ctx, id, detailNextFires)
	if err != nil {
		return checkFound(err, "schedule", id)
	}
	hist, err := insp.ScheduleHistory(ctx, id, detailHistory)
	if err != nil {
		return err
	}
	if c.json {
		d := scheduleDetail{scheduleView: *newScheduleView(s), NextFires: []time.Time{}, History: []firingView{}}
		for _, t := range next {
			d.NextFires = append(d.NextFires, utc(t))
		}
		for _, h := range hist {
			d.History = append(d.History, newFiringView(h))
		}
		return c.printJSON(d)
	}
	return printScheduleDetail(c, s, next, hist)
}

func printScheduleDetail(c *cli, s *chronos.ScheduleInfo, next []time.Time, hist []*chronos.FiringRecord) error {
	t := newTable(c.stdout)
	field := func(name, value string) { t.row(name+":", value) }
	field("ID", s.ID)
	field("Trigger", triggerText(s))
	if s.Trigger == "cron" {
		zone := s.TimeZone
		if zone == "" {
			zone = "UTC"
		}
		field("Zone", zone+" (DST "+s.DST+")")
	}
	field("Misfire", s.Misfire)
	field("Overlap", s.Overlap)
	field("Isolated", yesNo(s.Isolated))
	if s.Group != "" {
		field("Group", s.Group)
	}
	field("Source", s.Source)
	field("Next fire", nextText(s))
	field("Last fired", fmtTime(s.LastFired))
	field("Last outcome", s.LastOutcome)
	field("Paused", pauseText(s.Paused))
	field("Declared by", strings.TrimSpace(s.DeclaredBy+" "+s.DeclaredVersion))
	field("Created", fmtTime(s.Created))
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintln(c.stdout, "\nJobs:")
	t = newTable(c.stdout, "NAME", "KIND", "QUEUE", "PAUSED")
	for _, j := range s.Jobs {
		t.row(j.Name, j.Kind, j.Queue, pauseText(j.Paused))
	}
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintf(c.stdout, "\nNext %d fire times:\n", detailNextFires)
	if len(next) == 0 {
		fmt.Fprintln(c.stdout, "  none: the trigger is complete")
	}
	loc := scheduleLocation(s)
	t = newTable(c.stdout)
	for _, n := range next {
		if loc != nil {
			t.row(" ", fmtTime(n), n.In(loc).Format("Mon 2006-01-02 15:04:05 MST"))
		} else {
			t.row(" ", fmtTime(n), n.UTC().Format("Mon"))
		}
	}
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintf(c.stdout, "\nLast %d firings (newest first):\n", detailHistory)
	if len(hist) == 0 {
		fmt.Fprintln(c.stdout, "  none yet")
		return nil
	}
	t = newTable(c.stdout, "  TRIGGER", "WRITTEN", "SOURCE", "JOBS")
	for _, h := range hist {
		t.row("  "+fmtTime(h.Trigger), fmtTime(h.At), h.Source, firingJobsText(h.Jobs))
	}
	return t.flush()
}

// scheduleLocation is the zone of a cron schedule other than UTC, in which
// its fire times are also shown; nil otherwise.
func scheduleLocation(s *chronos.ScheduleInfo) *time.Location {
	if s.TimeZone == "" || s.TimeZone == "UTC" {
		return nil
	}
	loc, err := cron.LoadLocation(s.TimeZone)
	if err != nil {
		return nil
	}
	return loc
}

func triggerText(s *chronos.ScheduleInfo) string {
	switch s.Trigger {
	case "interval":
		return "every " + s.Spec
	case "":
		return s.Spec
	}
	return s.Trigger + " " + s.Spec
}

func nextText(s *chronos.ScheduleInfo) string {
	if s.Complete {
		return "complete"
	}
	return fmtTime(s.NextFire)
}

// pausedText summarizes the pauses of a schedule for one table cell.
func pausedText(s *chronos.ScheduleInfo) string {
	if s.Paused != nil {
		if !s.Paused.Until.IsZero() {
			return "until " + fmtTime(s.Paused.Until)
		}
		return "yes"
	}
	var jobs []string
	for _, j := range s.Jobs {
		if j.Paused != nil {
			jobs = append(jobs, j.Name)
		}
	}
	if len(jobs) > 0 {
		return "jobs " + strings.Join(jobs, ",")
	}
	return "no"
}

// pauseText describes one pause in full.
func pauseText(p *chronos.Pause) string {
	if p == nil {
		return "no"
	}
	s := "since " + fmtTime(p.At)
	if p.Who != "" {
		s += " by " + p.Who
	}
	if !p.Until.IsZero() {
		s += " until " + fmtTime(p.Until)
	}
	if p.Note != "" {
		s += fmt.Sprintf(" (%s)", p.Note)
	}
	return s
}

func firingJobsText(jobs []chronos.FiringJob) string {
	var parts []string
	for _, j := range jobs {
		p := j.Job + " " + j.Result
		if j.TaskID != "" {
			p += " " + j.TaskID
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// scheduleView is the JSON form of a schedule. The CLI defines its own
// field names so that its output is a stable interface of its own.
type scheduleView struct {
	ID              string     `json:"id"`
	Trigger         string     `json:"trigger"`
	Spec            string     `json:"spec"`
	TimeZone        string     `json:"time_zone,omitempty"`
	DST             string     `json:"dst,omitempty"`
	Misfire         string     `json:"misfire"`
	Overlap         string     `json:"overlap"`
	Isolated        bool       `json:"isolated"`
	Group           string     `json:"group,omitempty"`
	Source          string     `json:"source,omitempty"`
	NextFire        time.Time  `json:"next_fire,omitzero"`
	LastFired       time.Time  `json:"last_fired,omitzero"`
	LastOutcome     string     `json:"last_outcome,omitempty"`
	Complete        bool       `json:"complete"`
	Paused          *pauseView `json:"paused"`
	Jobs            []jobView  `json:"jobs"`
	DeclaredBy      string     `json:"declared_by,omitempty"`
	DeclaredVersion string     `json:"declared_version,omitempty"`
	Created         time.Time  `json:"created,omitzero"`
	// Health is set by "chronos schedules" only.
	Health *healthView `json:"health,omitempty"`
}

type pauseView struct {
	Note  string    `json:"note,omitempty"`
	Who   string    `json:"who,omitempty"`
	At    time.Time `json:"at,omitzero"`
	Until time.Time `json:"until,omitzero"`
}

type jobView struct {
	Name   string     `json:"name"`
	Kind   string     `json:"kind"`
	Queue  string     `json:"queue"`
	Paused *pauseView `json:"paused"`
}

// scheduleDetail is the JSON form of "chronos schedule ID".
type scheduleDetail struct {
	scheduleView
	NextFires []time.Time  `json:"next_fires"`
	History   []firingView `json:"history"`
}

type firingView struct {
	Trigger time.Time       `json:"trigger"`
	At      time.Time       `json:"at"`
	Source  string          `json:"source"`
	Jobs    []firingJobView `json:"jobs"`
}

type firingJobView struct {
	Job    string `json:"job"`
	TaskID string `json:"task_id,omitempty"`
	Result string `json:"result"`
}

func newScheduleView(s *chronos.ScheduleInfo) *scheduleView {
	v := &scheduleView{
		ID: s.ID, Trigger: s.Trigger, Spec: s.Spec, TimeZone: s.TimeZone, DST: s.DST, Misfire: s.Misfire,
		Overlap: s.Overlap, Isolated: s.Isolated, Group: s.Group, Source: s.Source,
		NextFire: utc(s.NextFire), LastFired: utc(s.LastFired), LastOutcome: s.LastOutcome, Complete: s.Complete,
		Paused: newPauseView(s.Paused), Jobs: []jobView{},
		DeclaredBy: s.DeclaredBy, DeclaredVersion: s.DeclaredVersion, Created: utc(s.Created),
	}
	for _, j := range s.Jobs {
		v.Jobs = append(v.Jobs, jobView{Name: j.Name, Kind: j.Kind, Queue: j.Queue, Paused: newPauseView(j.Paused)})
	}
	return v
}

func newPauseView(p *chronos.Pause) *pauseView {
	if p == nil {
		return nil
	}
	return &pauseView{Note: p.Note, Who: p.Who, At: utc(p.At), Until: utc(p.Until)}
}

func newFiringView(h *chronos.FiringRecord) firingView {
	v := firingView{Trigger: utc(h.Trigger), At: utc(h.At), Source: h.Source, Jobs: []firingJobView{}}
	for _, j := range h.Jobs {
		v.Jobs = append(v.Jobs, firingJobView{Job: j.Job, TaskID: j.TaskID, Result: j.Result})
	}
	return v
}
