package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

func controlCommands() []command {
	return []command{
		{name: "pause", synopsis: "ID [-job NAME] [-note TEXT] [-until RFC3339|DURATION] [-who NAME]", run: runPause,
			summary: "Pause a schedule, or one job of a group, cluster-wide until resumed or until -until."},
		{name: "resume", synopsis: "ID [-job NAME]", run: runResume,
			summary: "End the pause of a schedule or of one of its jobs; missed fires follow the misfire policy."},
		{name: "trigger", synopsis: "ID [-who NAME]", run: runTrigger,
			summary: "Ask the leader to fire a schedule once, now, outside its trigger."},
		{name: "backfill", synopsis: "ID -from RFC3339 -to RFC3339 [-max N] [-dry-run] [-who NAME]", run: runBackfill,
			summary: "Ask the leader to fire a schedule for each of its fire times in [from, to] (at most -max, default 10,000)."},
		{name: "clear-overlap", synopsis: "ID [-job NAME]", run: runClearOverlap,
			summary: "Forget the runs a job's overlap policy counts as queued or running, once they are known to be gone."},
	}
}

// whoFlag adds -who, defaulting to the operating system user, so that
// pauses and requests say who made them.
func whoFlag(fs *flag.FlagSet) *string {
	return fs.String("who", currentUser(), "who does this, recorded with the pause or request")
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

func runPause(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("pause")
	job := fs.String("job", "", "pause only this job of a group")
	note := fs.String("note", "", "why, for other operators")
	until := fs.String("until", "", "end the pause at this RFC 3339 time, or after this duration (e.g. 6h)")
	who := whoFlag(fs)
	pos, err := c.parse(fs, args, "ID")
	if err != nil {
		return err
	}
	id := pos[0]
	opts := chronos.PauseOptions{Job: *job, Note: *note, Who: *who}
	if *until != "" {
		if opts.Until, err = parseUntil(*until, time.Now()); err != nil {
			return err
		}
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	if err := checkJob(ctx, insp, id, *job); err != nil {
		return err
	}
	if err := insp.PauseSchedule(ctx, id, opts); err != nil {
		return checkFound(err, "schedule", id)
	}
	if c.json {
		s, err := insp.Schedule(ctx, id)
		if err != nil {
			return checkFound(err, "schedule", id)
		}
		return c.printJSON(newScheduleView(s, time.Now()))
	}
	if opts.Until.IsZero() {
		fmt.Fprintf(c.stdout, "paused %s until resumed\n", target(id, *job))
	} else {
		fmt.Fprintf(c.stdout, "paused %s until %s\n", target(id, *job), fmtTime(opts.Until))
	}
	return nil
}

// parseUntil reads -until: a duration from now or an RFC 3339 time, which
// must lie in the future.
func parseUntil(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, usagef("-until %s: want a positive duration", s)
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("-until %q: want an RFC 3339 time (2026-12-01T06:00:00Z) or a duration (6h)", s)
	}
	if !t.After(now) {
		return time.Time{}, usagef("-until %s is in the past", s)
	}
	return t, nil
}

func runResume(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("resume")
	job := fs.String("job", "", "resume only this job of a group")
	pos, err := c.parse(fs, args, "ID")
	if err != nil {
		return err
	}
	id := pos[0]
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	// ResumeSchedule does not tell an unknown schedule or job from one
	// that is not paused.
	if err := checkJob(ctx, insp, id, *job); err != nil {
		return err
	}
	was, err := insp.ResumeSchedule(ctx, id, *job)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(struct {
			ID      string `json:"id"`
			Job     string `json:"job,omitempty"`
			Resumed bool   `json:"resumed"`
		}{id, *job, was})
	}
	if was {
		fmt.Fprintf(c.stdout, "resumed %s\n", target(id, *job))
	} else {
		fmt.Fprintf(c.stdout, "%s was not paused\n", target(id, *job))
	}
	return nil
}

// checkJob checks that schedule id exists and, if job is not empty, that
// it has that job, so that a typo fails with a message naming the jobs.
func checkJob(ctx context.Context, insp *chronos.Inspector, id, job string) error {
	s, err := insp.Schedule(ctx, id)
	if err != nil {
		return checkFound(err, "schedule", id)
	}
	if job == "" {
		return nil
	}
	for _, j := range s.Jobs {
		if j.Name == job {
			return nil
		}
	}
	return fmt.Errorf("schedule %q has no job %q (its jobs: %s)", id, job, jobNames(s))
}

