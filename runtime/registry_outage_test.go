package chronos

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
)

// captured is one log record, with the attributes of the record and of
// the logger it was logged through.
type captured struct {
	at    time.Time
	level slog.Level
	msg   string
	attrs map[string]string
}

// captureHandler is a slog.Handler that keeps every record, so that a test
// counts log lines by level and message instead of searching text.
type captureHandler struct {
	mu    *sync.Mutex
	recs  *[]captured
	attrs []slog.Attr
}

func newCaptureHandler() *captureHandler {
	return &captureHandler{mu: &sync.Mutex{}, recs: &[]captured{}}
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	c := captured{at: r.Time, level: r.Level, msg: r.Message, attrs: map[string]string{}}
	for _, a := range h.attrs {
		c.attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		c.attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.recs = append(*h.recs, c)
	return nil
}

func (h *captureHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &captureHandler{mu: h.mu, recs: h.recs, attrs: append(slices.Clone(h.attrs), as...)}
}

func (h *captureHandler) WithGroup(string) slog.Handler { return h }

// count is the number of records at level whose message contains part.
func (h *captureHandler) count(level slog.Level, part string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range *h.recs {
		if r.level == level && strings.Contains(r.msg, part) {
			n++
		}
	}
	return n
}

// first is when the first record at level whose message contains part
// was logged, and whether there is one.
func (h *captureHandler) first(level slog.Level, part string) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range *h.recs {
		if r.level == level && strings.Contains(r.msg, part) {
			return r.at, true
		}
	}
	return time.Time{}, false
}

// String lists the records at Info and above, for failure messages.
func (h *captureHandler) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, r := range *h.recs {
		if r.level >= slog.LevelInfo {
			fmt.Fprintf(&b, "%v %s %v\n", r.level, r.msg, r.attrs)
		}
	}
	return b.String()
}

// observed is a scheduler instance whose logs and metrics a test reads.
type observed struct {
	s       *Scheduler
	log     *captureHandler
	metrics *recorder
}

// observedScheduler starts a scheduler like e.scheduler does, but logging
// into a capturing handler of its own and recording its metrics.
func (e *schedEnv) observedScheduler(id string, cfg SchedulerConfig, reg func(*Scheduler)) *observed {
	e.t.Helper()
	o := &observed{log: newCaptureHandler(), metrics: &recorder{}}
	cfg.InstanceID, cfg.Logger, cfg.Metrics = id, slog.New(o.log), o.metrics
	if cfg.LeaderTTL == 0 {
		cfg.LeaderTTL = time.Second
	}
	o.s = NewScheduler(e.redis.NewClient(), cfg)
	reg(o.s)
	e.start(o.s)
	return o
}

// registryLost is how many times o's metrics recorded RegistryLost.
func (o *observed) registryLost() int {
	o.metrics.mu.Lock()
	defer o.metrics.mu.Unlock()
	n := 0
	for _, c := range o.metrics.calls {
		if strings.HasPrefix(c, "registry lost") {
			n++
		}
	}
	return n
}

// An outage that keeps the data but outlasts twice InstanceTTL lets every
// instance's record and declarations expire. When Redis is back the
// instances declare again, at their next heartbeat: nothing is retired,
// nothing is reported as a lost registry, and firing resumes.
func TestAnOutageLongerThanTwiceInstanceTTLRetiresNothing(t *testing.T) {
	e := newSchedEnv(t, redistest.Options{AOF: true})
	ctx := context.Background()
	const ttl = time.Second // heartbeats every 333 ms; records expire 2 s after the last
	reg := func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{N: 1}, WithScheduleID("sec"))
		_ = RegisterInterval(s, time.Hour, tick{N: 2}, WithScheduleID("hourly"))
	}
	var nodes []*observed
	for _, id := range []string{"a", "b"} {
		nodes = append(nodes, e.observedScheduler(id, SchedulerConfig{InstanceTTL: ttl, FireAhead: -1}, reg))
	}
	waitLeader(t, nodes[0].s, nodes[1].s)
	waitUntil(t, "two firings", func() bool { return len(triggerTimes(t, e.tasks(DefaultQueue), "sec")) >= 2 })

	e.redis.Kill()
	down := time.Now()
	time.Sleep(2*2*ttl + 500*time.Millisecond) // every record and declaration has expired by the restart
	e.redis.Restart()
	back := time.Now()
	t.Logf("Redis down for %v", back.Sub(down).Round(time.Millisecond))

	waitUntil(t, "a firing after the outage", func() bool {
		secs := triggerTimes(t, e.tasks(DefaultQueue), "sec")
		return len(secs) > 0 && secs[len(secs)-1] >= back.Unix()
	})
	waitUntil(t, "both instances live again", func() bool {
		is, err := e.insp.SchedulerInstances(ctx)
		return err == nil && len(is) == 2
	})
	time.Sleep(3 * ttl) // a few sweeps: the leader's second look included
	for _, id := range []string{"sec", "hourly"} {
		info, err := e.insp.Schedule(ctx, id)
		if err != nil || !info.Retired.IsZero() {
			t.Errorf("%s after the outage: %+v, %v; want it in force", id, info, err)
		}
	}
	for _, n := range nodes {
		id := n.s.InstanceID()
		if c := n.log.count(slog.LevelWarn, "registry record was gone (not heard from for twice InstanceTTL)"); c != 1 {
			t.Errorf("%s said %d times that its record was gone because it was not heard from, want once:\n%s", id, c, n.log)
		}
		if c := n.log.count(slog.LevelInfo, "schedule retired"); c != 0 {
			t.Errorf("%s retired a schedule:\n%s", id, n.log)
		}
		if c, m := n.log.count(slog.LevelWarn, "registry lost"), n.registryLost(); c != 0 || m != 0 {
			t.Errorf("%s reported a lost registry (%d WARN, %d RegistryLost) for an outage that kept the data:\n%s", id, c, m, n.log)
		}
	}
}

