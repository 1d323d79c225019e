package chronos

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
)

// How many run records of a task kind ScheduleHealth reads: healthRunScan
// at first, and up to healthRunDepth in all for a kind whose newest
// records did not show one of its schedules succeed.
const (
	healthRunScan  = 100
	healthRunDepth = 1000
)

// ScheduleHealth returns the health of schedules ids, or of every schedule
// when none is given. An ID the registry does not hold is left out of the
// map. See Health and HealthState for what each state means, and
// docs/health.md.
//
// It costs a fixed number of round trips, whatever the number of
// schedules: the schedules (two for all of them, one for ids), the newest
// firing of the isolated ones (one, if any), and the newest 100 run
// records of each task kind the schedules enqueue (one), plus one more for
// the kinds whose newest records did not show each of their schedules
// succeed, up to 1,000 records of a kind in all. A schedule whose runs are
// older than that (a kind shared with much busier work) counts what those
// records show.
func (i *Inspector) ScheduleHealth(ctx context.Context, ids ...string) (map[string]*Health, error) {
	return i.scheduleHealth(ctx, time.Now(), ids)
}

// scheduleHealth is ScheduleHealth at now.
func (i *Inspector) scheduleHealth(ctx context.Context, now time.Time, ids []string) (map[string]*Health, error) {
	st, err := i.registry(ctx)
	if err != nil {
		return nil, fmt.Errorf("chronos: schedule health: %w", err)
	}
	list, err := healthSchedules(ctx, st, ids)
	if err != nil {
		return nil, fmt.Errorf("chronos: schedule health: %w", err)
	}
	last, err := i.lastIsolatedFirings(ctx, st, list)
	if err != nil {
		return nil, fmt.Errorf("chronos: schedule health: %w", err)
	}
	runs, err := i.healthRuns(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("chronos: schedule health: %w", err)
	}
	out := make(map[string]*Health, len(list))
	for k := range list {
		sc := &list[k]
		out[sc.ID] = healthOf(sc, scheduleInfo(sc, now, last), last, runs[sc.ID], now)
	}
	return out, nil
}

func healthSchedules(ctx context.Context, st *schedstore.Store, ids []string) ([]schedstore.Schedule, error) {
	if len(ids) == 0 {
		return st.List(ctx)
	}
	m, err := st.GetMany(ctx, ids)
	if err != nil {
		return nil, err
	}
	list := make([]schedstore.Schedule, 0, len(m))
	for _, sc := range m {
		list = append(list, sc)
	}
	return list, nil
}

// kindRuns are the run records of one schedule, by task kind, newest first.
type kindRuns map[string][]rdb.RunRecord

// healthRuns reads the run records of the task kinds of list and sorts
// them by schedule.
func (i *Inspector) healthRuns(ctx context.Context, list []schedstore.Schedule) (map[string]kindRuns, error) {
	scheds := map[string]map[string]bool{} // kind → IDs of the schedules that enqueue it
	for k := range list {
		for _, j := range list[k].Jobs {
			if scheds[j.Kind] == nil {
				scheds[j.Kind] = map[string]bool{}
			}
			scheds[j.Kind][list[k].ID] = true
		}
	}
	if len(scheds) == 0 {
		return nil, nil
	}
	kinds := make([]string, 0, len(scheds))
	for kind := range scheds {
		kinds = append(kinds, kind)
	}
	slices.Sort(kinds)

	out := map[string]kindRuns{}
	// add files the records of kind under their schedules and reports
	// whether each schedule of the kind has a success among them.
	add := func(kind string, recs []rdb.RunRecord) bool {
		for _, r := range recs {
			if !scheds[kind][r.ScheduleID] {
				continue
			}
			if out[r.ScheduleID] == nil {
				out[r.ScheduleID] = kindRuns{}
			}
			out[r.ScheduleID][kind] = append(out[r.ScheduleID][kind], r)
		}
		for id := range scheds[kind] {
			if !slices.ContainsFunc(out[id][kind], succeeded) {
				return false
			}
		}
		return true
	}
	pages, err := i.queue.RecentRuns(ctx, healthRunScan, kinds, nil)
	if err != nil {
		return nil, err
	}
	var deeper []string
	below := map[string]string{}
	for _, kind := range kinds {
		p := pages[kind]
		if !add(kind, p.Records) && p.More {
			deeper = append(deeper, kind)
			below[kind] = p.Cursor
		}
	}
	if len(deeper) == 0 {
		return out, nil
	}
	pages, err = i.queue.RecentRuns(ctx, healthRunDepth-healthRunScan, deeper, below)
	if err != nil {
		return nil, err
	}
	for _, kind := range deeper {
		add(kind, pages[kind].Records)
	}
	return out, nil
}

