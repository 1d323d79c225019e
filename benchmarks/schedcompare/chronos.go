package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	chronos "github.com/chronos-go/chronos/runtime"
)

// tick is the task every chronos schedule enqueues; Seq is the schedule's
// index. asynq tasks carry the same JSON.
type tick struct {
	Seq int `json:"seq"`
}

// Kind names the task kind.
func (tick) Kind() string { return "sched-bench" }

// runChronos registers the plan's schedules on one chronos Scheduler,
// waits for it to lead and fire, measures for cfg.window and then reads
// each task's lag from the stream.
func runChronos(ctx context.Context, cfg config, addr string, admin *redis.Client) (*result, error) {
	p := newPlan(cfg.schedules, cfg.rate)
	hook := newHook(cfg.cmds)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rdb.AddHook(hook)
	quiet := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
	r := &result{name: "chronos", schedules: p.n, window: cfg.window}
	first := &firstFiring{}

	h0 := heapAfterGC()
	regStart := time.Now()
	s := chronos.NewScheduler(rdb, chronos.SchedulerConfig{InstanceID: "schedcompare", Logger: quiet,
		FireAhead: cfg.fireAhead, Metrics: first})
	// Registration and the leader's first load of the registry take about
	// 100–150 µs a schedule on a loaded machine; the first triggers come
	// after that.
	base := time.Now().Add(3*time.Second + time.Duration(p.n)*200*time.Microsecond).Truncate(time.Second).Add(time.Second)
	for i := range p.n {
		t := chronos.Simple{Every: p.period, Repeat: -1, Start: base.Add(time.Duration(p.phase(i)) * time.Second)}
		if err := chronos.RegisterSimple(s, t, tick{Seq: i}, chronos.WithScheduleID("sb-"+strconv.Itoa(i))); err != nil {
			return nil, fmt.Errorf("chronos: register schedule %d: %w", i, err)
		}
	}
	// One more schedule, due at once: the leader fires it as soon as it has
	// loaded the registry, which times the start-up. Its trigger is before
	// the window, so it counts nowhere else.
	probe := chronos.Simple{Start: regStart, Repeat: 0}
	if err := chronos.RegisterSimple(s, probe, tick{Seq: -1}, chronos.WithScheduleID(probeID)); err != nil {
		return nil, fmt.Errorf("chronos: register the start-up probe: %w", err)
	}
	// The leader fires each trigger ahead into the delayed set
	// (SchedulerConfig.FireAhead); a Server's forwarder moves it to the
	// stream at its fire time. The queue is paused so that the tasks stay
	// in the stream for streamLags to read: a paused queue is still
	// forwarded, and nothing takes its tasks.
	insp := chronos.NewInspector(admin)
	if err := insp.PauseQueue(ctx, chronos.DefaultQueue); err != nil {
		return nil, fmt.Errorf("chronos: pause the queue: %w", err)
	}
	srv := chronos.NewServer(rdb, chronos.ServerConfig{Logger: quiet})
	if err := srv.Start(ctx, chronos.NewMux()); err != nil {
		return nil, fmt.Errorf("chronos: start server: %w", err)
	}
	defer func() { _ = srv.Shutdown(context.Background()) }()
	if err := s.Start(ctx); err != nil {
		return nil, fmt.Errorf("chronos: start scheduler: %w", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = s.Shutdown(context.Background())
		}
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		l, err := insp.SchedulerLeader(ctx)
		if err != nil {
			return nil, fmt.Errorf("chronos: read leader: %w", err)
		}
		if l != nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("chronos: no leader within a minute")
		}
	}
	r.registerTime = time.Since(regStart)
	for deadline := time.Now().Add(time.Minute); first.at() == nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("chronos: the leader made no firing within a minute of its election")
		}
	}
	r.startup = first.at().Sub(regStart)
	if time.Now().After(base) {
		r.notes = append(r.notes, fmt.Sprintf("chronos: leader ready %v after the first trigger", time.Since(base).Round(time.Millisecond)))
	}
	// The heap at the first firing holds the start-up's transients too:
	// the leaders of the other partitions may still be loading theirs.
	r.heapAtStartup = float64(int64(heapAfterGC())-int64(h0)) / float64(p.n)
	// The heap held while firing is measured half a second after the
	// first burst, as asynq's once its entries fire: by then every
	// partition's leader has loaded its schedules and fired them (the
	// first trigger comes well after the start-up), and what the start-up
	// read is garbage. The window starts two seconds later, so that the
	// counters are sampled after the GC.
	from := base
	if now := time.Now(); now.After(from) {
		from = now
	}
	waitUntil(ctx, from.Truncate(time.Second).Add(500*time.Millisecond))
	h1 := heapAfterGC()
	r.heapPerSched = float64(int64(h1)-int64(h0)) / float64(p.n)
	g := guard(cfg.fireAhead)
	start := windowStart(from.Truncate(time.Second).Add(3*time.Second), g)

	w, err := measureWindow(ctx, admin, hook, start.Add(-g), cfg.window, cfg.profilePath("chronos"))
	if err != nil {
		return nil, err
	}
	if hook.byName != nil {
		r.notes = append(r.notes, r.name+": commands sent in the window: "+hook.byName.top(8))
	}
	if err := s.Shutdown(ctx); err != nil {
		return nil, fmt.Errorf("chronos: shut down scheduler: %w", err)
	}
	stopped = true

	end := start.Add(cfg.window)
	late, err := waitForwarded(ctx, admin, end, 5*time.Second)
	if err != nil {
		return nil, err
	}
	lags, err := streamLags(ctx, admin, start, end)
	if err != nil {
		return nil, err
	}
	if len(late) > 0 {
		r.unforwarded = len(late)
		r.notes = append(r.notes, fmt.Sprintf("chronos: %d tasks of the window were still in the delayed set 5 s after it; "+
			"their lag is counted as the time until then (a lower bound)", len(late)))
		for _, f := range late {
			if !f.trigger.Before(start) {
				lags = append(lags, f)
			}
		}
	}
	r.finishLags(lags)
	w.fill(r)
	return r, nil
}