// A data loss is reported once by each instance that put schedules back:
// one "registry lost" WARN and one RegistryLost per loss, never repeated
// at later heartbeats. An instance that finds the schedules back already
// says that Redis lost its data, not that it was not heard from.
func TestARegistryLossIsReportedOncePerInstanceThatReseeded(t *testing.T) {
	e := newSchedEnv(t)
	ctx := context.Background()
	reg := func(s *Scheduler) {
		_ = RegisterInterval(s, time.Second, tick{N: 1}, WithScheduleID("sec"))
	}
	var nodes []*observed
	for _, id := range []string{"a", "b", "c"} {
		nodes = append(nodes, e.observedScheduler(id, SchedulerConfig{InstanceTTL: time.Second}, reg))
	}
	waitLeader(t, nodes[0].s, nodes[1].s, nodes[2].s)
	waitUntil(t, "a firing", func() bool {
		info, err := e.insp.Schedule(ctx, "sec")
		return err == nil && !info.LastFired.IsZero()
	})

	reported := func(n *observed) (warns, metrics, other int) {
		return n.log.count(slog.LevelWarn, "registry lost"), n.registryLost(),
			n.log.count(slog.LevelWarn, "Redis lost its data, and another instance had put the schedules back already")
	}
	for loss := 1; loss <= 2; loss++ {
		time.Sleep(700 * time.Millisecond) // the mirrors have seen a firing
		FlushAllForTest(t, e.rdb)
		waitUntil(t, "every instance to declare again", func() bool {
			is, err := e.insp.SchedulerInstances(ctx)
			return err == nil && len(is) == 3
		})
		time.Sleep(1500 * time.Millisecond) // more heartbeats: none may report the loss again
		var reseeders int
		for _, n := range nodes {
			warns, metrics, other := reported(n)
			id := n.s.InstanceID()
			switch {
			case warns != metrics:
				t.Fatalf("loss %d: %s logged %d registry-lost WARNs and recorded RegistryLost %d times:\n%s", loss, id, warns, metrics, n.log)
			case warns > loss:
				t.Fatalf("loss %d: %s reported %d registry losses:\n%s", loss, id, warns, n.log)
			case warns+other != loss:
				t.Fatalf("loss %d: %s said %d times that the registry was lost and %d times that another instance put it back; want one of them per loss:\n%s",
					loss, id, warns, other, n.log)
			}
			if c := n.log.count(slog.LevelWarn, "not heard from"); c != 0 {
				t.Fatalf("loss %d: %s blames a data loss on not being heard from:\n%s", loss, id, n.log)
			}
			reseeders += warns
		}
		if reseeders < loss {
			t.Fatalf("loss %d: %d registry-lost reports in all, want at least one per loss", loss, reseeders)
		}
		t.Logf("after loss %d: %d reports of a lost registry in all", loss, reseeders)
	}
	waitUntil(t, "a firing after the losses", func() bool {
		info, err := e.insp.Schedule(ctx, "sec")
		return err == nil && info.LastFired.After(time.Now().Add(-2*time.Second))
	})
}
