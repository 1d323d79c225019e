package chronos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// These tests run the queue and the scheduler through Redis Sentinel
// (redis.NewFailoverClient) while the master moves. Timings are logged for
// docs/scheduler.md (Limits, "Sentinel failovers"); nothing asserts on them.

// sentinelTask is the task the queue test streams through a failover.
type sentinelTask struct {
	N int `json:"n"`
}

func (sentinelTask) Kind() string { return "sentinel.task" }

// runLog records when each task ID ran, for the queue tests.
type runLog struct {
	mu   sync.Mutex
	runs map[string][]time.Time
}

func (l *runLog) add(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.runs == nil {
		l.runs = map[string][]time.Time{}
	}
	l.runs[id] = append(l.runs[id], time.Now())
}

// count returns how many distinct tasks ran.
func (l *runLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.runs)
}

// first returns when id first ran, and whether it ran.
func (l *runLog) first(id string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.runs[id]; len(r) > 0 {
		return r[0], true
	}
	return time.Time{}, false
}

// sentinelServer starts a Server on its own failover client and shuts it
// down when the test ends; its log is shown if the test fails.
func sentinelServer(t *testing.T, d *redistest.Sentinel, mux *Mux) *Server {
	t.Helper()
	logs := &logBuffer{}
	srv := NewServer(d.NewClient(nil), ServerConfig{
		Concurrency: 8,
		Logger:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err := srv.Start(context.Background(), mux); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		_ = srv.Shutdown(context.Background())
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return srv
}

// enqueuer adds sentinelTasks one after another until stopped and keeps
// the ID and time of every one that Enqueue acknowledged.
type enqueuer struct {
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	acked  []string
	acks   map[string]time.Time
	failed atomic.Int64
}

func startEnqueuer(c *Client) *enqueuer {
	e := &enqueuer{stop: make(chan struct{}), done: make(chan struct{}), acks: map[string]time.Time{}}
	go func() {
		defer close(e.done)
		for n := 0; ; n++ {
			select {
			case <-e.stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			info, err := c.Enqueue(context.Background(), sentinelTask{N: n})
			if err != nil {
				e.failed.Add(1) // not acknowledged: the test promises nothing about it
				continue
			}
			e.mu.Lock()
			e.acked = append(e.acked, info.ID)
			e.acks[info.ID] = time.Now()
			e.mu.Unlock()
		}
	}()
	return e
}

func (e *enqueuer) finish() []string {
	close(e.stop)
	<-e.done
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.acked
}

// firstAckedAfter returns the first task acknowledged after t.
func (e *enqueuer) firstAckedAfter(t time.Time) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, id := range e.acked {
		if e.acks[id].After(t) {
			return id, true
		}
	}
	return "", false
}

// ackedAfter counts the tasks acknowledged after t.
func (e *enqueuer) ackedAfter(t time.Time) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, at := range e.acks {
		if at.After(t) {
			n++
		}
	}
	return n
}

// ackAt returns when id was acknowledged.
func (e *enqueuer) ackAt(id string) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.acks[id]
}

// noscripts returns how many NOSCRIPT errors the server at addr has
// answered: each is an EVALSHA the caller then resent with the script.
func noscripts(t *testing.T, addr string) string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, _ := c.Info(context.Background(), "errorstats").Result()
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "errorstat_NOSCRIPT:count="); ok {
			return v
		}
	}
	return "0"
}

// blockedReaders counts the connections of the server at addr blocked in
// XREADGROUP: the Server's dedicated blocking connection when it waits for
// work there.
func blockedReaders(t *testing.T, addr string) int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	list, err := c.ClientList(context.Background()).Result()
	if err != nil {
		return -1 // down, or not answering: not a reader
	}
	n := 0
	for line := range strings.SplitSeq(list, "\n") {
		if strings.Contains(line, " cmd=xreadgroup") && strings.Contains(line, " flags=b") {
			n++
		}
	}
	return n
}

