package chronos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// entryKey identifies a stream entry: entry IDs are unique per stream only,
// and a queue has a stream in each partition.
type entryKey struct {
	part      int
	queue, id string
}

// delivery is one stream entry taken by this server, from fetch to finish.
type delivery struct {
	entry rdb.Entry

	mu     sync.Mutex
	cancel context.CancelCauseFunc // set while the handler runs
	lost   bool

	slotFreed bool // by freeSlot; only the delivery's worker reads and writes it
}

// markLost records that another consumer took the entry over and cancels
// the handler, if it runs.
func (d *delivery) markLost() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lost = true
	if d.cancel != nil {
		d.cancel(ErrLeaseLost)
	}
}

// setCancel installs the handler's cancel function, cancelling at once if
// the lease is already lost.
func (d *delivery) setCancel(c context.CancelCauseFunc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cancel = c
	if d.lost {
		c(ErrLeaseLost)
	}
}

// track registers entries as in flight, so that their leases are renewed
// from now on. An entry already in flight here (reclaimed by this server
// after a renewal failed) is dropped: its first delivery still runs.
func (s *Server) track(entries []rdb.Entry) []*delivery {
	if len(entries) == 0 {
		return nil
	}
	ds := make([]*delivery, 0, len(entries))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		k := entryKey{e.Partition, e.Queue, e.ID}
		if _, dup := s.inflight[k]; dup {
			continue
		}
		d := &delivery{entry: e}
		s.inflight[k] = d
		ds = append(ds, d)
	}
	return ds
}

func (s *Server) forget(d *delivery) {
	s.mu.Lock()
	if k := (entryKey{d.entry.Partition, d.entry.Queue, d.entry.ID}); s.inflight[k] == d {
		delete(s.inflight, k)
	}
	s.mu.Unlock()
}

// work runs one delivery on a worker (workers.go).
func (s *Server) work(d *delivery) {
	defer s.workers.Done()
	defer s.freeSlot(d)
	defer s.forget(d)
	s.process(d)
}

// freeSlot gives d's slot back, once. A delivery gives it back as soon as
// its handler returns, before its outcome is written: the slots bound the
// handlers that run (Concurrency), and the worker that waits for the
// outcome's round trip does not keep the fetcher from starting the next
// task meanwhile (workers.go).
func (s *Server) freeSlot(d *delivery) {
	if !d.slotFreed {
		d.slotFreed = true
		<-s.slots
	}
}

// run is one run of a task, from its start to its outcome, as logged and
// recorded.
type run struct {
	m       *rdb.Message
	queue   string // the queue it came from; "" for a task run in process (server_local.go)
	start   time.Time
	dur     time.Duration
	result  []byte
	err     error
	outcome rdb.Outcome
	due     time.Time // retry only
}

func (s *Server) process(d *delivery) {
	r := &run{start: s.now(), queue: d.entry.Queue}
	m, err := rdb.DecodeString(d.entry.Msg)
	if err != nil {
		raw, _ := json.Marshal(d.entry.Msg)
		r.m = &rdb.Message{ID: d.entry.ID, Queue: d.entry.Queue, Args: raw}
		s.fail(d, r, fmt.Errorf("%w: stored task is not valid: %w", ErrBadPayload, err), true)
		return
	}
	r.m = m
	if d.entry.Deliveries > int64(s.cfg.MaxDeliveries) {
		s.fail(d, r, fmt.Errorf("%w: %d deliveries, MaxDeliveries is %d", ErrTooManyDeliveries, d.entry.Deliveries, s.cfg.MaxDeliveries), true)
		return
	}
	h, err := s.runnable(m, r.start)
	if err != nil {
		s.fail(d, r, err, true)
		return
	}
	ready, _ := entryTime(d.entry.ID)
	interrupted := s.execute(h, r, ready, d.setCancel)
	s.freeSlot(d)
	if interrupted {
		// Interrupted by Shutdown, not failed: hand the task back for
		// another server to run at once, without spending an attempt.
		s.taskLog.Warn("task interrupted by shutdown; handed back to the queue",
			"kind", m.Kind, "task_id", m.ID, "queue", m.Queue, "error", r.err.Error())
		s.release(s.bgCtx, []*delivery{d})
		return
	}
	if r.err == nil {
		r.outcome = rdb.Done
		s.finish(d, r)
		return
	}
	s.fail(d, r, r.err, false)
}

