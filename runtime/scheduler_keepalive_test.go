package chronos

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// slowScripts delays the first pipeline of script calls a client sends
// (Register's claims, at Start) by delay.
type slowScripts struct {
	delay time.Duration
	done  atomic.Bool
}

func (h *slowScripts) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *slowScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *slowScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cs []redis.Cmder) error {
		if len(cs) > 0 && strings.EqualFold(cs[0].Name(), "evalsha") && h.done.CompareAndSwap(false, true) {
			time.Sleep(h.delay)
		}
		return next(ctx, cs)
	}
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
	c.AddHook(&slowScripts{delay: 5 * ttl})
	o.s = NewScheduler(c, SchedulerConfig{InstanceID: "slow", InstanceTTL: ttl, LeaderTTL: time.Second,
		Logger: slog.New(o.log), Metrics: o.metrics})
	if err := RegisterInterval(o.s, time.Hour, tick{N: 1}, WithScheduleID("hourly")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var gone atomic.Int64 // polls during Start that found the instance not live
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		time.Sleep(ttl) // its first heartbeat is in
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			is, err := e.insp.SchedulerInstances(ctx)
			if err == nil && len(is) == 0 {
				gone.Add(1)
			}
		}
	}()
	at := time.Now()
	e.start(o.s)
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