// probeID is the schedule that times the chronos leader's start-up.
const probeID = "sb-startup-probe"

// firstFiring is a chronos.Metrics that notes when the start-up probe was
// fired; every other call costs a string comparison.
type firstFiring struct {
	chronos.NoMetrics
	t atomic.Pointer[time.Time]
}

func (f *firstFiring) TriggerFired(t chronos.FiredTrigger) {
	if t.Schedule == probeID && f.t.Load() == nil {
		now := time.Now()
		f.t.CompareAndSwap(nil, &now)
	}
}

func (f *firstFiring) at() *time.Time { return f.t.Load() }

// chronosKeys finds the keys of chronos's default queue of the given type
// ("stream" for the queue, "zset" for its delayed set), one per partition
// of the namespace, by their names' suffix (q:default, delayed:default):
// the key layout is chronos's storage format (runtime/internal/rdb), which
// this module cannot import.
func chronosKeys(ctx context.Context, admin *redis.Client, suffix, typ string) ([]string, error) {
	keys, err := admin.Keys(ctx, "*"+suffix+chronos.DefaultQueue).Result()
	if err != nil {
		return nil, fmt.Errorf("chronos: find the %s keys: %w", suffix, err)
	}
	var out []string
	for _, k := range keys {
		if t, _ := admin.Type(ctx, k).Result(); t == typ {
			out = append(out, k)
		}
	}
	return out, nil
}