func TestQueueRunsEveryAcknowledgedTaskThroughAGracefulSentinelFailover(t *testing.T) {
	SkipOnTestCluster(t, "a Sentinel deployment, which make test covers; cluster failovers are in cluster_failover_test.go")
	d := redistest.StartSentinel(t)
	var runs runLog
	mux := NewMux()
	AddHandler(mux, func(ctx context.Context, task *Task[sentinelTask]) error {
		runs.add(task.ID)
		return nil
	})
	sentinelServer(t, d, mux)
	enq := startEnqueuer(NewClient(d.Client()))

	// Let the stream run before the failover.
	waitUntil(t, "tasks before the failover", func() bool { return runs.count() >= 100 })
	oldMaster := d.MasterAddr()
	start := time.Now()
	newMaster := d.Failover()
	returned := time.Now()

	// The first task acknowledged after the failover is on the new master;
	// it runs there, so the server follows the master.
	var next string
	waitUntil(t, "a task acknowledged after the failover", func() bool {
		var ok bool
		next, ok = enq.firstAckedAfter(returned)
		return ok
	})
	var ranAt time.Time
	waitUntil(t, "a task to run on the new master", func() bool {
		var ok bool
		ranAt, ok = runs.first(next)
		return ok
	})
	// The blocking read moved too: waiting for work, the server blocks on
	// the new master, not on the old one (now its replica).
	waitUntil(t, "tasks after the failover", func() bool { return enq.ackedAfter(returned) >= 100 })
	acked := enq.finish()
	waitUntil(t, "the blocking read on the new master", func() bool {
		return blockedReaders(t, newMaster) == 1 && blockedReaders(t, oldMaster) == 0
	})

	// At least once: every task Enqueue acknowledged runs.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var lost []string
		for _, id := range acked {
			if _, ok := runs.first(id); !ok {
				lost = append(lost, id)
			}
		}
		if len(lost) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d acknowledged tasks never ran, e.g. %s", len(lost), len(acked), lost[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("failover %v (SENTINEL FAILOVER to new master writable); first task acknowledged after it ran %v after the failover started; %d tasks acknowledged, %d enqueues failed; NOSCRIPT answers on the new master: %s",
		returned.Sub(start).Round(time.Millisecond), ranAt.Sub(start).Round(time.Millisecond), len(acked), enq.failed.Load(), noscripts(t, newMaster))
}

// sentinelSchedulers starts n schedulers, each on its own failover client,
// firing the 1 s interval schedule "every-second"; their log is shown if
// the test fails.
func sentinelSchedulers(t *testing.T, d *redistest.Sentinel, n int, ttl time.Duration, tweak ...func(*SchedulerConfig)) []*Scheduler {
	t.Helper()
	logs := &logBuffer{}
	var ss []*Scheduler
	MarkTestLayout(t, d.Client(), "")
	for i := range n {
		id := fmt.Sprintf("i%d", i)
		cfg := SchedulerConfig{
			InstanceID: id,
			LeaderTTL:  ttl,
			Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test_instance", id),
		}
		for _, f := range tweak {
			f(&cfg)
		}
		s := NewScheduler(d.NewClient(nil), cfg)
		if err := RegisterInterval(s, time.Second, tick{}, WithScheduleID("every-second")); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(context.Background()); err != nil {
			t.Fatalf("Start: %v", err)
		}
		t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
		ss = append(ss, s)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("scheduler log:\n%s", logs.String())
		}
	})
	return ss
}