func target(id, job string) string {
	if job != "" {
		return fmt.Sprintf("job %s of schedule %s", job, id)
	}
	return "schedule " + id
}

func runTrigger(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("trigger")
	who := whoFlag(fs)
	pos, err := c.parse(fs, args, "ID")
	if err != nil {
		return err
	}
	id := pos[0]
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	if err := c.warnPaused(ctx, insp, id); err != nil {
		return err
	}
	req, err := insp.TriggerSchedule(ctx, id, *who)
	if err != nil {
		return checkFound(err, "schedule", id)
	}
	return c.printRequest(ctx, insp, id, req)
}

func runBackfill(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("backfill")
	fromS := fs.String("from", "", "first fire time to consider (RFC 3339, required)")
	toS := fs.String("to", "", "last fire time to consider (RFC 3339, required)")
	maxSlots := fs.Int("max", chronos.DefaultMaxBackfill, "refuse a range of more fire times than `N`")
	dryRun := fs.Bool("dry-run", false, "print how many fire times the range holds, and the first and last, and ask for nothing")
	who := whoFlag(fs)
	pos, err := c.parse(fs, args, "ID")
	if err != nil {
		return err
	}
	id := pos[0]
	from, err := parseTimeFlag("from", *fromS)
	if err != nil {
		return err
	}
	to, err := parseTimeFlag("to", *toS)
	if err != nil {
		return err
	}
	if to.Before(from) {
		return usagef("-to %s is before -from %s", *toS, *fromS)
	}
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	if *dryRun {
		return c.printBackfillPlan(ctx, insp, id, from, to, *maxSlots)
	}
	if err := c.warnPaused(ctx, insp, id); err != nil {
		return err
	}
	req, err := insp.BackfillSchedule(ctx, id, from, to, chronos.BackfillOptions{Who: *who, MaxSlots: *maxSlots})
	if err != nil {
		return checkFound(err, "schedule", id)
	}
	return c.printRequest(ctx, insp, id, req)
}

// printBackfillPlan prints what a backfill of [from, to] would fire.
func (c *cli) printBackfillPlan(ctx context.Context, insp *chronos.Inspector, id string, from, to time.Time, limit int) error {
	plan, err := insp.PlanBackfill(ctx, id, from, to)
	if err != nil {
		return checkFound(err, "schedule", id)
	}
	if c.json {
		return c.printJSON(struct {
			Schedule string    `json:"schedule"`
			Count    int       `json:"count"`
			More     bool      `json:"more,omitempty"`
			First    time.Time `json:"first,omitzero"`
			Last     time.Time `json:"last,omitzero"`
			Limit    int       `json:"limit"`
		}{id, plan.Count, plan.More, utc(plan.First), utc(plan.Last), limit})
	}
	more := ""
	if plan.More {
		more = "more than "
	}
	fmt.Fprintf(c.stdout, "backfill of %s from %s to %s: %s%d fire times", id, fmtTime(from), fmtTime(to), more, plan.Count)
	if plan.Count > 0 {
		fmt.Fprintf(c.stdout, ", first %s, last %s", fmtTime(plan.First), fmtTime(plan.Last))
	}
	fmt.Fprintln(c.stdout)
	if plan.More || plan.Count > limit {
		fmt.Fprintf(c.stdout, "more than the limit of %d: raise it with -max to ask for it\n", limit)
	}
	return nil
}

// warnPaused says how pauses shape an operator request: the leader fires
// a paused schedule anyway (the operator named it), but leaves out the
// paused jobs of a group, as its timer does (docs/cli.md).
func (c *cli) warnPaused(ctx context.Context, insp *chronos.Inspector, id string) error {
	s, err := insp.Schedule(ctx, id)
	if err != nil {
		return checkFound(err, "schedule", id)
	}
	now := time.Now()
	if active(s.Paused, now) {
		fmt.Fprintf(c.stderr, "chronos: warning: schedule %s is paused; the request fires it anyway\n", id)
	}
	var jobs []string
	for _, j := range s.Jobs {
		if active(j.Paused, now) {
			jobs = append(jobs, j.Name)
		}
	}
	if len(jobs) > 0 {
		fmt.Fprintf(c.stderr, "chronos: job %s of schedule %s is paused; the request leaves it out\n", strings.Join(jobs, ", "), id)
	}
	return nil
}

