package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// Schedule actions. Each one is a POST from a form of the console's pages;
// it changes the state in Redis (so every replica and the leader see it at
// once), logs who did what, and redirects back to the page it came from
// with a message saying what happened.

// returnTo is the page a form asked to come back to (its "return" field),
// if it is a page of this console; otherwise fallback.
func (c *Console) returnTo(r *http.Request, fallback string) string {
	ret := r.PostFormValue("return")
	u, err := url.Parse(ret)
	if ret == "" || err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(ret, "//") ||
		!strings.HasPrefix(u.Path, c.prefix+"/") {
		return fallback
	}
	return ret
}

// findJob checks that schedule s has job, naming its jobs if not.
func findJob(s *chronos.ScheduleInfo, job string) error {
	if job == "" {
		return nil
	}
	var names []string
	for _, j := range s.Jobs {
		if j.Name == job {
			return nil
		}
		names = append(names, j.Name)
	}
	return &httpError{Status: http.StatusNotFound, Title: "No such job",
		Detail: fmt.Sprintf("Schedule %q has no job %q (its jobs: %s).", s.ID, job, strings.Join(names, ", "))}
}

func target(id, job string) string {
	if job != "" {
		return fmt.Sprintf("job %s of schedule %s", job, id)
	}
	return "schedule " + id
}

// parseUntil reads the end of a pause: a duration from now ("6h") or an
// RFC 3339 time, which must lie in the future. Empty means no end.
func parseUntil(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, badRequestf("Until %q: want a positive duration.", s)
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, badRequestf("Until %q: want a duration such as 6h or 90m, or an RFC 3339 time such as 2026-12-01T06:00:00Z.", s)
	}
	if !t.After(now) {
		return time.Time{}, badRequestf("Until %s is in the past.", s)
	}
	return t, nil
}

func (c *Console) pauseSchedule(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, job := r.PathValue("id"), r.PostFormValue("job")
	back := c.returnTo(r, c.link("schedules", id))
	s, err := c.insp.Schedule(ctx, id)
	if err != nil {
		return err
	}
	if err := findJob(s, job); err != nil {
		return err
	}
	until, err := parseUntil(r.PostFormValue("until"), c.now())
	if err != nil {
		return err
	}
	who := c.opts.Who(r)
	opts := chronos.PauseOptions{Job: job, Note: strings.TrimSpace(r.PostFormValue("note")), Who: who, Until: until}
	if err := c.insp.PauseSchedule(ctx, id, opts); err != nil {
		return err
	}
	c.log.Info("chronos console: paused", "schedule", id, "job", job, "until", until, "who", who)
	msg := "Paused " + target(id, job)
	if !until.IsZero() {
		msg += " until " + fmtUTC(until)
	}
	return c.redirect(w, r, back, msg+". The leader stops firing it within a second.")
}

func (c *Console) resumeSchedule(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, job := r.PathValue("id"), r.PostFormValue("job")
	back := c.returnTo(r, c.link("schedules", id))
	// ResumeSchedule does not tell an unknown schedule or job from one
	// that is not paused.
	s, err := c.insp.Schedule(ctx, id)
	if err != nil {
		return err
	}
	if err := findJob(s, job); err != nil {
		return err
	}
	was, err := c.insp.ResumeSchedule(ctx, id, job)
	if err != nil {
		return err
	}
	who := c.opts.Who(r)
	c.log.Info("chronos console: resumed", "schedule", id, "job", job, "was_paused", was, "who", who)
	if !was {
		return c.redirect(w, r, back, strings.ToUpper(target(id, job)[:1])+target(id, job)[1:]+" was not paused.")
	}
	return c.redirect(w, r, back, "Resumed "+target(id, job)+". Fire times missed while paused follow its misfire policy ("+s.Misfire+").")
}

func (c *Console) triggerSchedule(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("id")
	back := c.returnTo(r, c.link("schedules", id))
	s, err := c.insp.Schedule(ctx, id)
	if err != nil {
		return err
	}
	who := c.opts.Who(r)
	req, err := c.insp.TriggerSchedule(ctx, id, who)
	if err != nil {
		return err
	}
	c.log.Info("chronos console: trigger requested", "schedule", id, "request", req, "who", who)
	return c.redirect(w, r, back, c.requestMessage(r, s, "fire schedule "+id+" once now", req))
}

// requestMessage says that a request was stored, how pauses shape it, and
// that it waits when nobody leads.
func (c *Console) requestMessage(r *http.Request, s *chronos.ScheduleInfo, what, req string) string {
	msg := fmt.Sprintf("Asked the leader to %s (request %s); the firing shows in the schedule's history.", what, req)
	if s.Paused != nil {
		msg += " The schedule is paused; a request fires it anyway."
	}
	if jobs := pausedJobs(s); len(jobs) > 0 {
		msg += " Paused jobs are left out: " + strings.Join(jobs, ", ") + "."
	}
	if l, err := c.insp.SchedulerLeader(r.Context()); err == nil && l == nil {
		msg += " No scheduler leads now: the request waits until one does."
	}
	return msg
}

