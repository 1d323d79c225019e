package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

// config is what the demo's flags set.
type config struct {
	Duration  time.Duration // total run time; the leader is stopped halfway
	Instances int           // cluster size (at least 2, so there is someone to take over)
	RedisURL  string        // "" starts the embedded demo-only Redis
	Quiet     bool          // print only the header and the summary
}

// clusterSchedule is the cluster-once schedule of the healthcheck example
// that the demo checks for exactly-once firing.
const (
	clusterSchedule = "healthcheck.Monitor.Cluster"
	clusterEvery    = 2 * time.Second
)

// leaderPoll is how often the demo asks who leads; it bounds the precision
// of the measured handoff time.
const leaderPoll = 10 * time.Millisecond

// summary is what the demo found.
type summary struct {
	Fired      int           // firings of the cluster schedule in the scheduler's history
	Triggers   int           // distinct triggers of the cluster schedule that ran
	Duplicates int           // triggers that ran as more than one task
	Missed     int           // triggers between the first and the last that never ran
	LocalRuns  int           // runs of the isolated local check, all instances
	LocalDups  int           // local triggers of one instance that ran as more than one task
	Stopped    string        // the leader the demo stopped
	NewLeader  string        // who took over
	Handoff    time.Duration // from the start of the stop to the new leader, to within leaderPoll
}

// OK reports whether the run showed what chronos promises.
func (s summary) OK() bool {
	return s.Triggers > 0 && s.Duplicates == 0 && s.LocalDups == 0 && s.Missed == 0 &&
		s.Fired == s.Triggers && s.NewLeader != ""
}