func succeeded(r rdb.RunRecord) bool { return r.Status == rdb.RunSuccess }

// finished is when run r ended.
func finished(r rdb.RunRecord) time.Time { return r.Start.Add(r.Duration) }

// healthOf computes the health of sc at now from its ScheduleInfo, the
// newest firings of isolated schedules and its run records.
func healthOf(sc *schedstore.Schedule, info *ScheduleInfo, last map[string]schedstore.FiringRecord, runs kindRuns, now time.Time) *Health {
	h := &Health{
		LateAfter:    cmp.Or(sc.LateAfter, DefaultLateAfter),
		FailingAfter: cmp.Or(sc.FailingAfter, DefaultFailingAfter),
	}
	streak := runsOf(h, runs)

	if !sc.Retired.IsZero() {
		h.State, h.Since = HealthRetired, sc.Retired
		if sc.RetiredBy != "" {
			h.Reason = "retired by " + sc.RetiredBy + " at " + fmtHealthTime(sc.Retired)
		} else {
			h.Reason = "no live instance declares it (retired at " + fmtHealthTime(sc.Retired) + ")"
		}
		return h
	}
	if since, why, ok := pausedNow(sc, now); ok {
		h.State, h.Since, h.Reason = HealthPaused, since, why
		return h
	}
	if due, ok := dueTime(sc, info, last, now); ok && now.After(due) {
		h.Lateness = now.Sub(due)
		if h.Lateness > h.LateAfter {
			h.State, h.Since = HealthLate, due
			what := "nothing was enqueued"
			if sc.Isolated {
				what = "no instance fired it"
			}
			h.Reason = fmt.Sprintf("fire time %s passed %s ago and %s (late after %s)",
				fmtHealthTime(due), roundLateness(h.Lateness), what, h.LateAfter)
			return h
		}
	}
	if streak.n >= h.FailingAfter {
		h.State, h.Since = HealthFailing, streak.since
		h.Reason = fmt.Sprintf("last %d runs of %s failed; the newest %s", streak.n, streak.kind, failureText(streak.newest))
		return h
	}
	h.State = HealthOK
	switch {
	case info.Complete && !sc.Isolated:
		h.Reason = "the trigger is complete"
	case streak.n > 0:
		h.Reason = fmt.Sprintf("%d of %d failed runs in a row before failing; the newest %s", streak.n, h.FailingAfter, failureText(streak.newest))
	}
	return h
}

// failStreak is the longest run of failures, newest first, of one task
// kind of a schedule.
type failStreak struct {
	n      int
	kind   string
	since  time.Time     // start of its oldest failure
	newest rdb.RunRecord // its newest failure
}

