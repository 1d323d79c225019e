package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// enqueueRecord is one asynq enqueue, noted by PostEnqueueFunc.
type enqueueRecord struct {
	seq int32
	at  int64 // UnixNano after Enqueue returned
}

// runAsynq registers the plan's schedules on one asynq Scheduler, as
// "@every <period>" entries added one phase per second so that they spread
// over the seconds like chronos's, measures for cfg.window and derives each
// fire's lag from the time PostEnqueueFunc saw it.
func runAsynq(ctx context.Context, cfg config, addr string, admin *redis.Client) (*result, error) {
	p := newPlan(cfg.schedules, cfg.rate)
	hook := newHook(cfg.cmds)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rdb.AddHook(hook)
	r := &result{name: "asynq", schedules: p.n, window: cfg.window}

	// The record buffer is allocated before the heap baseline, so it does
	// not count as asynq's memory. It holds every fire of the run with room
	// to spare; fires beyond it are counted as dropped.
	recs := make([]enqueueRecord, p.n*4+int(cfg.window/time.Second+p.period/time.Second+8)*cfg.rate*2)
	var next, enqErrs atomic.Int64
	post := func(info *asynq.TaskInfo, err error) {
		if err != nil {
			enqErrs.Add(1)
			return
		}
		at := time.Now().UnixNano()
		if k := next.Add(1) - 1; k < int64(len(recs)) {
			recs[k] = enqueueRecord{seq: int32(parseSeq(info.Payload)), at: at}
		}
	}

	first := make([]time.Time, p.n) // first trigger of each schedule
	h0 := heapAfterGC()
	regStart := time.Now()
	s := asynq.NewSchedulerFromRedisClient(rdb, &asynq.SchedulerOpts{
		LogLevel:        asynq.ErrorLevel,
		Logger:          quietLogger{},
		PostEnqueueFunc: post,
	})
	if err := s.Start(); err != nil {
		return nil, fmt.Errorf("asynq: start scheduler: %w", err)
	}
	defer s.Shutdown()

	// robfig/cron, under asynq, gives an entry added at time t the first
	// trigger t.Truncate(1s) + period and then one every period on that
	// grid. Each phase is registered just after a whole second, and the
	// registration must end within that second for the grid to be known.
	spec := "@every " + p.period.String()
	late := 0
	for ph := range p.phases() {
		sec := waitUntil(ctx, time.Now().Truncate(time.Second).Add(time.Second+10*time.Millisecond)).Truncate(time.Second)
		for i := ph; i < p.n; i += p.phases() {
			t := asynq.NewTask(tick{}.Kind(), []byte(`{"seq":`+strconv.Itoa(i)+`}`))
			if _, err := s.Register(spec, t); err != nil {
				return nil, fmt.Errorf("asynq: register schedule %d: %w", i, err)
			}
			first[i] = sec.Add(p.period)
		}
		if !time.Now().Truncate(time.Second).Equal(sec) {
			late++
		}
	}
	r.registerTime = time.Since(regStart)
	if late > 0 {
		r.notes = append(r.notes, fmt.Sprintf("asynq: %d of %d phases took past their second to register; their lags may be off by a second", late, p.phases()))
	}
	// Phase 0 first fires one second after the last phase was added, and
	// from then on every second has its burst.
	start := waitUntil(ctx, time.Now().Truncate(time.Second).Add(2*time.Second))
	h1 := heapAfterGC()
	r.heapPerSched = float64(int64(h1)-int64(h0)) / float64(p.n)
	// The window starts a second later, so that the counters, sampled
	// half a second before it, are sampled after the GC.
	g := guard(0)
	start = windowStart(start.Add(time.Second), g)

	w, err := measureWindow(ctx, admin, hook, start.Add(-g), cfg.window, cfg.profilePath("asynq"))
	if err != nil {
		return nil, err
	}
	if hook.byName != nil {
		r.notes = append(r.notes, r.name+": commands sent in the window: "+hook.byName.top(8))
	}
	s.Shutdown()

	end := start.Add(cfg.window)
	n := min(next.Load(), int64(len(recs)))
	if d := next.Load() - n; d > 0 {
		r.notes = append(r.notes, fmt.Sprintf("asynq: %d enqueues past the record buffer were not measured", d))
	}
	if e := enqErrs.Load(); e > 0 {
		r.notes = append(r.notes, fmt.Sprintf("asynq: %d enqueue errors", e))
	}
	var lags []fireLag
	for _, rec := range recs[:n] {
		at := time.Unix(0, rec.at)
		f := first[rec.seq]
		if at.Before(f) {
			continue
		}
		slot := p.lastSlot(f, at)
		if slot.Before(start) || !slot.Before(end) {
			continue
		}
		lags = append(lags, fireLag{trigger: slot, lag: at.Sub(slot)})
	}
	r.finishLags(lags)
	w.fill(r)
	return r, nil
}

// parseSeq reads N from a payload {"seq":N} without a JSON decoder, so that
// measuring costs asynq next to nothing.
func parseSeq(b []byte) int {
	_, rest, _ := bytes.Cut(b, []byte(":"))
	rest, _, _ = bytes.Cut(rest, []byte("}"))
	n, _ := strconv.Atoi(string(rest))
	return n
}

// quietLogger drops asynq's log lines. At Shutdown, asynq logs an error
// that it cannot close a client it was given (which is intended); nothing
// else reaches it at ErrorLevel in a healthy run, and enqueue errors are
// counted through PostEnqueueFunc instead.
type quietLogger struct{}

func (quietLogger) Debug(...any) {}
func (quietLogger) Info(...any)  {}
func (quietLogger) Warn(...any)  {}
func (quietLogger) Error(...any) {}
func (quietLogger) Fatal(...any) {}