// run runs the demo until cfg.Duration has passed or ctx is done.
func run(ctx context.Context, cfg config, out io.Writer) (summary, error) {
	if cfg.Duration <= 0 {
		cfg.Duration = 24 * time.Second
	}
	cfg.Instances = max(cfg.Instances, 2)
	b, err := openBackend(cfg.RedisURL)
	if err != nil {
		return summary{}, err
	}
	defer b.close()

	// A namespace of its own, so that a shared Redis's other data and an
	// earlier demo's registry play no part.
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	ns := "chronos-demo-" + hex.EncodeToString(rnd[:])

	rec := newRecorder(out, cfg.Quiet)
	rec.say("chronos demo: the healthcheck example as a %d-instance cluster in one process, for %v", cfg.Instances, cfg.Duration)
	rec.say("redis: %s", b.label)
	rec.say("namespace %s; the leader is stopped at %v", ns, cfg.Duration/2)
	rec.say("(each instance runs its isolated local check itself, in process, whatever the leader does)")
	rec.say("schedules: cluster = %s (every=2s, once per cluster), local = healthcheck.Monitor.Local (every=5s isolated=true)", clusterSchedule)
	rec.say("")

	// The runtime's own records: warnings and errors only, or the demo's
	// lines drown.
	log := slog.New(slog.NewTextHandler(rec.out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	insp := chronos.NewInspector(b.newClient(), chronos.WithNamespace(ns))

	instances := make([]*instance, 0, cfg.Instances)
	stopAll := func() error {
		var errs []error
		for _, in := range instances {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			errs = append(errs, in.stop(sctx))
			cancel()
		}
		return errors.Join(errs...)
	}
	for i := range cfg.Instances {
		in, err := startInstance(ctx, b, ns, fmt.Sprintf("node-%d", i+1), rec, log)
		if err != nil {
			return summary{}, errors.Join(err, stopAll())
		}
		instances = append(instances, in)
	}

	// The leader watcher: owned by run, stopped before it returns.
	var (
		wg       sync.WaitGroup
		handoff  = make(chan leaderSeen, 1) // the first leader after the stop
		stopping struct {
			sync.Mutex
			id string
			at time.Time
		}
	)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	wg.Go(func() {
		t := time.NewTicker(leaderPoll)
		defer t.Stop()
		for {
			li, err := insp.SchedulerLeader(watchCtx)
			if err == nil {
				id := ""
				if li != nil {
					id = li.InstanceID
				}
				if rec.setLeader(id) {
					if id == "" {
						rec.printf("leader   none")
					} else {
						rec.printf("leader   %s (epoch %d)", id, li.Epoch)
					}
					stopping.Lock()
					if stopping.id != "" && id != "" && id != stopping.id {
						select {
						case handoff <- leaderSeen{id, time.Now()}:
						default:
						}
					}
					stopping.Unlock()
				}
			}
			select {
			case <-watchCtx.Done():
				return
			case <-t.C:
			}
		}
	})

	var sum summary
	sleep(ctx, cfg.Duration/2)
	if ctx.Err() == nil {
		sum.Stopped, sum.NewLeader, sum.Handoff = stopLeader(ctx, insp, rec, instances, &stopping, handoff)
	}
	sleep(ctx, cfg.Duration-cfg.Duration/2)
	if ctx.Err() != nil {
		rec.printf("interrupted: stopping early")
	}

	// The end: stop firing everywhere, let the queue drain, then stop the
	// servers, so that every trigger fired has had its chance to run.
	var errs []error
	for _, in := range instances {
		if !in.stopped {
			errs = append(errs, in.sched.Shutdown(context.Background()))
		}
	}
	stopWatch()
	wg.Wait()
	hist, err := insp.ScheduleHistory(context.Background(), clusterSchedule, 1000)
	errs = append(errs, err)
	var fired []time.Time
	for _, h := range hist {
		fired = append(fired, h.Trigger)
	}
	drain(rec, fired, 5*time.Second)
	errs = append(errs, stopAll())

	rec.mu.Lock()
	sum.Fired = len(fired)
	sum.Triggers = len(rec.cluster)
	var trigs []time.Time
	for t, tasks := range rec.cluster {
		trigs = append(trigs, t)
		if len(tasks) > 1 {
			sum.Duplicates++
		}
	}
	if len(trigs) > 0 {
		slices.SortFunc(trigs, time.Time.Compare)
		want := int(trigs[len(trigs)-1].Sub(trigs[0])/clusterEvery) + 1
		sum.Missed = want - len(trigs)
	}
	for _, tasks := range rec.local {
		sum.LocalRuns += len(tasks)
		if len(tasks) > 1 {
			sum.LocalDups++
		}
	}
	rec.mu.Unlock()
	printSummary(rec, sum)
	return sum, errors.Join(errs...)
}

// leaderSeen is a leader as the watcher first saw it.
type leaderSeen struct {
	id string
	at time.Time
}

// stopLeader stops the current leader as a replica is stopped on SIGTERM
// and waits (up to a lease and a bit) for another instance to lead.
func stopLeader(ctx context.Context, insp *chronos.Inspector, rec *recorder, instances []*instance,
	stopping *struct {
		sync.Mutex
		id string
		at time.Time
	}, handoff <-chan leaderSeen) (stopped, next string, took time.Duration) {
	li, err := insp.SchedulerLeader(ctx)
	if err != nil || li == nil {
		rec.printf("stop     no leader to stop (%v)", err)
		return "", "", 0
	}
	var victim *instance
	for _, in := range instances {
		if in.id == li.InstanceID {
			victim = in
		}
	}
	if victim == nil {
		rec.printf("stop     leader %s is not one of the demo's instances", li.InstanceID)
		return "", "", 0
	}
	stopping.Lock()
	stopping.id, stopping.at = victim.id, time.Now()
	start := stopping.at
	stopping.Unlock()
	rec.printf("stop     stopping the leader %s (graceful shutdown, as on SIGTERM)", victim.id)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	if err := victim.stop(sctx); err != nil {
		rec.printf("stop     %s: %v", victim.id, err)
	}
	cancel()
	select {
	case seen := <-handoff:
		next, took = seen.id, seen.at.Sub(start)
		rec.printf("handoff  %s took over %v after the stop began", next, took.Round(time.Millisecond))
	case <-time.After(chronos.DefaultLeaderTTL + 5*time.Second):
		rec.printf("handoff  NONE: no instance took over")
	case <-ctx.Done():
	}
	return victim.id, next, took
}

// drain waits until every trigger in fired has run, or for at most d.
func drain(rec *recorder, fired []time.Time, d time.Duration) {
	deadline := time.After(d)
	for {
		done, changed := rec.ran(fired)
		if done {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			return
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func printSummary(rec *recorder, s summary) {
	rec.say("")
	rec.say("summary")
	rec.say("  cluster check (every %v, once per cluster): %d triggers fired, %d ran, duplicates %d, missed %d",
		clusterEvery, s.Fired, s.Triggers, s.Duplicates, s.Missed)
	rec.say("  local check (isolated, every instance):     %d runs, duplicates %d", s.LocalRuns, s.LocalDups)
	switch {
	case s.Stopped == "":
		rec.say("  handoff: the leader was not stopped")
	case s.NewLeader == "":
		rec.say("  handoff: NONE after stopping %s", s.Stopped)
	default:
		rec.say("  handoff: %s stopped, %s leading %v later (measured by polling every %v)",
			s.Stopped, s.NewLeader, s.Handoff.Round(time.Millisecond), leaderPoll)
	}
	if s.OK() {
		rec.say("  OK: every trigger ran exactly once, through a change of leader")
	} else {
		rec.say("  NOT OK")
	}
}