// streamTasks reads the default queue's stream through c.
// streamTasks returns the tasks of the default queue: in its stream, and in
// its delayed set for the triggers the leader fired ahead (FireAhead).
func streamTasks(t *testing.T, c redis.UniversalClient) []*rdb.Message {
	t.Helper()
	var raw []string
	for _, k := range queueKeys(t, c) {
		xs, err := c.XRange(context.Background(), k.Stream(DefaultQueue), "-", "+").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("XRANGE: %v", err)
		}
		delayed, err := c.ZRange(context.Background(), k.Delayed(DefaultQueue), 0, -1).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("ZRANGE: %v", err)
		}
		raw = append(raw, delayed...)
		for _, x := range xs {
			raw = append(raw, x.Values["m"].(string))
		}
	}
	out := make([]*rdb.Message, 0, len(raw))
	for _, r := range raw {
		m, err := rdb.Decode([]byte(r))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// maxLateness is the longest delay between a trigger's slot and its
// enqueue among ms.
func maxLateness(ms []*rdb.Message) time.Duration {
	var worst int64
	for _, m := range ms {
		worst = max(worst, m.EnqueuedAt-m.TriggerTime)
	}
	return time.Duration(worst) * time.Millisecond
}

// leaderEpoch returns the instance ID and epoch of the trusted leader of
// the partition of "every-second" among ss, waiting for one.
func leaderEpoch(t *testing.T, ss []*Scheduler) (string, int64) {
	t.Helper()
	l := waitLeaderOf(t, "every-second", ss...)
	term, _ := l.electorOf("every-second").Current()
	return l.cfg.InstanceID, term.Epoch
}

func TestSchedulerFiresEachTriggerOnceThroughAGracefulSentinelFailover(t *testing.T) {
	SkipOnTestCluster(t, "a Sentinel deployment, which make test covers; cluster failovers are in cluster_failover_test.go")
	d := redistest.StartSentinel(t)
	c := d.Client()
	ss := sentinelSchedulers(t, d, 2, 2*time.Second)
	leaderBefore, epochBefore := leaderEpoch(t, ss)
	count := func() int { return len(streamTasks(t, c)) }
	waitUntil(t, "firings before the failover", func() bool { return count() >= 2 })

	start := time.Now()
	newMaster := d.Failover()
	returned := time.Now()
	var nextAt time.Time
	waitUntil(t, "a firing after the failover", func() bool {
		for _, m := range streamTasks(t, c) {
			if m.EnqueuedAt > returned.UnixMilli() {
				nextAt = time.UnixMilli(m.EnqueuedAt)
				return true
			}
		}
		return false
	})
	n := count()
	waitUntil(t, "three more firings", func() bool { return count() >= n+3 })
	leaderAfter, epochAfter := leaderEpoch(t, ss)

	// Nothing acknowledged was lost in the failover, so the triggers are
	// consecutive seconds, each once (triggerTimes fails on a duplicate).
	ms := streamTasks(t, c)
	secs := triggerTimes(t, ms, "every-second")
	for i := 1; i < len(secs); i++ {
		if secs[i] != secs[i-1]+1 {
			t.Fatalf("trigger %v missing after the failover: %v", time.Unix(secs[i-1]+1, 0).UTC(), secs)
		}
	}
	t.Logf("failover %v; next enqueue %v after the failover started; worst slot-to-enqueue delay %v; leader %s epoch %d before, %s epoch %d after; %d triggers; NOSCRIPT answers on the new master: %s",
		returned.Sub(start).Round(time.Millisecond), nextAt.Sub(start).Round(time.Millisecond), maxLateness(ms),
		leaderBefore, epochBefore, leaderAfter, epochAfter, len(secs), noscripts(t, newMaster))
}

// tickRun is one run of a scheduled tick.
type tickRun struct {
	trigger  time.Time
	enqueued time.Time
	ran      time.Time
}

// TestSchedulerAndQueueResumeAfterAnUnsafeMasterChange covers the two ways
// the master can change while writes made on it are lost: a crash, whose
// last writes may not have reached the replica, and a bare SENTINEL
// FAILOVER, after which the old master goes on acknowledging writes until
// the clients switch. Only liveness is promised there; lost and doubled
// work is reported.
func TestSchedulerAndQueueResumeAfterAnUnsafeMasterChange(t *testing.T) {
	SkipOnTestCluster(t, "a Sentinel deployment, which make test covers; cluster failovers are in cluster_failover_test.go")
	for _, tc := range []struct {
		name   string
		change func(*redistest.Sentinel) string
	}{
		{"SIGKILL", (*redistest.Sentinel).KillMaster},
		{"bare SENTINEL FAILOVER", (*redistest.Sentinel).FailoverUnpaused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resumeAfterMasterChange(t, tc.change)
		})
	}
}