// runnable returns the handler of m, or the error that sends m to the dead
// letters without a run: no handler for its kind, or its deadline passed.
func (s *Server) runnable(m *rdb.Message, start time.Time) (*handler, error) {
	h := s.mux.lookup(m.Kind)
	if h == nil {
		return nil, fmt.Errorf("%w %q", ErrNoHandler, m.Kind)
	}
	if m.Deadline != 0 && !start.Before(time.UnixMilli(m.Deadline)) {
		return nil, fmt.Errorf("%w before the run started (deadline %s)", ErrDeadlineExceeded, time.UnixMilli(m.Deadline).Format(time.RFC3339Nano))
	}
	return h, nil
}

// execute runs h for r.m, with the task's timeout (else the kind's) and
// deadline, logs and reports its start, and stores the handler's result,
// error and duration in r. ready is when the task became ready, for the
// wait metric. watch, if set, receives the handler's cancel function (a
// delivery cancels it when its lease is lost). It reports whether Shutdown
// interrupted the run, which is then no attempt.
func (s *Server) execute(h *handler, r *run, ready time.Time, watch func(context.CancelCauseFunc)) (interrupted bool) {
	m := r.m
	ctx, cancel := context.WithCancelCause(s.handlerCtx)
	defer cancel(nil)
	if watch != nil {
		watch(cancel)
	}
	timeout := time.Duration(m.Timeout) * time.Millisecond
	if timeout <= 0 {
		timeout = h.timeout
	}
	if timeout > 0 {
		var c context.CancelFunc
		ctx, c = context.WithTimeout(ctx, timeout)
		defer c()
	}
	if m.Deadline != 0 {
		var c context.CancelFunc
		ctx, c = context.WithDeadline(ctx, time.UnixMilli(m.Deadline))
		defer c()
	}
	s.recordStart(r.queue, m.Kind, ready, r.start)
	s.logStart(ctx, m)
	r.result, r.err = call(ctx, h, m)
	r.dur = s.now().Sub(r.start)
	return r.err != nil && errors.Is(context.Cause(ctx), ErrServerShutdown)
}

// call runs the handler, turning a panic into a *PanicError.
func call(ctx context.Context, h *handler, m *rdb.Message) (result []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: string(debug.Stack())}
		}
	}()
	return h.run(ctx, m)
}

// fail records a failed delivery, retried or dead as judge decides.
func (s *Server) fail(d *delivery, r *run, err error, final bool) {
	s.judge(r, err, final)
	if s.finish(d, r) {
		s.reportFailure(r)
	}
}

// judge decides what becomes of a failed run: a retry at r.due or the dead
// letters (r.outcome), with the attempt counted and recorded in r.m. final
// means no run happened that could be retried.
func (s *Server) judge(r *run, err error, final bool) {
	m := r.m
	r.err = err
	errText := err.Error()
	var pe *PanicError
	if errors.As(err, &pe) {
		errText += "\n" + pe.Stack
	}
	if !final {
		m.Attempt++
	}
	m.AddAttempt(rdb.Attempt{At: r.start.UnixMilli(), Duration: r.dur.Milliseconds(), Error: errText})
	now := s.now()
	dead := final || errors.Is(err, ErrSkipRetry) || errors.Is(err, ErrBadPayload) || m.Attempt > m.MaxRetry
	if !dead && m.Deadline != 0 && !now.Before(time.UnixMilli(m.Deadline)) {
		dead = true
		r.err = fmt.Errorf("%w: %w", ErrDeadlineExceeded, err)
	}
	if !dead {
		b := s.cfg.Backoff
		if h := s.mux.lookup(m.Kind); h != nil && h.backoff != nil {
			b = h.backoff
		}
		r.due = now.Add(b(m.Attempt))
		if m.Deadline != 0 && !r.due.Before(time.UnixMilli(m.Deadline)) {
			dead = true
			r.err = fmt.Errorf("%w: no retry fits before it: %w", ErrDeadlineExceeded, err)
		}
	}
	if dead {
		r.outcome = rdb.Dead
		m.Reason = r.err.Error()
		m.DiedAt = now.UnixMilli()
	} else {
		r.outcome = rdb.Retry
	}
}

