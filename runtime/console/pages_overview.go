package console

import (
	"net/http"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// overviewData is the overview page: who leads, which instances live, and
// how the schedules are doing.
type overviewData struct {
	Leader      *chronos.LeaderInfo // nil: nobody leads (partition 0)
	LeaderSince time.Time
	SinceKnown  bool // a LeaderSincer answered
	// Partitions is the leadership of every partition of a partitioned
	// namespace (nil for a namespace of a single partition); Unled counts
	// those nobody leads.
	Partitions []*chronos.LeaderInfo
	Unled      int
	Instances  []instanceRow
	StaleAfter time.Duration
	Schedules  int
	Paused     int // schedules paused in whole or in part
	Pending    int // operator requests the leader has not carried out
	Dead       int
	Health     healthSummary
}

type instanceRow struct {
	*chronos.SchedulerInstance
	Uptime time.Duration
	Age    time.Duration // since the last heartbeat
	Stale  bool
}

// healthSummary counts schedules by health state, in the order of states.
type healthSummary struct {
	Available bool
	Err       string
	Counts    []healthCount
	Unknown   int // schedules the source did not report
}

type healthCount struct {
	State HealthState
	N     int
}

var healthStates = []HealthState{HealthOK, HealthLate, HealthFailing, HealthPaused, HealthRetired}

func (c *Console) overviewPage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	d := overviewData{StaleAfter: c.opts.StaleAfter}
	var err error
	if d.Leader, err = c.insp.SchedulerLeader(ctx); err != nil {
		return err
	}
	if d.Leader != nil && c.opts.LeaderSince != nil {
		if t, err := c.opts.LeaderSince.LeaderSince(ctx, d.Leader.Epoch); err == nil {
			d.LeaderSince, d.SinceKnown = t, !t.IsZero()
		}
	}
	if ls, err := c.insp.SchedulerLeaders(ctx); err != nil {
		return err
	} else if len(ls) > 1 {
		d.Partitions = ls
		for _, l := range ls {
			if l.InstanceID == "" {
				d.Unled++
			}
		}
	}
	insts, err := c.insp.SchedulerInstances(ctx)
	if err != nil {
		return err
	}
	now := c.now()
	for _, in := range insts {
		row := instanceRow{SchedulerInstance: in, Age: now.Sub(in.LastSeen)}
		if !in.Started.IsZero() {
			row.Uptime = now.Sub(in.Started)
		}
		row.Stale = row.Age > c.opts.StaleAfter
		d.Instances = append(d.Instances, row)
	}
	scheds, err := c.insp.Schedules(ctx)
	if err != nil {
		return err
	}
	d.Schedules = len(scheds)
	for _, s := range scheds {
		if s.Paused != nil || len(pausedJobs(s)) > 0 {
			d.Paused++
		}
	}
	if d.Pending, err = c.insp.PendingRequests(ctx); err != nil {
		return err
	}
	if d.Dead, err = c.insp.CountDead(ctx); err != nil {
		return err
	}
	health, avail, herr := c.health(r, scheds)
	d.Health = healthSummary{Available: avail, Err: herr}
	if avail && herr == "" {
		n := map[HealthState]int{}
		for _, s := range scheds {
			if h, ok := health[s.ID]; ok {
				n[h.State]++
			} else {
				d.Health.Unknown++
			}
		}
		for _, st := range healthStates {
			d.Health.Counts = append(d.Health.Counts, healthCount{st, n[st]})
		}
	}
	c.render(w, r, http.StatusOK, "overview", "Overview", d)
	return nil
}

// health asks the health source about scheds. avail is false when there is
// no source; errText is set when it failed (the page still renders).
func (c *Console) health(r *http.Request, scheds []*chronos.ScheduleInfo) (map[string]Health, bool, string) {
	if c.opts.Health == nil {
		return nil, false, ""
	}
	ids := make([]string, len(scheds))
	for k, s := range scheds {
		ids[k] = s.ID
	}
	h, err := c.opts.Health.ScheduleHealth(r.Context(), ids)
	if err != nil {
		c.log.Warn("chronos console: schedule health", "err", err)
		return nil, true, cleanMessage(err)
	}
	return h, true, ""
}

func pausedJobs(s *chronos.ScheduleInfo) []string {
	var out []string
	for _, j := range s.Jobs {
		if j.Paused != nil {
			out = append(out, j.Name)
		}
	}
	return out
}
