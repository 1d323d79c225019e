package chronos

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/runtime/internal/firing"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// Isolated schedules (WithIsolated) fire on every live instance and run on
// the instance that fired them. Each instance fires the isolated schedules
// it declares itself, from its own firing loop, whether or not it is the
// leader, into its own queue:
//
//	isolated:<instance ID>
//
// with the dedup key <schedule>:<instance>:<trigger unix>. Every Server in
// the same process and namespace serves that queue as well as its
// configured ones, without configuration: the scheduler records the queue
// in a process-wide table when an isolated schedule is registered, and
// Server.Start adds the queues it finds there (at the highest weight).
// Register schedules before starting the Server, as the generated
// RegisterChronosJobs does. When a Scheduler shuts down, the leader later
// deletes its queue (the instance is gone); the Servers then stop serving
// it rather than recreate it.
//
// The trigger state of an isolated schedule lives in the instance's memory:
// a new process starts from its first fire time after Start, because the
// local work of an instance that is gone cannot be done by another one.
// Within a process, stalls and clock jumps are caught up per the misfire
// policy like any schedule.

// IsolatedQueue is the queue this instance's isolated schedules enqueue to.
func (s *Scheduler) IsolatedQueue() string { return "isolated:" + s.cfg.InstanceID }

var isolatedQueues struct {
	mu sync.Mutex
	m  map[string][]string // namespace → queues
}

func registerIsolatedQueue(ns, queue string) {
	isolatedQueues.mu.Lock()
	defer isolatedQueues.mu.Unlock()
	if isolatedQueues.m == nil {
		isolatedQueues.m = map[string][]string{}
	}
	if !slices.Contains(isolatedQueues.m[ns], queue) {
		isolatedQueues.m[ns] = append(isolatedQueues.m[ns], queue)
	}
}

// unregisterIsolatedQueue removes queue once its scheduler has shut down,
// so Servers started later in the process do not serve it.
func unregisterIsolatedQueue(ns, queue string) {
	isolatedQueues.mu.Lock()
	defer isolatedQueues.mu.Unlock()
	isolatedQueues.m[ns] = slices.DeleteFunc(isolatedQueues.m[ns], func(q string) bool { return q == queue })
}

// IsolatedQueues returns the isolated queues of namespace ns ("" is the
// default) registered by Schedulers in this process. Server.Start serves
// them; it is exported for servers configured by hand elsewhere.
func IsolatedQueues(ns string) []string {
	if ns == "" {
		ns = "chronos"
	}
	isolatedQueues.mu.Lock()
	defer isolatedQueues.mu.Unlock()
	return slices.Clone(isolatedQueues.m[ns])
}

// addIsolatedQueues makes s also serve this process's isolated queues, at
// the highest configured weight. Server.Start calls it before creating the
// consumer groups.
func (s *Server) addIsolatedQueues() {
	top := 1
	for _, w := range s.weights {
		top = max(top, w)
	}
	for _, q := range IsolatedQueues(s.cfg.Namespace) {
		if slices.Contains(s.queues, q) {
			continue
		}
		s.queues = append([]string{q}, s.queues...)
		s.weights = append([]int{top}, s.weights...)
		if s.isolated == nil {
			s.isolated = map[string]bool{}
		}
		s.isolated[q] = true
	}
}

// dropStoppedIsolatedQueues stops serving the isolated queues whose
// Scheduler in this process has shut down, and returns them. The fetcher
// calls it when a queue's consumer group is missing: the leader deletes
// the isolated queue of an instance that is gone, and recreating it for
// the group would leave a queue nobody fires into or cleans up.
func (s *Server) dropStoppedIsolatedQueues() []string {
	if len(s.isolated) == 0 {
		return nil
	}
	live := IsolatedQueues(s.cfg.Namespace)
	var dropped []string
	queues := make([]string, 0, len(s.queues))
	weights := make([]int, 0, len(s.weights))
	for i, q := range s.queues {
		if s.isolated[q] && !slices.Contains(live, q) {
			dropped = append(dropped, q)
			continue
		}
		queues = append(queues, q)
		weights = append(weights, s.weights[i])
	}
	if len(dropped) == 0 {
		return nil
	}
	s.queuesMu.Lock()
	s.queues, s.weights = queues, weights
	s.queuesMu.Unlock()
	for _, q := range dropped {
		delete(s.isolated, q)
	}
	return dropped
}

