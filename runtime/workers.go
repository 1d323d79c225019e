package chronos

// A started Server runs its handlers on Concurrency long-lived worker
// goroutines, fed through a channel, rather than on a goroutine per
// delivery. A new goroutine starts on a small stack, which decoding and
// go-redis then grew again for every task: runtime.newstack and copystack
// took about 8% of a busy server's CPU. A worker's stack grows once.
//
// The slots keep their meaning: the fetcher and the local loop take a slot
// before they hand over a job, and the job gives it back when its handler
// has returned. So at most Concurrency jobs wait in the channel (of that
// capacity) or run a handler, and the channel never makes the fetcher
// wait unless every worker is still writing an outcome.
// Shutdown closes the channel once the fetcher and the local loop have
// returned; each worker exits after its current job.

// job is one unit of work: a delivery taken from Redis, or a task run in
// process (server_local.go).
type job struct {
	d *delivery
	t *localTask
}

// startWorkers starts the workers; Start calls it. There are twice as
// many as slots: a delivery frees its slot when its handler returns and
// keeps its worker until its outcome is written (work.go), so up to
// Concurrency handlers run while as many outcomes are on their way.
func (s *Server) startWorkers() {
	s.jobs = make(chan job, s.cfg.Concurrency)
	for range 2 * s.cfg.Concurrency {
		go s.worker()
	}
}

// worker runs jobs until the channel is closed.
func (s *Server) worker() {
	for j := range s.jobs {
		if j.d != nil {
			s.work(j.d)
		} else {
			s.workLocal(j.t)
		}
	}
}

// hand gives j to a worker. The caller has taken a slot for it, which the
// job gives back when it ends.
func (s *Server) hand(j job) {
	s.workers.Add(1)
	s.jobs <- j
}

// stopWorkers lets the workers exit once their current jobs end; nothing
// may be handed over after it.
func (s *Server) stopWorkers() {
	close(s.jobs)
}
