package main

import (
	"context"
	"fmt"
	"slices"
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
		{name: "schedules", synopsis: "[-all]", run: runSchedules,
			summary: "List every schedule in force (with -all, retired ones too): trigger, zone, queue, next fire, last firing and outcome, pause, health, source."},
		{name: "schedule", synopsis: "ID", run: runSchedule,
			summary: fmt.Sprintf("Show one schedule in full, its pending requests, its next %d fire times and its last %d firings.", detailNextFires, detailHistory)},
	}
}

func runSchedules(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("schedules")
	all := fs.Bool("all", false, "list retired schedules too (their state is kept until the retirement grace ends)")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	stored, err := insp.Schedules(ctx)
	if err != nil {
		return err
	}
	// A retired schedule no longer fires: it is kept as a tombstone so
	// that a rollback resumes it, and is listed only on request.
	list := stored
	if !*all {
		list = slices.DeleteFunc(slices.Clone(stored), func(s *chronos.ScheduleInfo) bool { return !s.Retired.IsZero() })
	}
	if len(stored) == 0 {
		if err := c.requireNamespace(ctx); err != nil {
			return err
		}
	}
	health, err := insp.ScheduleHealth(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	if c.json {
		out := make([]*scheduleView, len(list))
		for k, s := range list {
			out[k] = newScheduleView(s, now)
			if h := health[s.ID]; h != nil {
				hv := newHealthView("", h)
				out[k].Health = &hv
			}
		}
		return c.printJSON(out)
	}
	t := newTable(c.stdout, "ID", "TRIGGER", "ZONE", "QUEUE", "NEXT FIRE", "LAST FIRED", "LAST OUTCOME", "PAUSED", "HEALTH", "SOURCE")
	for _, s := range list {
		var state string
		if h := health[s.ID]; h != nil {
			state = string(h.State)
		}
		t.row(s.ID, triggerText(s), s.TimeZone, queuesText(s), nextText(s), fmtTime(s.LastFired), outcomeText(s),
			pausedText(s, now), state, s.Source)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if hidden := len(stored) - len(list); hidden > 0 {
		fmt.Fprintf(c.stdout, "(%d retired %s not shown; -all lists them)\n", hidden, plural(hidden, "schedule", "schedules"))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
	reqs, err := requestsOf(ctx, insp, id)
	if err != nil {
		return err
	}
	now := time.Now()
	if c.json {
		d := scheduleDetail{scheduleView: *newScheduleView(s, now), NextFires: []time.Time{}, History: []firingView{},
			Requests: []requestView{}}
		for _, t := range next {
			d.NextFires = append(d.NextFires, utc(t))
		}
		for _, h := range hist {
			d.History = append(d.History, newFiringView(h))
		}
		for _, r := range reqs {
			d.Requests = append(d.Requests, newRequestView(r))
		}
		return c.printJSON(d)
	}
	return printScheduleDetail(c, s, next, hist, reqs, now)
}

// requestsOf returns the pending operator requests of schedule id, oldest
// first.
func requestsOf(ctx context.Context, insp *chronos.Inspector, id string) ([]*chronos.OperatorRequest, error) {
	all, err := insp.Requests(ctx)
	if err != nil {
		return nil, err
	}
	var out []*chronos.OperatorRequest
	for _, r := range all {
		if r.Schedule == id {
			out = append(out, r)
		}
	}
	return out, nil
}

func printScheduleDetail(c *cli, s *chronos.ScheduleInfo, next []time.Time, hist []*chronos.FiringRecord,
	reqs []*chronos.OperatorRequest, now time.Time) error {
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
	if s.Isolated {
		// Every live instance fires it from its own timer.
		field("Last instance", s.LastInstance)
	}
	field("Paused", pauseText(s.Paused, now))
	if !s.Retired.IsZero() {
		field("Retired", retiredText(s)+"; it does not fire")
	}
	field("Declared by", strings.TrimSpace(s.DeclaredBy+" "+s.DeclaredVersion))
	field("Created", fmtTime(s.Created))
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintln(c.stdout, "\nJobs:")
	t = newTable(c.stdout, "NAME", "KIND", "QUEUE", "PAUSED")
	for _, j := range s.Jobs {
		t.row(j.Name, j.Kind, j.Queue, pauseText(j.Paused, now))
	}
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintln(c.stdout, "\nPending requests (oldest first):")
	if len(reqs) == 0 {
		fmt.Fprintln(c.stdout, "  none")
	} else {
		t = newTable(c.stdout, "  ID", "KIND", "WHO", "CREATED", "PROGRESS")
		for _, r := range reqs {
			t.row("  "+r.ID, r.Kind, r.Who, fmtTime(r.Created), progressText(r))
		}
		if err := t.flush(); err != nil {
			return err
		}
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
	if !s.Retired.IsZero() {
		return "retired"
	}
	if s.Complete {
		return "complete"
	}
	return fmtTime(s.NextFire)
}

// queuesText is the queues the jobs of a schedule enqueue to, for one
// table cell: "local" for an isolated schedule, whose tasks run in the
// instance that fires them.
func queuesText(s *chronos.ScheduleInfo) string {
	var qs []string
	for _, j := range s.Jobs {
		if !slices.Contains(qs, j.Queue) {
			qs = append(qs, j.Queue)
		}
	}
	return strings.Join(qs, ",")
}

// outcomeText is the last outcome, and for an isolated schedule the
// instance that fired it last.
func outcomeText(s *chronos.ScheduleInfo) string {
	if s.Isolated && s.LastInstance != "" {
		return s.LastOutcome + " on " + s.LastInstance
	}
	return s.LastOutcome
}

// active reports whether pause p is in force at now: a pause whose Until
// has passed stays stored until the next resume, but the scheduler fires
// the schedule again.
func active(p *chronos.Pause, now time.Time) bool {
	return p != nil && (p.Until.IsZero() || p.Until.After(now))
}

// inForce returns p when it is a pause in force at now.
func inForce(p *chronos.Pause, now time.Time) *chronos.Pause {
	if active(p, now) {
		return p
	}
	return nil
}

// ended returns p when it is a pause whose Until has passed.
func ended(p *chronos.Pause, now time.Time) *chronos.Pause {
	if p != nil && !active(p, now) {
		return p
	}
	return nil
}

// pausedText summarizes the pauses of a schedule for one table cell.
func pausedText(s *chronos.ScheduleInfo, now time.Time) string {
	if active(s.Paused, now) {
		if !s.Paused.Until.IsZero() {
			return "until " + fmtTime(s.Paused.Until)
		}
		return "yes"
	}
	var jobs []string
	for _, j := range s.Jobs {
		if active(j.Paused, now) {
			jobs = append(jobs, j.Name)
		}
	}
	if len(jobs) > 0 {
		return "jobs " + strings.Join(jobs, ",")
	}
	if p := ended(s.Paused, now); p != nil {
		return "no (ended " + fmtTime(p.Until) + ")"
	}
	return "no"
}

// pauseText describes one pause in full.
func pauseText(p *chronos.Pause, now time.Time) string {
	if p == nil {
		return "no"
	}
	if !active(p, now) {
		return "no: the pause" + pauseAuthor(p) + " ended at " + fmtTime(p.Until) + "; it fires again"
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

func pauseAuthor(p *chronos.Pause) string {
	if p.Who == "" {
		return ""
	}
	return " by " + p.Who
}

// progressText is how far a request is: a backfill's fire times fired of
// those planned and the next one.
func progressText(r *chronos.OperatorRequest) string {
	if r.Kind != "backfill" {
		return "waiting for the leader"
	}
	s := fmt.Sprintf("%d of %d fired", r.Fired, r.Planned)
	if !r.Next.IsZero() {
		s += ", next " + fmtTime(r.Next)
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
	LastInstance    string     `json:"last_instance,omitempty"`
	Complete        bool       `json:"complete"`
	Paused          *pauseView `json:"paused"`
	EndedPause      *pauseView `json:"ended_pause,omitempty"`
	Jobs            []jobView  `json:"jobs"`
	DeclaredBy      string     `json:"declared_by,omitempty"`
	DeclaredVersion string     `json:"declared_version,omitempty"`
	Created         time.Time  `json:"created,omitzero"`
	Retired         time.Time  `json:"retired,omitzero"`
	RetiredBy       string     `json:"retired_by,omitempty"`
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
	Name       string     `json:"name"`
	Kind       string     `json:"kind"`
	Queue      string     `json:"queue"`
	Paused     *pauseView `json:"paused"`
	EndedPause *pauseView `json:"ended_pause,omitempty"`
}

// scheduleDetail is the JSON form of "chronos schedule ID".
type scheduleDetail struct {
	scheduleView
	NextFires []time.Time   `json:"next_fires"`
	History   []firingView  `json:"history"`
	Requests  []requestView `json:"pending_requests"`
}

// requestView is the JSON form of a pending operator request.
type requestView struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	Who     string    `json:"who,omitempty"`
	Created time.Time `json:"created,omitzero"`
	From    time.Time `json:"from,omitzero"`
	To      time.Time `json:"to,omitzero"`
	Planned int       `json:"planned,omitempty"`
	Fired   int       `json:"fired"`
	Next    time.Time `json:"next,omitzero"`
}

func newRequestView(r *chronos.OperatorRequest) requestView {
	return requestView{ID: r.ID, Kind: r.Kind, Who: r.Who, Created: utc(r.Created), From: utc(r.From), To: utc(r.To),
		Planned: r.Planned, Fired: r.Fired, Next: utc(r.Next)}
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

// newScheduleView is the JSON form of s at now: "paused" is the pause in
// force, and a pause whose end has passed is "ended_pause".
func newScheduleView(s *chronos.ScheduleInfo, now time.Time) *scheduleView {
	v := &scheduleView{
		ID: s.ID, Trigger: s.Trigger, Spec: s.Spec, TimeZone: s.TimeZone, DST: s.DST, Misfire: s.Misfire,
		Overlap: s.Overlap, Isolated: s.Isolated, Group: s.Group, Source: s.Source,
		NextFire: utc(s.NextFire), LastFired: utc(s.LastFired), LastOutcome: s.LastOutcome, LastInstance: s.LastInstance,
		Complete: s.Complete, Paused: newPauseView(inForce(s.Paused, now)), EndedPause: newPauseView(ended(s.Paused, now)),
		Jobs:       []jobView{},
		DeclaredBy: s.DeclaredBy, DeclaredVersion: s.DeclaredVersion, Created: utc(s.Created),
		Retired: utc(s.Retired), RetiredBy: s.RetiredBy,
	}
	for _, j := range s.Jobs {
		v.Jobs = append(v.Jobs, jobView{Name: j.Name, Kind: j.Kind, Queue: j.Queue, Paused: newPauseView(inForce(j.Paused, now)),
			EndedPause: newPauseView(ended(j.Paused, now))})
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