// servedQueues returns the queues the server reads, for goroutines other
// than the fetcher. The slice is never changed in place, only replaced.
func (s *Server) servedQueues() []string {
	s.queuesMu.RLock()
	defer s.queuesMu.RUnlock()
	return s.queues
}

// isolatedRunner fires this instance's isolated schedules.
type isolatedRunner struct {
	s       *Scheduler
	mu      sync.Mutex
	entries map[string]*schedEntry
	loop    *firing.Loop
}

func newIsolatedRunner(s *Scheduler, defs []schedstore.Definition) *isolatedRunner {
	r := &isolatedRunner{s: s, entries: map[string]*schedEntry{}}
	r.loop = firing.New(firing.Config{Fire: r.onFire, Clock: s.clock})
	now := s.now()
	for _, d := range defs {
		p, err := compile(d, now)
		if err != nil { // checked at registration; cannot happen
			s.log.Error("chronos: isolated schedule cannot be fired", "schedule", d.ID, "err", err)
			continue
		}
		e := &schedEntry{id: d.ID, plan: p, state: trigger.Initial(p.trig)}
		r.entries[d.ID] = e
		if !e.state.Complete {
			r.loop.SetAt(d.ID, e.nextFunc(), e.state.Next)
		}
	}
	return r
}

func (r *isolatedRunner) run(ctx context.Context) { _ = r.loop.Run(ctx) }

func (r *isolatedRunner) onFire(ctx context.Context, now time.Time, batch []firing.Due) {
	s := r.s
	var reqs []*fireReq
	r.mu.Lock()
	for _, d := range batch {
		e := r.entries[d.ID]
		if e == nil {
			continue
		}
		res := s.catchup(e, now)
		for _, f := range res.Fires {
			reqs = append(reqs, &fireReq{id: e.id, plan: e.plan, slot: f.Scheduled, at: f.At,
				dedup: e.id + ":" + s.cfg.InstanceID + ":" + strconv.FormatInt(f.Scheduled.Unix(), 10), source: "isolated"})
		}
		e.state = res.State
		if e.state.Complete {
			r.loop.Remove(e.id)
		} else {
			r.loop.SetAt(e.id, e.nextFunc(), e.state.Next)
		}
	}
	r.mu.Unlock()
	for i, res := range s.fire(ctx, leader.Term{}, reqs) {
		if res.Err != nil && ctx.Err() == nil {
			s.log.Warn("chronos: isolated firing failed", "schedule", reqs[i].id, "trigger", reqs[i].slot, "err", res.Err)
		}
	}
}

// isolatedIndexKey is the set of instance IDs that have an isolated queue,
// so the leader can delete the queues of instances that are gone.
func (s *Scheduler) isolatedIndexKey() string { return s.queue.K.Prefix() + "isolated-instances" }

// dropDeadIsolatedQueues deletes the isolated queues (stream and delayed
// set) of instances that are no longer live: their tasks are local work
// that no other instance can do, and every process start makes a new
// queue. The leader runs it after each sweep.
func (ss *session) dropDeadIsolatedQueues(ctx context.Context) {
	s := ss.s
	ids, err := s.client.SMembers(ctx, s.isolatedIndexKey()).Result()
	if err != nil || len(ids) == 0 {
		return
	}
	live, err := s.store.Instances(ctx)
	if err != nil {
		return
	}
	alive := make(map[string]bool, len(live))
	for _, in := range live {
		alive[in.ID] = true
	}
	for _, id := range ids {
		if alive[id] {
			continue
		}
		q := "isolated:" + id
		_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, s.queue.K.Stream(q), s.queue.K.Delayed(q))
			p.SRem(ctx, s.isolatedIndexKey(), id)
			return nil
		})
		if err != nil {
			s.log.Warn("chronos: leader: delete the isolated queue of a gone instance", "queue", q, "err", err)
			continue
		}
		s.log.Info("chronos: leader: deleted the isolated queue of a gone instance", "queue", q)
	}
}