// reportFailure calls ServerConfig.ErrorHandler for a failed run whose
// outcome was recorded.
func (s *Server) reportFailure(r *run) {
	if s.cfg.ErrorHandler == nil {
		return
	}
	m := r.m
	s.cfg.ErrorHandler(s.handlerCtx, &TaskInfo{
		ID: m.ID, Kind: m.Kind, Queue: m.Queue, MaxRetry: m.MaxRetry, Attempt: max(m.Attempt, 1),
		ProcessAt: r.due,
	}, r.err)
}

// finish writes the outcome to Redis, retrying while Redis is unreachable
// for up to the visibility timeout (the lease is renewed meanwhile), and
// logs it. It reports whether this delivery's outcome was recorded.
func (s *Server) finish(d *delivery, r *run) bool {
	f := &rdb.Finish{
		Partition: d.entry.Partition,
		Queue:     d.entry.Queue,
		EntryID:   d.entry.ID,
		Outcome:   r.outcome,
		TaskID:    r.m.ID,
		Kind:      r.m.Kind,
		RunsCap:   max(s.cfg.RunRetention, 0),
		DeadCap:   s.cfg.DeadRetention,
		Overlap:   r.m.Overlap,
	}
	switch r.outcome {
	case rdb.Retry:
		f.At = r.due
	case rdb.Dead:
		f.At = time.UnixMilli(r.m.DiedAt)
	}
	if r.outcome != rdb.Done {
		b, err := r.m.Encode()
		if err != nil { // cannot happen for a message decoded from JSON
			s.log.Error("chronos: encode failed task", "task_id", r.m.ID, "error", err)
			return false
		}
		f.Msg = b
	}
	// An undecodable task has no kind to file its record under; successes
	// are spaced by SuccessRunInterval (runsample.go).
	if f.RunsCap > 0 && r.m.Kind != "" && s.runs.keep(r, s.now()) {
		f.Run = runRecord(r)
	}
	deadline := s.now().Add(s.cfg.VisibilityTimeout)
	delay := 50 * time.Millisecond
	for {
		// The client's own read and write timeouts bound each attempt.
		res, err := s.finisher.Finish(s.bgCtx, s.consumer, f)
		if err == nil {
			switch res {
			case rdb.Finished:
				s.logOutcome(r)
				s.recordOutcome(r)
				return true
			case rdb.LeaseLost:
				s.taskLog.Warn("task outcome discarded: another worker took the task over after its lease expired",
					"kind", r.m.Kind, "task_id", r.m.ID, "queue", r.m.Queue, "outcome", string(r.outcome))
			default:
				s.taskLog.Warn("task outcome discarded: the task was already finished by another worker",
					"kind", r.m.Kind, "task_id", r.m.ID, "queue", r.m.Queue, "outcome", string(r.outcome))
			}
			return false
		}
		if !s.now().Before(deadline) {
			s.log.Error("chronos: record task outcome; the task will be recovered and run again", "task_id", r.m.ID, "error", err)
			return false
		}
		s.log.Warn("chronos: record task outcome; retrying", "task_id", r.m.ID, "error", err)
		time.Sleep(delay)
		delay = min(2*delay, time.Second)
	}
}

// runRecord is the run record of r.
func runRecord(r *run) *rdb.RunRecord {
	rec := &rdb.RunRecord{
		TaskID: r.m.ID, Queue: r.m.Queue, Status: rdb.RunSuccess, Attempt: r.m.Attempt,
		Start: r.start, Duration: r.dur, ScheduleID: r.m.ScheduleID,
	}
	switch r.outcome {
	case rdb.Retry:
		rec.Status = rdb.RunRetry
	case rdb.Dead:
		rec.Status = rdb.RunDead
	default:
		rec.Attempt++ // a success is not counted in m.Attempt
	}
	rec.Attempt = max(rec.Attempt, 1)
	if r.m.ScheduleID != "" {
		rec.TriggerTime = time.UnixMilli(r.m.TriggerTime)
	}
	if r.err != nil {
		rec.Error = r.err.Error()
	} else {
		rec.Result = r.result
	}
	return rec
}
