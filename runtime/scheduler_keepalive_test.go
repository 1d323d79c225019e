package chronos

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// slowPipeline delays the first pipeline a client sends, once armed, whose
// first command is named name (case-insensitive), by delay.
type slowPipeline struct {
	name  string
	delay time.Duration
	armed atomic.Bool
	done  atomic.Bool
}

func (h *slowPipeline) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *slowPipeline) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *slowPipeline) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cs []redis.Cmder) error {
		if h.armed.Load() && len(cs) > 0 && strings.EqualFold(cs[0].Name(), h.name) && h.done.CompareAndSwap(false, true) {
			time.Sleep(h.delay)
		}
		return next(ctx, cs)
	}
}

// livePoller counts the polls, every 50 ms until stop is closed, that
// found no live scheduler instance.
func livePoller(e *schedEnv, stop <-chan struct{}) (gone *atomic.Int64, done <-chan struct{}) {
	gone = &atomic.Int64{}
	d := make(chan struct{})
	go func() {
		defer close(d)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			is, err := e.insp.SchedulerInstances(context.Background())
			if err == nil && len(is) == 0 {
				gone.Add(1)
			}
		}
	}()
	return gone, d
}

// A Start that takes longer than twice InstanceTTL, as declaring a million
// schedules does, keeps the instance live throughout: its record and its
// declarations do not expire meanwhile, so the other instances keep
// counting it and its first heartbeat finds them, with nothing to declare
// again.
func TestAStartLongerThanTwiceInstanceTTLKeepsTheInstanceLive(t *testing.T) {
	e := newSchedEnv(t)
	const ttl = 300 * time.Millisecond // heartbeats every 100 ms; a record expires 600 ms after the last
	o := &observed{log: newCaptureHandler(), metrics: &recorder{}}
	c := e.redis.NewClient()
	slow := &slowPipeline{name: "evalsha", delay: 5 * ttl} // Register's claims
	slow.armed.Store(true)
	c.AddHook(slow)
	o.s = NewScheduler(c, SchedulerConfig{InstanceID: "slow", InstanceTTL: ttl, LeaderTTL: time.Second,
		Logger: slog.New(o.log), Metrics: o.metrics})
	if err := RegisterInterval(o.s, time.Hour, tick{N: 1}, WithScheduleID("hourly")); err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	started := make(chan struct{})
	go func() {
		defer close(started)
		e.start(o.s)
	}()
	time.Sleep(ttl) // the first heartbeat of Start is in
	stop := make(chan struct{})
	gone, polled := livePoller(e, stop)
	<-started
	took := time.Since(at)
	close(stop)
	<-polled
	if took < 2*2*ttl {
		t.Fatalf("Start took %v, not longer than twice InstanceTTL (%v)", took, 2*ttl)
	}
	time.Sleep(4 * ttl) // heartbeats after Start
	if n := gone.Load(); n > 0 {
		t.Errorf("the instance was not live %d times in the %v Start took", n, took.Round(time.Millisecond))
	}
	for _, msg := range []string{"registry record was gone", "declarations had expired", "declarations are gone"} {
		if n := o.log.count(slog.LevelWarn, msg); n > 0 {
			t.Errorf("%q logged %d times after a Start of %v:\n%s", msg, n, took.Round(time.Millisecond), o.log)
		}
	}
}

// A heartbeat whose read of what changed takes longer than twice
// InstanceTTL (every schedule changed, as when a million are claimed at
// start-up) keeps the instance live meanwhile.
func TestAHeartbeatsLongReadOfChangesKeepsTheInstanceLive(t *testing.T) {
	e := newSchedEnv(t)
	const ttl = 300 * time.Millisecond
	o := &observed{log: newCaptureHandler(), metrics: &recorder{}}
	c := e.redis.NewClient()
	slow := &slowPipeline{name: "zrangebyscore", delay: 5 * ttl} // the mirror's ChangedSince
	c.AddHook(slow)
	o.s = NewScheduler(c, SchedulerConfig{InstanceID: "slow", InstanceTTL: ttl, LeaderTTL: time.Second,
		Logger: slog.New(o.log), Metrics: o.metrics})
	if err := RegisterInterval(o.s, time.Hour, tick{N: 1}, WithScheduleID("hourly")); err != nil {
		t.Fatal(err)
	}
	e.start(o.s)
	slow.armed.Store(true)
	stop := make(chan struct{})
	gone, polled := livePoller(e, stop)
	waitUntil(t, "the slow read", func() bool { return slow.done.Load() })
	time.Sleep(5*ttl + 4*ttl) // the read, and heartbeats after it
	close(stop)
	<-polled
	if n := gone.Load(); n > 0 {
		t.Errorf("the instance was not live %d times", n)
	}
	if n := o.log.count(slog.LevelWarn, "registry record was gone"); n > 0 {
		t.Errorf("its record was gone %d times:\n%s", n, o.log)
	}
}

// An instance whose Start takes longer than twice InstanceTTL gets its
// share of the partitions once it has started, not while it declares its
// schedules. Counted in the assignment meanwhile (its heartbeats go on), it
// was handed partitions it could not take: they stayed leaderless until
// the running instance rescued them, which then kept them while the live
// instances stayed the same, so the partitions never spread.
func TestAnInstanceGetsItsPartitionsOnceItHasStarted(t *testing.T) {
	skipInLayoutOne(t)
	e := newSchedEnv(t)
	const ttl = 600 * time.Millisecond
	reg := func(s *Scheduler) {
		for i := range 24 {
			if err := RegisterInterval(s, time.Hour, tick{N: i}, WithScheduleID(fmt.Sprintf("hourly-%d", i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	a := e.start(e.scheduler("a", SchedulerConfig{InstanceTTL: ttl}, reg))
	waitBalanced(t, a)
	c := e.redis.NewClient()
	slow := &slowPipeline{name: "evalsha", delay: 5 * ttl} // b's claims
	slow.armed.Store(true)
	c.AddHook(slow)
	o := &observed{log: newCaptureHandler(), metrics: &recorder{}}
	b := NewScheduler(c, SchedulerConfig{InstanceID: "b", InstanceTTL: ttl, LeaderTTL: time.Second, Logger: slog.New(o.log)})
	reg(b)
	started := make(chan struct{})
	go func() {
		defer close(started)
		e.start(b)
	}()
	var dips int // polls during b's Start that found a leading fewer than all 12
	for done := false; !done; {
		select {
		case <-started:
			done = true
		case <-time.After(20 * time.Millisecond):
			if len(a.led()) < len(a.parts.electors) {
				dips++
			}
		}
	}
	if dips > 0 {
		t.Errorf("while b started, a led fewer than every partition %d times: it handed them to b", dips)
	}
	waitBalanced(t, a, b)
	if n := o.log.count(slog.LevelWarn, "lease stayed free"); n > 0 {
		t.Errorf("b rescued %d partitions", n)
	}
}
