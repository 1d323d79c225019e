package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

var chaosDuration = flag.Duration("chaos.duration", 0,
	"how long to inflict faults (default 25s, or $CHRONOS_CHAOS_DURATION)")

const (
	childEnv  = "CHRONOS_CHAOS_CHILD" // instance ID; set in children only
	redisEnv  = "CHRONOS_CHAOS_REDIS"
	leaderTTL = time.Second
	instances = 4
)

// The schedules every instance declares: chaos.interval-<k>
// (RegisterInterval(1s)) and chaos.cron-<k> (RegisterCron("* * * * * ?")),
// for k below perKind, so that they fall into several of the namespace's
// partitions, led by different instances.
const perKind = 4

func scheduleIDs() []string {
	var ids []string
	for k := range perKind {
		ids = append(ids, fmt.Sprintf("chaos.interval-%d", k), fmt.Sprintf("chaos.cron-%d", k))
	}
	return ids
}

// Tick is the task the schedules enqueue. Nothing consumes it: the test
// reads the queue stream afterwards.
type Tick struct{}

// Kind returns the task kind.
func (Tick) Kind() string { return "chaos.tick" }

func TestMain(m *testing.M) {
	if id := os.Getenv(childEnv); id != "" {
		os.Exit(child(id))
	}
	os.Exit(m.Run())
}