func resumeAfterMasterChange(t *testing.T, change func(*redistest.Sentinel) string) {
	d := redistest.StartSentinel(t)
	var mu sync.Mutex
	var ticks []tickRun
	var runs runLog
	mux := NewMux()
	AddHandler(mux, func(ctx context.Context, task *Task[tick]) error {
		mu.Lock()
		defer mu.Unlock()
		ticks = append(ticks, tickRun{trigger: task.TriggerTime, enqueued: task.EnqueuedAt, ran: time.Now()})
		return nil
	})
	AddHandler(mux, func(ctx context.Context, task *Task[sentinelTask]) error {
		runs.add(task.ID)
		return nil
	})
	runsSince := func(t0 time.Time) []tickRun {
		mu.Lock()
		defer mu.Unlock()
		var out []tickRun
		for _, r := range ticks {
			if r.enqueued.After(t0) {
				out = append(out, r)
			}
		}
		return out
	}
	sentinelServer(t, d, mux)
	ss := sentinelSchedulers(t, d, 2, 2*time.Second)
	enq := startEnqueuer(NewClient(d.Client()))
	leaderBefore, epochBefore := leaderEpoch(t, ss)
	waitUntil(t, "runs before the change", func() bool { return len(runsSince(time.Time{})) >= 2 && runs.count() >= 100 })

	start := time.Now()
	newMaster := change(d)
	changed := time.Now()

	// Liveness: triggers are enqueued on the new master and run, tasks
	// acknowledged after the change run, and the server's blocking read
	// follows the master.
	waitUntil(t, "two triggers after the change to run", func() bool { return len(runsSince(changed)) >= 2 })
	waitUntil(t, "tasks acknowledged after the change", func() bool { return enq.ackedAfter(changed.Add(3*time.Second)) >= 100 })
	acked := enq.finish()
	next := runsSince(start)[0]
	leaderAfter, epochAfter := leaderEpoch(t, ss)
	// An unpaused old master goes on acknowledging writes until each client
	// sees +switch-master (about a second here), and those are discarded
	// when it is demoted: asynchronous replication promises nothing for
	// them. What must run is every task acknowledged once the clients have
	// surely switched.
	switched := changed.Add(3 * time.Second)
	waitUntil(t, "every task acknowledged after the clients switched to run", func() bool {
		for _, id := range acked {
			if _, ok := runs.first(id); !ok && enq.ackAt(id).After(switched) {
				return false
			}
		}
		return true
	})
	// An acknowledged task that has not run and is not in the new master's
	// stream is lost. (Tasks that ran on the old master and whose
	// acknowledgement was lost stay pending and run again after the
	// visibility timeout: at least once.)
	pending := map[string]bool{}
	for _, m := range streamTasks(t, d.Client()) {
		pending[m.ID] = true
	}
	lost := 0
	for _, id := range acked {
		if _, ok := runs.first(id); !ok && !pending[id] {
			lost++
		}
	}
	waitUntil(t, "the blocking read on the new master", func() bool { return blockedReaders(t, newMaster) == 1 })

	mu.Lock()
	defer mu.Unlock()
	count := map[int64]int{}
	var first, last int64
	for _, r := range ticks {
		sec := r.trigger.Unix()
		count[sec]++
		if first == 0 || sec < first {
			first = sec
		}
		last = max(last, sec)
	}
	var missing, twice []string
	for sec := first; sec <= last; sec++ {
		switch {
		case count[sec] == 0:
			missing = append(missing, time.Unix(sec, 0).UTC().Format(time.TimeOnly))
		case count[sec] > 1:
			twice = append(twice, time.Unix(sec, 0).UTC().Format(time.TimeOnly))
		}
	}
	t.Logf("change at %s took %v; next trigger enqueued %v and run %v after the change started (trigger %s); leader %s epoch %d before, %s epoch %d after; triggers %s..%s: missing %v, run twice %v; queue: %d of %d acknowledged tasks lost, %d enqueues failed",
		start.UTC().Format("15:04:05.000"), changed.Sub(start).Round(time.Millisecond),
		next.enqueued.Sub(start).Round(time.Millisecond), next.ran.Sub(start).Round(time.Millisecond),
		next.trigger.UTC().Format(time.TimeOnly), leaderBefore, epochBefore, leaderAfter, epochAfter,
		time.Unix(first, 0).UTC().Format(time.TimeOnly), time.Unix(last, 0).UTC().Format(time.TimeOnly), missing, twice,
		lost, len(acked), enq.failed.Load())
}

// With Replicas, a bare SENTINEL FAILOVER issued just before a second
// boundary fires nothing twice: the old master, which goes on taking
// writes until the clients see +switch-master, has lost its replica, so
// the fire script refuses to write there (leader.ReplicaLua) and the
// leader fires the trigger on the new master instead; and the new master,
// whose old master is not attached yet, is not held up waiting for a
// replica it does not have, so the cluster is leaderless for seconds, not
// until Sentinel demotes the old master.
func TestReplicasFiresNothingTwiceThroughABareSentinelFailover(t *testing.T) {
	SkipOnTestCluster(t, "a Sentinel deployment, which make test covers; cluster failovers are in cluster_failover_test.go")
	d := redistest.StartSentinel(t)
	var mu sync.Mutex
	ran := map[int64]int{}
	mux := NewMux()
	AddHandler(mux, func(ctx context.Context, task *Task[tick]) error {
		mu.Lock()
		defer mu.Unlock()
		ran[task.TriggerTime.Unix()]++
		return nil
	})
	sentinelServer(t, d, mux)
	ss := sentinelSchedulers(t, d, 2, 2*time.Second, func(c *SchedulerConfig) { c.Replicas = 1 })
	waitLeader(t, ss...)
	runs := func() (n int, last int64, twice []int64) {
		mu.Lock()
		defer mu.Unlock()
		for sec, c := range ran {
			n++
			last = max(last, sec)
			if c > 1 {
				twice = append(twice, sec)
			}
		}
		return
	}
	waitUntil(t, "runs before the failover", func() bool { n, _, _ := runs(); return n >= 3 })
	// Just before a second boundary: the trigger of that second is fired
	// while the failover is under way.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second - 150*time.Millisecond)))
	d.FailoverUnpaused()
	changed := time.Now()
	waitUntil(t, "a trigger after the failover to run", func() bool { _, last, _ := runs(); return last > changed.Unix()+1 })
	resumed := time.Since(changed)
	t.Logf("first trigger after the failover ran %v after it", resumed.Round(time.Millisecond))
	if resumed > 6*time.Second {
		t.Errorf("leaderless for %v after the failover, want a few seconds at most", resumed)
	}
	time.Sleep(3 * time.Second)
	if _, _, twice := runs(); len(twice) > 0 {
		t.Fatalf("fire times run twice: %v", twice)
	}
}
