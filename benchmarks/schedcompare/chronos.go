package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
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

	h0 := heapAfterGC()
	regStart := time.Now()
	s := chronos.NewScheduler(rdb, chronos.SchedulerConfig{InstanceID: "schedcompare", Logger: quiet})
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
	if time.Now().After(base) {
		r.notes = append(r.notes, fmt.Sprintf("chronos: leader ready %v after the first trigger", time.Since(base).Round(time.Millisecond)))
	}
	// Measure from the first whole second after one burst has fired.
	from := base
	if now := time.Now(); now.After(from) {
		from = now
	}
	start := waitUntil(ctx, from.Truncate(time.Second).Add(2*time.Second))
	h1 := heapAfterGC()
	r.heapPerSched = float64(int64(h1)-int64(h0)) / float64(p.n)

	w, err := measureWindow(ctx, admin, hook, start.Add(-guard), cfg.window, cfg.profilePath("chronos"))
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

	lags, err := streamLags(ctx, admin, start, start.Add(cfg.window))
	if err != nil {
		return nil, err
	}
	r.fires = len(lags)
	w.fill(r)
	r.finishLags(lags)
	return r, nil
}

// streamLags reads the chronos streams of the default queue, one per
// partition of the namespace, and returns, for each task whose trigger
// time is in [from, to), the stream entry's time minus the trigger time:
// when Redis appended the task (the entry ID's millisecond part, from
// Redis's clock on this machine) minus when it was meant to fire. It does
// not use Task.EnqueuedAt, which the scheduler stamps before it sends a
// burst's pipeline and so would leave out the time Redis takes to run it.
//
// The stream keys and the entry's "m" field with its "trigger" member are
// chronos's storage format (runtime/internal/rdb), which this module cannot
// import; the keys are found by their suffix.
func streamLags(ctx context.Context, admin *redis.Client, from, to time.Time) ([]time.Duration, error) {
	keys, err := admin.Keys(ctx, "*q:"+chronos.DefaultQueue).Result()
	if err != nil {
		return nil, fmt.Errorf("chronos: find streams: %w", err)
	}
	var streams []string
	for _, k := range keys {
		if t, _ := admin.Type(ctx, k).Result(); t == "stream" {
			streams = append(streams, k)
		}
	}
	if len(streams) == 0 {
		return nil, fmt.Errorf("chronos: no stream for queue %q among %v", chronos.DefaultQueue, keys)
	}
	var lags []time.Duration
	for _, key := range streams {
		for next := "-"; ; {
			xs, err := admin.XRangeN(ctx, key, next, "+", 10_000).Result()
			if err != nil {
				return nil, fmt.Errorf("chronos: read stream %s: %w", key, err)
			}
			for _, x := range xs {
				var m struct {
					Trigger int64 `json:"trigger"`
				}
				s, _ := x.Values["m"].(string)
				if err := json.Unmarshal([]byte(s), &m); err != nil {
					return nil, fmt.Errorf("chronos: decode stream entry %s: %w", x.ID, err)
				}
				ms, _, _ := strings.Cut(x.ID, "-")
				at, err := strconv.ParseInt(ms, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("chronos: stream entry ID %q: %w", x.ID, err)
				}
				trig := time.UnixMilli(m.Trigger)
				if m.Trigger == 0 || trig.Before(from) || !trig.Before(to) {
					continue
				}
				lags = append(lags, time.UnixMilli(at).Sub(trig))
			}
			if len(xs) < 10_000 {
				break
			}
			next = "(" + xs[len(xs)-1].ID
		}
	}
	return lags, nil
}