// child runs one scheduler instance until SIGTERM, logging JSON records to
// stdout for the parent's event log.
func child(id string) int {
	if n, _ := strconv.Atoi(os.Getenv(scaleEnv)); n > 0 {
		return scaleChild(id, n)
	}
	rdb, err := redistest.OpenURL(os.Getenv(redisEnv), clusterOptions)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer rdb.Close()
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	if n, _ := strconv.Atoi(os.Getenv(loadEnv)); n > 0 {
		return loadChild(rdb, id, n)
	}
	s := chronos.NewScheduler(rdb, chronos.SchedulerConfig{InstanceID: id, LeaderTTL: leaderTTL, Logger: log})
	for k := range perKind {
		if err := chronos.RegisterInterval(s, time.Second, Tick{}, chronos.WithScheduleID(fmt.Sprintf("chaos.interval-%d", k))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if err := chronos.RegisterCron(s, "* * * * * ?", Tick{}, chronos.WithScheduleID(fmt.Sprintf("chaos.cron-%d", k))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	for {
		err := s.Start(ctx)
		if err == nil {
			break
		}
		log.Warn("chaos: start failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(200 * time.Millisecond):
		}
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// event is one line of the chaos event log: a fault the parent inflicted,
// or a leadership change of a partition a child reported.
type event struct {
	At    time.Time
	Kind  string // kill, term, stop, cont, spawn, exit, redis-down, redis-up, failover, failover-done, leader, lost, resigned, fenced
	Inst  string
	Epoch int64
	Part  int // for leader, lost, resigned, fenced
}

func (e event) String() string {
	s := e.At.Format("15:04:05.000") + " " + e.Kind
	if e.Inst != "" {
		s += " " + e.Inst
	}
	switch e.Kind {
	case "leader", "lost", "resigned", "fenced":
		s += fmt.Sprintf(" p%d", e.Part)
	}
	if e.Epoch != 0 {
		s += fmt.Sprintf(" epoch=%d", e.Epoch)
	}
	return s
}

type proc struct {
	id   string
	cmd  *exec.Cmd
	done chan struct{}
}

type harness struct {
	t       *testing.T
	redis   *redistest.Server  // nil on a cluster
	cluster *redistest.Cluster // with CHRONOS_TEST_CLUSTER=1
	rdb     redis.UniversalClient
	layout  keyspace.Layout
	next    int // the schedule whose partition's leader the next fault hits
	mu      sync.Mutex
	events  []event
	procs   [instances]*proc
	gen     int
	stderr  bytes.Buffer // every child's stderr, for race reports and panics
}

func (h *harness) log(e event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

// spawn starts a new incarnation of instance slot.
func (h *harness) spawn(slot int) {
	h.t.Helper()
	h.mu.Lock()
	h.gen++
	id := fmt.Sprintf("n%d-%d", slot, h.gen)
	h.mu.Unlock()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+id, redisEnv+"="+h.url())
	out, err := cmd.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	cmd.Stderr = &lockedWriter{mu: &h.mu, w: &h.stderr}
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	p := &proc{id: id, cmd: cmd, done: make(chan struct{})}
	h.log(event{At: time.Now(), Kind: "spawn", Inst: id})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.record(id, sc.Bytes())
		}
		_ = cmd.Wait()
		h.log(event{At: time.Now(), Kind: "exit", Inst: id})
		close(p.done)
	}()
	h.mu.Lock()
	h.procs[slot] = p
	h.mu.Unlock()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// record turns a child's log record into an event, by its message.
func (h *harness) record(inst string, line []byte) {
	var r struct {
		Time  time.Time `json:"time"`
		Msg   string    `json:"msg"`
		Epoch int64     `json:"epoch"`
		Part  int       `json:"partition"`
	}
	if json.Unmarshal(line, &r) != nil {
		return
	}
	kinds := map[string]string{
		"chronos: became leader":       "leader",
		"chronos: lost leadership":     "lost",
		"chronos: resigned leadership": "resigned",
	}
	k, ok := kinds[r.Msg]
	if !ok && strings.HasPrefix(r.Msg, "chronos: fenced write") {
		k, ok = "fenced", true
	}
	if ok {
		h.log(event{At: r.Time, Kind: k, Inst: inst, Epoch: r.Epoch, Part: r.Part})
	}
}

// leaderSlot returns the slot whose live process holds the lease of the
// partition of one of the schedules (each in turn), waiting for one.
func (h *harness) leaderSlot() int {
	h.t.Helper()
	ids := scheduleIDs()
	id := ids[h.next%len(ids)]
	h.next++
	lease := leader.KeysAt(h.layout.Partition(h.layout.ForSchedule(id))).Lock
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		tok, _ := h.rdb.Get(context.Background(), lease).Result()
		if parts := strings.Split(tok, ":"); len(parts) == 3 {
			h.mu.Lock()
			for i, p := range h.procs {
				if p != nil && p.id == parts[1] {
					h.mu.Unlock()
					return i
				}
			}
			h.mu.Unlock()
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatal("no leader among the live instances for 30s")
	return -1
}

func (h *harness) signal(slot int, sig syscall.Signal, kind string) *proc {
	h.mu.Lock()
	p := h.procs[slot]
	h.mu.Unlock()
	h.log(event{At: time.Now(), Kind: kind, Inst: p.id})
	_ = p.cmd.Process.Signal(sig)
	return p
}

func (h *harness) wait(p *proc) {
	h.t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		h.t.Errorf("instance %s did not exit within 30s of SIGTERM", p.id)
	}
}

// The faults.

func (h *harness) killLeader() {
	slot := h.leaderSlot()
	h.wait(h.signal(slot, syscall.SIGKILL, "kill"))
	time.Sleep(300 * time.Millisecond)
	h.spawn(slot)
}

func (h *harness) termLeader() {
	slot := h.leaderSlot()
	h.wait(h.signal(slot, syscall.SIGTERM, "term"))
	h.spawn(slot)
}

func (h *harness) termFollower() {
	slot := (h.leaderSlot() + 1 + int(time.Now().UnixNano()%(instances-1))) % instances
	h.wait(h.signal(slot, syscall.SIGTERM, "term"))
	h.spawn(slot)
}

func (h *harness) stopLeader() {
	slot := h.leaderSlot()
	h.signal(slot, syscall.SIGSTOP, "stop")
	time.Sleep(leaderTTL + time.Second)
	h.signal(slot, syscall.SIGCONT, "cont")
}

// restartRedis kills Redis and starts it again with its AOF. On a cluster
// it is the master of the partition of the next schedule in turn, brought
// back well within the cluster's node timeout, so no replica takes over:
// the cluster loses nothing it acknowledged, as a single server with AOF.
func (h *harness) restartRedis() {
	srv := h.redis
	if h.cluster != nil {
		ids := scheduleIDs()
		id := ids[h.next%len(ids)]
		h.next++
		srv = h.cluster.MasterForKey(leader.KeysAt(h.layout.Partition(h.layout.ForSchedule(id))).Lock)
	}
	h.log(event{At: time.Now(), Kind: "redis-down"})
	srv.Kill()
	time.Sleep(500 * time.Millisecond)
	srv.Restart()
	h.log(event{At: time.Now(), Kind: "redis-up"})
	if h.cluster != nil {
		h.cluster.WaitHealthy()
	}
}

// failoverMaster moves the master of the partition of the next schedule in
// turn to its replica (CLUSTER FAILOVER: the master pauses, the replica
// catches up and is elected), on a cluster only. Nothing acknowledged is
// lost; the clients follow MOVED.
func (h *harness) failoverMaster() {
	ids := scheduleIDs()
	id := ids[h.next%len(ids)]
	h.next++
	m := h.cluster.MasterForKey(leader.KeysAt(h.layout.Partition(h.layout.ForSchedule(id))).Lock)
	h.log(event{At: time.Now(), Kind: "failover"})
	h.cluster.Failover(m.Addr())
	h.log(event{At: time.Now(), Kind: "failover-done"})
}

// url is the Redis URL of the children: the server's, or the cluster's.
func (h *harness) url() string {
	if h.cluster != nil {
		return h.cluster.URL()
	}
	return h.redis.URL()
}

// startRedis gives the harness its Redis: a private server, or with
// CHRONOS_TEST_CLUSTER=1 a cluster of three masters with a replica each,
// with AOF or not. The children's cluster clients reload the slot map every
// second (clusterOptions), as docs/cluster.md recommends.
func (h *harness) startRedis(aof bool) {
	if redistest.OnCluster() {
		h.cluster = redistest.StartCluster(h.t, redistest.ClusterOptions{ReplicasPerMaster: 1, AOF: aof, NodeTimeout: 3 * time.Second})
		h.rdb = h.cluster.NewClient(clusterOptions)
		return
	}
	h.redis = redistest.Start(h.t, redistest.Options{AOF: aof})
	h.rdb = h.redis.Client()
}

// clusterOptions are the children's (and the parent's) cluster client
// options.
func clusterOptions(o *redis.ClusterOptions) {
	o.ClusterStateReloadInterval = time.Second
}

func TestChaos(t *testing.T) {
	d := *chaosDuration
	if d == 0 {
		d = 25 * time.Second
		if s := os.Getenv("CHRONOS_CHAOS_DURATION"); s != "" {
			var err error
			if d, err = time.ParseDuration(s); err != nil {
				t.Fatalf("CHRONOS_CHAOS_DURATION: %v", err)
			}
		}
	}
	if testing.Short() {
		t.Skip("chaos test skipped in -short mode")
	}
	h := &harness{t: t}
	h.startRedis(true)
	if os.Getenv("CHRONOS_TEST_LAYOUT") == "1" { // a namespace of a version before partitions
		if err := h.rdb.Set(context.Background(), leader.KeysFor("").Epoch, 0, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if h.layout, err = keyspace.NewResolver(h.rdb, "", keyspace.ResolveOptions{}).Layout(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("namespace: %v", h.layout)
	for i := range instances {
		h.spawn(i)
	}
	t.Cleanup(func() {
		for _, p := range h.procs {
			if p != nil {
				_ = p.cmd.Process.Signal(syscall.SIGCONT)
				_ = p.cmd.Process.Kill()
			}
		}
	})
	h.leaderSlot()
	time.Sleep(2 * time.Second)

	start := time.Now()
	faults := []func(){h.killLeader, h.termLeader, h.termFollower, h.stopLeader}
	redisDone, failoverDone := false, h.cluster == nil
	for i := 0; time.Since(start) < d; i++ {
		switch {
		case !redisDone && time.Since(start) > d/2:
			h.restartRedis()
			redisDone = true
		case !failoverDone && time.Since(start) > d*3/4:
			h.failoverMaster()
			failoverDone = true
		default:
			faults[i%len(faults)]()
		}
		time.Sleep(1500 * time.Millisecond)
	}
	h.leaderSlot()
	time.Sleep(2 * time.Second) // let the last takeover catch up
	for i := range instances {
		h.wait(h.signal(i, syscall.SIGTERM, "term"))
	}

	h.mu.Lock()
	events := slices.Clone(h.events)
	stderr := h.stderr.String()
	h.mu.Unlock()
	slices.SortStableFunc(events, func(a, b event) int { return a.At.Compare(b.At) })
	var elog strings.Builder
	for _, e := range events {
		elog.WriteString(e.String() + "\n")
	}
	if strings.Contains(stderr, "DATA RACE") || strings.Contains(stderr, "panic:") {
		t.Fatalf("a child reported a race or panic:\n%s", stderr)
	}

	rep := analyze(t, h.rdb, h.layout, events, d)
	t.Logf("chaos report:\n%s", rep)
	if rep.failed() {
		t.Errorf("event log:\n%s", elog.String())
	}
}

// report is what the chaos run saw.
type report struct {
	duration                              time.Duration
	layout                                keyspace.Layout
	kills, stops, leaderTerms, termsAll   int
	redisRestarts, failovers              int
	triggers                              map[string]int
	duplicates                            []string
	missing                               []string
	unexplained                           []string
	crashTakeovers, gracefulTakeovers     []time.Duration
	maxCrash, maxGraceful, maxLag, p99Lag time.Duration
}

func (r *report) failed() bool {
	return len(r.duplicates) > 0 || len(r.unexplained) > 0 || r.maxCrash > leaderTTL+time.Second
}

func (r *report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %v, %d instances, %d schedules\n", r.layout, instances, len(scheduleIDs()))
	fmt.Fprintf(&b, "  faults over %v: %d leader SIGKILLs, %d leader SIGSTOP/SIGCONT past the TTL, %d graceful leader handoffs (SIGTERM), %d SIGTERMs in all, %d Redis restarts, %d cluster failovers\n",
		r.duration, r.kills, r.stops, r.leaderTerms, r.termsAll, r.redisRestarts, r.failovers)
	fmt.Fprintf(&b, "  triggers enqueued: %v\n", r.triggers)
	fmt.Fprintf(&b, "  duplicates: %d %v\n", len(r.duplicates), r.duplicates)
	fmt.Fprintf(&b, "  missing triggers: %d (unexplained %d) %v\n", len(r.missing), len(r.unexplained), r.unexplained)
	fmt.Fprintf(&b, "  crash takeovers (kill/stop → new leader of each partition it led): n=%d max=%v (limit %v)\n", len(r.crashTakeovers), r.maxCrash, leaderTTL+time.Second)
	fmt.Fprintf(&b, "  graceful takeovers (SIGTERM → new leader of each partition it led): n=%d max=%v\n", len(r.gracefulTakeovers), r.maxGraceful)
	fmt.Fprintf(&b, "  fire lag (enqueued − trigger): p99=%v max=%v\n", r.p99Lag, r.maxLag)
	return b.String()
}

// analyze reads every enqueued task and checks it against the event log.
func analyze(t *testing.T, c redis.UniversalClient, l keyspace.Layout, events []event, d time.Duration) *report {
	t.Helper()
	r := &report{duration: d, layout: l, triggers: map[string]int{}}
	// Nothing serves the queue: the tasks are in its stream, or in its
	// delayed set for the triggers the leader fired ahead (FireAhead), in
	// each schedule's partition.
	var raw []string
	for p := range l.Partitions() {
		k := rdb.KeysAt(l.Partition(p))
		xs, err := c.XRange(context.Background(), k.Stream(chronos.DefaultQueue), "-", "+").Result()
		if err != nil {
			t.Fatalf("read the queue: %v", err)
		}
		delayed, err := c.ZRange(context.Background(), k.Delayed(chronos.DefaultQueue), 0, -1).Result()
		if err != nil {
			t.Fatalf("read the delayed set: %v", err)
		}
		raw = append(raw, delayed...)
		for _, x := range xs {
			raw = append(raw, x.Values["m"].(string))
		}
	}
	seen := map[string]map[int64]int{}
	var lags []time.Duration
	for _, msg := range raw {
		m, err := rdb.Decode([]byte(msg))
		if err != nil {
			t.Fatal(err)
		}
		if seen[m.ScheduleID] == nil {
			seen[m.ScheduleID] = map[int64]int{}
		}
		sec := m.TriggerTime / 1000
		seen[m.ScheduleID][sec]++
		r.triggers[m.ScheduleID]++
		if seen[m.ScheduleID][sec] == 2 {
			r.duplicates = append(r.duplicates, fmt.Sprintf("%s@%s", m.ScheduleID, time.Unix(sec, 0).UTC().Format("15:04:05")))
		}
		lags = append(lags, max(time.Duration(m.EnqueuedAt-m.TriggerTime)*time.Millisecond, 0))
	}
	slices.Sort(lags)
	if n := len(lags); n > 0 {
		r.maxLag, r.p99Lag = lags[n-1], lags[n*99/100]
	}
	for _, id := range scheduleIDs() {
		secs := seen[id]
		if len(secs) == 0 {
			t.Errorf("schedule %s never fired", id)
			continue
		}
		lo, hi := int64(1<<62), int64(0)
		for s := range secs {
			lo, hi = min(lo, s), max(hi, s)
		}
		for s := lo; s <= hi; s++ {
			if secs[s] == 0 {
				at := time.Unix(s, 0)
				g := fmt.Sprintf("%s@%s", id, at.UTC().Format("15:04:05"))
				r.missing = append(r.missing, g)
				if !explained(events, l.ForSchedule(id), at) {
					r.unexplained = append(r.unexplained, g)
				}
			}
		}
	}
	// Takeovers: from a fault on an instance to the next "became leader"
	// of each partition it led, by another instance.
	leaderAt := func(at time.Time, inst string, part int) time.Duration {
		for _, e := range events {
			if e.Kind == "leader" && e.Part == part && e.Inst != inst && e.At.After(at) {
				return e.At.Sub(at)
			}
		}
		return -1
	}
	holder := map[int]string{} // partition → instance, from the events so far
	led := func(inst string) []int {
		var ps []int
		for p, h := range holder {
			if h == inst {
				ps = append(ps, p)
			}
		}
		return ps
	}
	for _, e := range events {
		switch e.Kind {
		case "leader":
			holder[e.Part] = e.Inst
		case "lost", "resigned", "fenced":
			if holder[e.Part] == e.Inst {
				delete(holder, e.Part)
			}
		case "redis-down":
			r.redisRestarts++
		case "failover":
			r.failovers++
		case "kill", "stop":
			ps := led(e.Inst)
			if len(ps) == 0 {
				continue
			}
			if e.Kind == "kill" {
				r.kills++
			} else {
				r.stops++
			}
			for _, p := range ps {
				if took := leaderAt(e.At, e.Inst, p); took >= 0 {
					r.crashTakeovers = append(r.crashTakeovers, took)
					r.maxCrash = max(r.maxCrash, took)
				}
			}
		case "term":
			r.termsAll++
			ps := led(e.Inst)
			if len(ps) == 0 {
				continue
			}
			r.leaderTerms++
			for _, p := range ps {
				if took := leaderAt(e.At, e.Inst, p); took >= 0 {
					r.gracefulTakeovers = append(r.gracefulTakeovers, took)
					r.maxGraceful = max(r.maxGraceful, took)
				}
			}
		}
	}
	return r
}

// explained reports whether the misfire policy of the chaos schedules
// allows trigger at of a schedule of partition part to be missing:
// smartPolicy drops missed fires only when they are at least
// MisfireThreshold (60s) late, which needs a period without any leader of
// the partition that long around at. The faults here never cause one, so
// every missing trigger is unexplained.
func explained(events []event, part int, at time.Time) bool {
	var noLeaderSince time.Time
	for _, e := range events {
		switch {
		case e.Kind == "kill" || e.Kind == "stop" || e.Kind == "redis-down" ||
			(e.Kind == "lost" || e.Kind == "resigned") && e.Part == part:
			if noLeaderSince.IsZero() {
				noLeaderSince = e.At
			}
		case e.Kind == "leader" && e.Part == part:
			if !noLeaderSince.IsZero() && !at.Before(noLeaderSince) && at.Before(e.At) &&
				e.At.Sub(noLeaderSince) >= chronos.DefaultMisfireThreshold {
				return true
			}
			noLeaderSince = time.Time{}
		}
	}
	return false
}