func parseTimeFlag(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, usagef("-%s is required", name)
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("-%s %q: want an RFC 3339 time such as 2026-12-01T06:00:00Z", name, s)
	}
	return t, nil
}

// printRequest reports an accepted trigger or backfill request, and warns
// when no scheduler leads the schedule's partition: the request then waits
// for one. The request is stored by then, so failing to read the leader is
// not a failure of the command; it only leaves the leader out.
func (c *cli) printRequest(ctx context.Context, insp *chronos.Inspector, id, req string) error {
	l, part, err := scheduleLeader(ctx, insp, id)
	known := err == nil
	if c.json {
		return c.printJSON(struct {
			ID        string `json:"id"`
			RequestID string `json:"request_id"`
			Leader    string `json:"leader,omitempty"`
		}{id, req, leaderID(l)})
	}
	fmt.Fprintf(c.stdout, "requested %s for schedule %s; the leader carries it out once (see: chronos schedule %s)\n", req, id, id)
	if known && l == nil {
		where := fmt.Sprintf("namespace %q", c.namespace())
		if part >= 0 {
			where += fmt.Sprintf(" (partition %d, schedule %s's)", part, id)
		}
		fmt.Fprintf(c.stderr, "chronos: warning: no scheduler leads %s now; the request waits until one does\n", where)
	}
	return nil
}

// scheduleLeader returns the leader of schedule id's partition (nil: none)
// and, in a namespace of several partitions, the partition (else -1).
func scheduleLeader(ctx context.Context, insp *chronos.Inspector, id string) (*chronos.LeaderInfo, int, error) {
	info, err := insp.Schedule(ctx, id)
	if err != nil {
		return nil, -1, err
	}
	ls, err := insp.SchedulerLeaders(ctx)
	if err != nil || info.Partition >= len(ls) {
		return nil, -1, err
	}
	part := info.Partition
	if len(ls) == 1 {
		part = -1
	}
	if l := ls[info.Partition]; l.InstanceID != "" {
		return l, part, nil
	}
	return nil, part, nil
}

func leaderID(l *chronos.LeaderInfo) string {
	if l == nil {
		return ""
	}
	return l.InstanceID
}

// runClearOverlap clears the overlap marker of one job. The queue clears
// a marker when its run finishes, and a firing clears one whose run
// vanished; this is for the rest (see "Stale markers" in
// docs/scheduler.md), so it names what it cleared.
func runClearOverlap(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("clear-overlap")
	job := fs.String("job", "", "the job of a group whose marker to clear")
	pos, err := c.parse(fs, args, "ID")
	if err != nil {
		return err
	}
	id := pos[0]
	ctx, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	if err := checkJob(ctx, insp, id, *job); err != nil {
		return err
	}
	s, err := insp.Schedule(ctx, id)
	if err != nil {
		return checkFound(err, "schedule", id)
	}
	name := *job
	if name == "" {
		if len(s.Jobs) != 1 {
			return fmt.Errorf("schedule %q is a group: name the job with -job (its jobs: %s)", id, jobNames(s))
		}
		name = s.Jobs[0].Name
	}
	if err := insp.ClearOverlap(ctx, id, name); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(struct {
			ID      string `json:"id"`
			Job     string `json:"job"`
			Overlap string `json:"overlap"`
		}{id, name, s.Overlap})
	}
	fmt.Fprintf(c.stdout, "cleared the overlap marker of %s: its next firing counts no earlier run", target(id, *job))
	if s.Overlap == "allow" {
		fmt.Fprint(c.stdout, " (its overlap policy is allow: markers do not hold it back)")
	}
	fmt.Fprintln(c.stdout)
	return nil
}

func jobNames(s *chronos.ScheduleInfo) string {
	var names []string
	for _, j := range s.Jobs {
		names = append(names, j.Name)
	}
	return strings.Join(names, ", ")
}