// runsOf fills the run fields of h from runs and returns the schedule's
// longest streak of failures.
func runsOf(h *Health, runs kindRuns) failStreak {
	var best failStreak
	kinds := make([]string, 0, len(runs))
	for kind := range runs {
		kinds = append(kinds, kind)
	}
	slices.Sort(kinds)
	for _, kind := range kinds {
		recs := runs[kind]
		for _, r := range recs {
			if end := finished(r); end.After(h.LastRun) {
				h.LastRun, h.LastOutcome = end, r.Status
			}
			if end := finished(r); succeeded(r) && end.After(h.LastSuccess) {
				h.LastSuccess = end
			}
		}
		n := slices.IndexFunc(recs, succeeded)
		if n < 0 {
			n = len(recs)
		}
		if n > best.n {
			best = failStreak{n: n, kind: kind, since: recs[n-1].Start, newest: recs[0]}
		}
	}
	h.Failures = best.n
	return best
}

// pausedNow reports whether sc is paused at now, as a whole or in every
// job, since when and why.
func pausedNow(sc *schedstore.Schedule, now time.Time) (time.Time, string, bool) {
	if p := sc.State.Pause; p != nil && p.Active(now) {
		return p.At, "paused" + pauseDetail(*p), true
	}
	if len(sc.Jobs) < 2 {
		return time.Time{}, "", false
	}
	var since time.Time
	for _, j := range sc.Jobs {
		p, ok := sc.State.JobPauses[j.Name]
		if !ok || !p.Active(now) {
			return time.Time{}, "", false
		}
		since = latest(since, p.At)
	}
	return since, fmt.Sprintf("all %d jobs paused, the last since %s", len(sc.Jobs), fmtHealthTime(since)), true
}

func pauseDetail(p schedstore.PauseInfo) string {
	var b strings.Builder
	if !p.At.IsZero() {
		b.WriteString(" since " + fmtHealthTime(p.At))
	}
	if p.Who != "" {
		b.WriteString(" by " + p.Who)
	}
	if !p.Until.IsZero() {
		b.WriteString(" until " + fmtHealthTime(p.Until))
	}
	if p.Note != "" {
		b.WriteString(": " + oneLineText(p.Note, 80))
	}
	return b.String()
}

// dueTime returns the fire time sc waits for at now: the next fire time as
// the leader stored it (or as it will compute it, for a schedule never
// evaluated); for an isolated schedule, whose state only instances hold,
// the first fire time after the newest firing any instance recorded.
// Either counts from the end of the latest pause at the earliest, since
// nothing is due while paused. ok is false when nothing is due: the
// trigger is complete or cannot be read.
func dueTime(sc *schedstore.Schedule, info *ScheduleInfo, last map[string]schedstore.FiringRecord, now time.Time) (time.Time, bool) {
	resumed := sc.State.Resumed
	if p := sc.State.Pause; p != nil && !p.Until.IsZero() && !p.Active(now) {
		resumed = latest(resumed, p.Until) // expired on its own
	}
	if !sc.Isolated {
		if info.Complete || info.NextFire.IsZero() {
			return time.Time{}, false
		}
		return latest(info.NextFire, resumed), true
	}
	p, err := compile(sc.Definition, sc.Created)
	if err != nil {
		return time.Time{}, false
	}
	after := latest(latest(sc.DefChanged, sc.Created), resumed)
	if r, ok := last[sc.ID]; ok {
		after = latest(after, r.Slot)
	}
	return p.trig.FireTimeAfter(after)
}

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// failureText describes a failed run for a reason line.
func failureText(r rdb.RunRecord) string {
	s := r.Status + " at " + fmtHealthTime(finished(r))
	if r.Error != "" {
		s += ": " + oneLineText(r.Error, 120)
	}
	return s
}

// roundLateness rounds d for a reason line, finely enough that a lateness
// just over a short LateAfter does not read as equal to it.
func roundLateness(d time.Duration) time.Duration {
	switch {
	case d < 10*time.Second:
		return d.Round(10 * time.Millisecond)
	case d < time.Hour:
		return d.Round(time.Second)
	}
	return d.Round(time.Minute)
}

// fmtHealthTime is how reasons write times: RFC 3339 in UTC, to the second.
func fmtHealthTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// oneLineText folds s onto one line of at most n runes.
func oneLineText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