// waitForwarded waits, up to limit, until no task of a trigger before end
// is left in a delayed set: the leader fires triggers ahead into them and
// the Server's forwarder moves each to its stream at its time, so a task
// still there has not reached the stream yet. It returns those left when
// the limit passed, each with its lag so far.
func waitForwarded(ctx context.Context, admin *redis.Client, end time.Time, limit time.Duration) ([]fireLag, error) {
	keys, err := chronosKeys(ctx, admin, "delayed:", "zset")
	if err != nil || len(keys) == 0 {
		return nil, err // nothing was ever delayed
	}
	before := strconv.FormatInt(end.UnixMilli()-1, 10)
	deadline := time.Now().Add(limit)
	for {
		var n int64
		for _, key := range keys {
			c, err := admin.ZCount(ctx, key, "-inf", before).Result()
			if err != nil {
				return nil, fmt.Errorf("chronos: read the delayed set %s: %w", key, err)
			}
			n += c
		}
		if n == 0 {
			return nil, nil
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	now := time.Now()
	var out []fireLag
	for _, key := range keys {
		members, err := admin.ZRangeByScore(ctx, key, &redis.ZRangeBy{Min: "-inf", Max: before}).Result()
		if err != nil {
			return nil, fmt.Errorf("chronos: read the delayed set %s: %w", key, err)
		}
		for _, m := range members {
			trig, err := triggerOf(m)
			if err != nil {
				return nil, err
			}
			if !trig.IsZero() {
				out = append(out, fireLag{trigger: trig, lag: now.Sub(trig)})
			}
		}
	}
	return out, nil
}

// triggerOf reads the trigger time of an encoded chronos task (its
// "trigger" member, unix ms; zero for a task that is not a trigger's).
func triggerOf(encoded string) (time.Time, error) {
	var m struct {
		Trigger int64 `json:"trigger"`
	}
	if err := json.Unmarshal([]byte(encoded), &m); err != nil {
		return time.Time{}, fmt.Errorf("chronos: decode a task: %w", err)
	}
	if m.Trigger == 0 {
		return time.Time{}, nil
	}
	return time.UnixMilli(m.Trigger), nil
}

// streamLags reads the chronos streams of the default queue, one per
// partition of the namespace, and returns, for each task whose trigger time
// is in [from, to), the stream entry's time minus the trigger time: when
// the task reached the queue (the entry ID's millisecond part, from Redis's
// clock on this machine: the fire script's XADD, or the forwarder's for a
// trigger fired ahead) minus when it was meant to fire. It does not use
// Task.EnqueuedAt, which the scheduler stamps before it sends a burst's
// pipeline, and before the fire time for a trigger fired ahead.
//
// The stream keys and the entry's "m" field with its "trigger" member are
// chronos's storage format (runtime/internal/rdb), which this module cannot
// import; the keys are found by their suffix.
func streamLags(ctx context.Context, admin *redis.Client, from, to time.Time) ([]fireLag, error) {
	keys, err := chronosKeys(ctx, admin, "q:", "stream")
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("chronos: no stream for queue %q", chronos.DefaultQueue)
	}
	var lags []fireLag
	for _, key := range keys {
		for next := "-"; ; {
			xs, err := admin.XRangeN(ctx, key, next, "+", 10_000).Result()
			if err != nil {
				return nil, fmt.Errorf("chronos: read stream %s: %w", key, err)
			}
			for _, x := range xs {
				s, _ := x.Values["m"].(string)
				trig, err := triggerOf(s)
				if err != nil {
					return nil, fmt.Errorf("chronos: stream entry %s: %w", x.ID, err)
				}
				ms, _, _ := strings.Cut(x.ID, "-")
				at, err := strconv.ParseInt(ms, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("chronos: stream entry ID %q: %w", x.ID, err)
				}
				if trig.IsZero() || trig.Before(from) || !trig.Before(to) {
					continue
				}
				lags = append(lags, fireLag{trigger: trig, lag: time.UnixMilli(at).Sub(trig)})
			}
			if len(xs) < 10_000 {
				break
			}
			next = "(" + xs[len(xs)-1].ID
		}
	}
	return lags, nil
}
