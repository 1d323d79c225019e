package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
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
// waits for it to lead and fire, measures for cfg.window and then drains
// the queue with a chronos Server to read each task's TriggerTime and
// EnqueuedAt.
func runChronos(ctx context.Context, cfg config, addr string, admin *redis.Client) (*result, error) {
	p := newPlan(cfg.schedules, cfg.rate)
	hook := &rttHook{}
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
	if err := s.Start(ctx); err != nil {
		return nil, fmt.Errorf("chronos: start scheduler: %w", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = s.Shutdown(context.Background())
		}
	}()
	insp := chronos.NewInspector(admin)
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

	w, err := measureWindow(ctx, admin, hook, start, cfg.window)
	if err != nil {
		return nil, err
	}
	if err := s.Shutdown(ctx); err != nil {
		return nil, fmt.Errorf("chronos: shut down scheduler: %w", err)
	}
	stopped = true

	lags, err := drainChronos(ctx, rdb, insp, start, start.Add(cfg.window))
	if err != nil {
		return nil, err
	}
	r.fires = len(lags)
	w.fill(r)
	r.finishLags(lags)
	return r, nil
}

// drainChronos runs a chronos Server until the default queue is empty and
// returns EnqueuedAt − TriggerTime of each task whose TriggerTime is in
// [from, to). Both times have millisecond resolution.
func drainChronos(ctx context.Context, rdb redis.UniversalClient, insp *chronos.Inspector, from, to time.Time) ([]time.Duration, error) {
	var mu sync.Mutex
	var lags []time.Duration
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(_ context.Context, t *chronos.Task[tick]) error {
		if t.TriggerTime.Before(from) || !t.TriggerTime.Before(to) {
			return nil
		}
		mu.Lock()
		lags = append(lags, t.EnqueuedAt.Sub(t.TriggerTime))
		mu.Unlock()
		return nil
	})
	srv := chronos.NewServer(rdb, chronos.ServerConfig{
		Concurrency: 16,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err := srv.Start(ctx, mux); err != nil {
		return nil, fmt.Errorf("chronos: start drain server: %w", err)
	}
	defer srv.Shutdown(context.Background())
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		qi, err := insp.QueueInfo(ctx, chronos.DefaultQueue)
		if err != nil {
			return nil, fmt.Errorf("chronos: queue info: %w", err)
		}
		if qi.Ready == 0 && qi.Running == 0 && qi.Delayed == 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("chronos: queue not drained within 5 minutes (%d ready)", qi.Ready)
		}
	}
	if err := srv.Shutdown(ctx); err != nil {
		return nil, fmt.Errorf("chronos: shut down drain server: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return lags, nil
}
