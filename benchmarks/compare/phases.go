package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The phases, in the order a round runs them.
const (
	phaseEnqueue = "enqueue"
	phaseProcess = "process"
	phaseE2E     = "e2e"
	phaseLatency = "latency"
)

var allPhases = []string{phaseEnqueue, phaseProcess, phaseE2E, phaseLatency}

// bench is one measured run of one system in one phase: a fresh Redis
// client (with a round-trip counter) on a flushed database.
type bench struct {
	cfg   *config
	admin *redis.Client
	sys   system
	rt    *roundTrips
	pad   string
	// redisPID is the private redis-server's process, 0 for an external one.
	redisPID int
	// prof, if set, profiles the measured part: the end-to-end run, or the
	// enqueue with the most producers.
	prof *profiler
}

// values are the figures one bench produced, by metric.
type values map[string]float64

func (b *bench) flush(ctx context.Context) error {
	if err := b.admin.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("FLUSHALL: %w", err)
	}
	return nil
}

func (b *bench) args(seq int) benchArgs { return benchArgs{Seq: seq, Pad: b.pad} }

// producerSplitter is a system whose producers each get their own client
// (chronos with a Client per producer).
type producerSplitter interface {
	producer() system
}

// enqueueAll enqueues tasks 0..n-1 from clients goroutines that share the
// system's client, as the handlers of a web service would.
func (b *bench) enqueueAll(ctx context.Context, n, clients int) error {
	clients = max(clients, 1)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients) // one per goroutine at most
	for range clients {
		sys := b.sys
		if ps, ok := sys.(producerSplitter); ok {
			sys = ps.producer()
		}
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := sys.enqueue(ctx, b.args(i)); err != nil {
					errs <- fmt.Errorf("enqueue task %d: %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs // nil if none
}

// warmUp runs the enqueue path a little, so that the pool's connections are
// dialled and the scripts loaded before anything is timed, then empties
// Redis again.
func (b *bench) warmUp(ctx context.Context) error {
	if err := b.enqueueAll(ctx, min(200, b.cfg.tasks), b.cfg.clients); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	return b.flush(ctx)
}

// sample takes a sample. With prof it also reads Redis's command
// statistics and starts the CPU profile, or stops it if it runs: the
// profile covers the part between a pair of such samples.
func (b *bench) sample(ctx context.Context, prof bool) (sample, error) {
	prof = prof && b.prof != nil
	starting := prof && !b.prof.running
	if prof && !starting {
		b.prof.stop()
	}
	s, err := takeSample(ctx, b.admin, b.rt, b.redisPID, prof)
	if err == nil && starting {
		err = b.prof.start()
	}
	return s, err
}

// enqueue measures enqueue throughput with each of cfg.enqueueClients
// producers: -serial tasks from one, -tasks from more. Allocations, round
// trips and CPU per task come from the one-producer part and from the part
// with the most producers.
func (b *bench) enqueue(ctx context.Context) (values, error) {
	v := values{}
	most := slices.Max(b.cfg.enqueueClients)
	for i, p := range b.cfg.enqueueClients {
		if i > 0 {
			if err := b.flush(ctx); err != nil {
				return nil, err
			}
		}
		n := b.cfg.tasks
		if p == 1 {
			n = b.cfg.serial
		}
		prof := p == most && b.prof != nil
		s0, err := b.sample(ctx, prof)
		if err != nil {
			return nil, err
		}
		if err := b.enqueueAll(ctx, n, p); err != nil {
			return nil, err
		}
		s1, err := b.sample(ctx, prof)
		if err != nil {
			return nil, err
		}
		u := since(s0, s1, n)
		if prof {
			b.prof.add(n, s0, s1)
		}
		v[enqKey(p)] = rate(n, u.elapsed)
		if p == 1 {
			v[mEnqAllocs1] = u.allocsPerTask
			v[mEnqBytes1] = u.bytesPerTask
			v[mEnqTrips1] = u.tripsPerTask
			v[mEnqCPU1] = micros(u.cpuPerTask)
			v[mEnqRedisCPU1] = micros(u.redisCPUPerTsk)
		}
		if p == most {
			v[mEnqAllocsN] = u.allocsPerTask
			v[mEnqTripsN] = u.tripsPerTask
			v[mEnqCPUN] = micros(u.cpuPerTask)
			v[mEnqRedisCPUN] = micros(u.redisCPUPerTsk)
		}
	}
	return v, nil
}

// process measures draining a pre-filled queue: from starting the server
// until its handlers have run every task.
func (b *bench) process(ctx context.Context) (values, error) {
	n := b.cfg.tasks
	if err := b.enqueueAll(ctx, n, b.cfg.clients); err != nil {
		return nil, fmt.Errorf("pre-fill: %w", err)
	}
	tr := newTracker(n, false)
	s0, err := b.sample(ctx, false)
	if err != nil {
		return nil, err
	}
	stop, err := b.sys.serve(ctx, b.cfg.concurrency, tr.handle)
	if err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	werr := tr.wait(ctx)
	s1, err := b.sample(ctx, false)
	if serr := stop(context.WithoutCancel(ctx)); serr != nil && werr == nil {
		werr = fmt.Errorf("shutdown: %w", serr)
	}
	if werr != nil {
		return nil, werr
	}
	if err != nil {
		return nil, err
	}
	u := since(s0, s1, n)
	return values{
		mProc:         rate(n, u.elapsed),
		mProcAllocs:   u.allocsPerTask,
		mProcBytes:    u.bytesPerTask,
		mProcTrips:    u.tripsPerTask,
		mProcCPU:      micros(u.cpuPerTask),
		mProcRedisCPU: micros(u.redisCPUPerTsk),
		mProcDups:     float64(tr.dups.Load()),
	}.withWait(mProcRedisWait, u), nil
}

// e2e measures enqueueing cfg.tasks while the server runs: from the first
// enqueue until the last task's handler has run.
func (b *bench) e2e(ctx context.Context) (values, error) {
	n := b.cfg.tasks
	tr := newTracker(n, false)
	stop, err := b.sys.serve(ctx, b.cfg.concurrency, tr.handle)
	if err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	defer func() { _ = stop(context.WithoutCancel(ctx)) }()
	prof := b.prof != nil
	s0, err := b.sample(ctx, prof)
	if err != nil {
		return nil, err
	}
	if err := b.enqueueAll(ctx, n, b.cfg.clients); err != nil {
		return nil, err
	}
	enqueued := time.Since(s0.at)
	if err := tr.wait(ctx); err != nil {
		return nil, err
	}
	s1, err := b.sample(ctx, prof)
	if err != nil {
		return nil, err
	}
	u := since(s0, s1, n)
	if prof {
		b.prof.add(n, s0, s1)
	}
	return values{
		mE2EAllocs:   u.allocsPerTask,
		mE2EBytes:    u.bytesPerTask,
		mE2E:         rate(n, u.elapsed),
		mE2EEnqueue:  rate(n, enqueued),
		mE2ETrips:    u.tripsPerTask,
		mE2ECPU:      micros(u.cpuPerTask),
		mE2ERedisCPU: micros(u.redisCPUPerTsk),
		mE2ETotalCPU: micros(u.cpuPerTask + u.redisCPUPerTsk),
		mE2EDups:     float64(tr.dups.Load()),
	}.withWait(mE2ERedisWait, u), nil
}

// latency measures enqueue-to-start latency at a light, steady load: after
// the idle server has settled, one task every 1/cfg.rate seconds for
// cfg.duration, timed from just before Enqueue is called until its handler
// starts.
func (b *bench) latency(ctx context.Context) (values, error) {
	n := max(int(b.cfg.duration.Seconds()*float64(b.cfg.rate)), 1)
	interval := time.Duration(float64(time.Second) / float64(b.cfg.rate))
	tr := newTracker(n, true)
	stop, err := b.sys.serve(ctx, b.cfg.concurrency, tr.handle)
	if err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	defer func() { _ = stop(context.WithoutCancel(ctx)) }()
	if err := sleep(ctx, b.cfg.settle); err != nil {
		return nil, err
	}
	sent := make([]int64, n)
	start := time.Now()
	for i := range n {
		if err := sleep(ctx, time.Until(start.Add(time.Duration(i)*interval))); err != nil {
			return nil, err
		}
		sent[i] = time.Now().UnixNano()
		if err := b.sys.enqueue(ctx, b.args(i)); err != nil {
			return nil, fmt.Errorf("enqueue task %d: %w", i, err)
		}
	}
	if err := tr.wait(ctx); err != nil {
		return nil, err
	}
	lat := make([]time.Duration, n)
	for i := range n {
		lat[i] = time.Duration(tr.started[i].Load() - sent[i])
	}
	slices.Sort(lat)
	return values{
		mLatP50: millis(percentile(lat, 50)),
		mLatP99: millis(percentile(lat, 99)),
		mLatMax: millis(lat[n-1]),
	}, nil
}

// withWait adds redis-server's run-queue wait share as m, when known.
func (v values) withWait(m string, u usage) values {
	if u.redisWaitShare >= 0 {
		v[m] = u.redisWaitShare
	}
	return v
}

// percentile returns the p-th percentile of sorted by the nearest-rank
// method.
func percentile(sorted []time.Duration, p int) time.Duration {
	k := (p*len(sorted) + 99) / 100 // ceil(p/100 × n)
	return sorted[max(k-1, 0)]
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
