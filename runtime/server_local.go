package chronos

import (
	"context"
	"sync"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// Isolated schedules (WithIsolated) run in process. The Scheduler of each
// instance fires its isolated schedules from its own timer and hands every
// firing to the Server named by SchedulerConfig.Server, which runs it on
// its workers like a queued task: the same handler, timeout, deadline,
// retries with backoff, task logs, metrics and run records. It never goes
// through Redis: the work is the instance's own (log collection, a local
// cache refresh), so it runs while Redis is unreachable, and nothing
// another instance does can delete or take it. What differs from queued
// work, by design:
//
//   - A retry waits in this process, not in Redis. A process that stops
//     with local tasks unfinished or waiting to retry drops them, with a
//     warning: their work belonged to the instance that is going away.
//   - A task that exhausts its retries is logged, reported to the
//     ErrorHandler and recorded as dead in its run records, but does not
//     enter the dead letters, which hold queued work another instance
//     could requeue.
//   - Its queue is LocalQueue; its run records carry the instance that ran
//     it and are written once Redis answers (up to localOutboxLimit wait
//     meanwhile; past that the oldest are dropped, and the log says so).

// LocalQueue is the queue name of tasks run in process (isolated
// schedules): Task.Queue, the task logs, run records and the queue label
// of Metrics say LocalQueue, and a Server refuses to serve a Redis queue of
// that name.
const LocalQueue = "local"

// localOutboxLimit bounds the run records of local tasks kept while Redis
// is unreachable.
const localOutboxLimit = 10000

// localTask is one task to run in process.
type localTask struct {
	m        *rdb.Message
	ready    time.Time // when it became ready: its firing, or the end of its retry's backoff
	instance string    // the scheduler instance that fired it
}

// localTasks is a Server's intake of local tasks: those waiting for a
// worker, and those waiting for their retry.
type localTasks struct {
	mu      sync.Mutex
	ready   []*localTask
	retries map[*localTask]*time.Timer
	closed  bool
	wake    chan struct{}
}

func newLocalTasks() *localTasks {
	return &localTasks{retries: map[*localTask]*time.Timer{}, wake: make(chan struct{}, 1)}
}

// push adds t to the tasks ready to run. It reports false once the server
// has shut down.
func (l *localTasks) push(t *localTask) bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	l.ready = append(l.ready, t)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return true
}

// pop takes the next ready task, or returns nil.
func (l *localTasks) pop() *localTask {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ready) == 0 {
		return nil
	}
	t := l.ready[0]
	l.ready = l.ready[1:]
	return t
}

// retryAt makes t ready again at due.
func (l *localTasks) retryAt(t *localTask, due time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.retries[t] = time.AfterFunc(time.Until(due), func() {
		l.mu.Lock()
		delete(l.retries, t)
		l.mu.Unlock()
		t.ready = due
		l.push(t)
	})
}

// close refuses further tasks and returns how many were dropped: ready and
// waiting for a retry.
func (l *localTasks) close() (ready, retrying int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for t, timer := range l.retries {
		if timer.Stop() {
			retrying++
		}
		delete(l.retries, t)
	}
	ready = len(l.ready)
	l.ready = nil
	return ready, retrying
}

// runLocal takes a task to run in process. It never blocks and needs no
// Redis; before Start it waits for the server to start.
func (s *Server) runLocal(t *localTask) {
	if !s.local.push(t) {
		s.taskLog.Warn("isolated task not run: the server has shut down",
			"kind", t.m.Kind, "task_id", t.m.ID, "schedule", t.m.ScheduleID)
	}
}

// localLoop starts local tasks on free worker slots until Shutdown.
func (s *Server) localLoop() {
	defer s.loops.Done()
	for {
		t := s.local.pop()
		if t == nil {
			select {
			case <-s.stop:
				return
			case <-s.local.wake:
			}
			continue
		}
		select {
		case s.slots <- struct{}{}:
		case <-s.stop:
			s.local.push(t) // counted as dropped by Shutdown
			return
		}
		s.hand(job{t: t})
	}
}

// workLocal runs one local task on a worker, and frees its slot.
func (s *Server) workLocal(t *localTask) {
	defer s.workers.Done()
	defer func() { <-s.slots }()
	r := &run{m: t.m, queue: LocalQueue, start: s.now()}
	h, err := s.runnable(t.m, r.start)
	if err != nil {
		s.judge(r, err, true)
		s.finishLocal(t, r)
		return
	}
	if s.execute(h, r, t.ready, nil) {
		s.taskLog.Warn("isolated task interrupted by shutdown; it is not run again: its work belongs to this instance",
			"kind", t.m.Kind, "task_id", t.m.ID, "schedule", t.m.ScheduleID, "error", r.err.Error())
		return
	}
	if r.err == nil {
		r.outcome = rdb.Done
	} else {
		s.judge(r, r.err, false)
	}
	s.finishLocal(t, r)
}

// finishLocal logs, reports and records the outcome of a local run, and
// schedules its retry.
func (s *Server) finishLocal(t *localTask, r *run) {
	s.logOutcome(r)
	s.recordOutcome(r)
	if r.outcome != rdb.Done {
		s.reportFailure(r)
	}
	if s.cfg.RunRetention > 0 && r.m.Kind != "" {
		rec := runRecord(r)
		rec.Instance = t.instance
		kind, keep := r.m.Kind, s.cfg.RunRetention
		s.localRuns.add(func(ctx context.Context) error { return s.queue.AppendRun(ctx, kind, rec, keep) })
	}
	if r.outcome == rdb.Retry {
		s.local.retryAt(t, r.due)
	}
}

// stopLocal drops the local tasks not started by Shutdown and writes the
// run records still waiting, within ctx.
func (s *Server) stopLocal(ctx context.Context) {
	if ready, retrying := s.local.close(); ready+retrying > 0 {
		s.log.Warn("chronos: server stopped with isolated tasks not run; they are dropped with this instance",
			"ready", ready, "waiting_to_retry", retrying)
	}
	s.localRuns.flush(ctx)
	if n := s.localRuns.pending(); n > 0 {
		s.log.Warn("chronos: server stopped before Redis took the run records of isolated tasks", "lost", n)
	}
}