// backfillData is the backfill form and, once a range is given, its dry run.
type backfillData struct {
	Row      scheduleRow
	From, To string
	Plan     *chronos.BackfillPlan
	Max      int
}

func (c *Console) backfillRange(r *http.Request, from, to string) (time.Time, time.Time, error) {
	f, err := time.Parse(time.RFC3339, strings.TrimSpace(from))
	if err != nil {
		return f, f, badRequestf("From %q: want an RFC 3339 time such as 2026-12-01T00:00:00Z.", from)
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(to))
	if err != nil {
		return f, t, badRequestf("To %q: want an RFC 3339 time such as 2026-12-01T23:59:59Z.", to)
	}
	if t.Before(f) {
		return f, t, badRequestf("The range ends (%s) before it starts (%s).", to, from)
	}
	return f, t, nil
}

// backfillPage shows the backfill form; with from and to it shows how many
// firings the range makes (a dry run) and the button that asks for them.
func (c *Console) backfillPage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("id")
	s, err := c.insp.Schedule(ctx, id)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	d := backfillData{Row: newScheduleRow(s, nil), From: q.Get("from"), To: q.Get("to"), Max: chronos.MaxBackfill}
	if d.From != "" || d.To != "" {
		from, to, err := c.backfillRange(r, d.From, d.To)
		if err != nil {
			return err
		}
		if d.Plan, err = c.insp.PlanBackfill(ctx, id, from, to); err != nil {
			return err
		}
	}
	c.render(w, r, http.StatusOK, "backfill", "Backfill "+id, d)
	return nil
}

// backfillSchedule asks for the backfill the dry run showed. The form
// carries the count it showed; if the range now holds another count (the
// definition changed meanwhile), the request is refused as stale.
func (c *Console) backfillSchedule(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("id")
	s, err := c.insp.Schedule(ctx, id)
	if err != nil {
		return err
	}
	from, to, err := c.backfillRange(r, r.PostFormValue("from"), r.PostFormValue("to"))
	if err != nil {
		return err
	}
	planned, err := strconv.Atoi(r.PostFormValue("planned"))
	if err != nil {
		return badRequestf("The backfill form carries no dry-run count: run the dry run first.")
	}
	plan, err := c.insp.PlanBackfill(ctx, id, from, to)
	if err != nil {
		return err
	}
	again := linkQuery(c.link("schedules", id, "backfill"), "from", fmtISO(from), "to", fmtISO(to))
	if plan.Count != planned {
		return &httpError{Status: http.StatusConflict, Title: "Stale dry run", Back: again,
			Detail: fmt.Sprintf("The dry run showed %d firings, but the range now makes %d (the schedule's definition changed). Nothing was asked; review the new dry run.", planned, plan.Count)}
	}
	if plan.Count == 0 {
		return badRequestf("The range holds no fire time of %s: there is nothing to backfill.", id)
	}
	who := c.opts.Who(r)
	req, err := c.insp.BackfillSchedule(ctx, id, from, to, who)
	if err != nil {
		return err
	}
	c.log.Info("chronos console: backfill requested", "schedule", id, "from", from, "to", to, "firings", plan.Count, "request", req, "who", who)
	return c.redirect(w, r, c.link("schedules", id), c.requestMessage(r, s,
		fmt.Sprintf("backfill schedule %s with %d firings from %s to %s", id, plan.Count, fmtUTC(plan.First), fmtUTC(plan.Last)), req))
}

// confirmData is a confirmation page for an action that cannot be undone.
type confirmData struct {
	Heading string
	Message string
	Facts   [][2]string
	Action  string
	Button  string
	Cancel  string
}

func (c *Console) retireUnavailable() *httpError {
	return &httpError{Status: http.StatusNotImplemented, Title: "Retiring is not available",
		Detail: "This version of the chronos runtime cannot retire schedules yet. A schedule no live instance declares is retired by the registry after its grace period (see docs/scheduler.md)."}
}

func (c *Console) retirePage(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	s, err := c.insp.Schedule(r.Context(), id)
	if err != nil {
		return err
	}
	if c.opts.Retire == nil {
		return c.retireUnavailable()
	}
	c.render(w, r, http.StatusOK, "confirm", "Retire "+id, confirmData{
		Heading: "Retire schedule " + id + "?",
		Message: "A retired schedule stops firing on every instance. Its history is kept.",
		Facts:   [][2]string{{"Trigger", writtenTrigger(s)}, {"Declared by", s.DeclaredBy + " " + s.DeclaredVersion}, {"Source", s.Source}},
		Action:  c.link("schedules", id, "retire"), Button: "Retire " + id, Cancel: c.link("schedules", id),
	})
	return nil
}

func (c *Console) retireSchedule(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if c.opts.Retire == nil {
		return c.retireUnavailable()
	}
	if r.PostFormValue("confirm") != "yes" {
		return badRequestf("Retiring needs the confirmation page: open %s.", c.link("schedules", id, "retire"))
	}
	who := c.opts.Who(r)
	if err := c.opts.Retire.RetireSchedule(r.Context(), id, who); err != nil {
		return err
	}
	c.log.Info("chronos console: retired", "schedule", id, "who", who)
	return c.redirect(w, r, c.link("schedules"), "Retired schedule "+id+".")
}
