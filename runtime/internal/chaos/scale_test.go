package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

var (
	scaleRun = flag.Bool("chaos.scale", false,
		"measure -chaos.scale.schedules schedules on a cluster of three masters and three instances (TestAMillionSchedulesOnAClusterOfThreeInstances)")
	scaleSchedules = flag.Int("chaos.scale.schedules", 1_000_000, "schedules every instance declares")
	scaleInstances = flag.Int("chaos.scale.instances", 3, "scheduler instances (processes)")
	scaleSingle    = flag.Bool("chaos.scale.single", false, "one redis-server instead of a cluster of three masters")
	scaleWindow    = flag.Duration("chaos.scale.window", time.Minute, "how long to measure firing once the partitions are shared out")
	scaleLead      = flag.Duration("chaos.scale.lead", 0,
		"from the instances' start to the first trigger (0: 60 s + 1 ms per 2 schedules); set it beyond the start-up")
	scaleNodeTimeout = flag.Duration("chaos.scale.nodetimeout", 0, "the cluster's cluster-node-timeout (0: redistest's 2 s)")
	scaleStartup     = flag.Duration("chaos.scale.startup", 45*time.Minute, "how long the start-up may take before the test fails")
)

// scaleEnv holds the number of schedules of a scale child (set: a scale
// child); baseEnv the first trigger (unix ms).
const scaleEnv = "CHRONOS_CHAOS_SCALE"

// processStart is when this process started, near enough: package
// initialization, before TestMain.
var processStart = time.Now()

// scaleEvent is a line a scale child writes to stdout: what it did and
// when (unix ns).
type scaleEvent struct {
	Ev    string `json:"ev"` // exec, mem, registered, started, leader, lost, resigned, fired, error, stopped
	T     int64  `json:"t"`
	P     int    `json:"p"`               // partition, -1 for none
	Heap  uint64 `json:"heap,omitempty"`  // mem: HeapAlloc after runtime.GC
	Sys   uint64 `json:"sys,omitempty"`   // mem: Sys
	Fired int64  `json:"fired,omitempty"` // mem: triggers this instance enqueued so far
	Err   string `json:"err,omitempty"`
}

type emitter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (e *emitter) emit(ev scaleEvent) {
	if ev.T == 0 {
		ev.T = time.Now().UnixNano()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_ = e.enc.Encode(ev)
}

// eventHandler turns the scheduler's leadership records into events and
// passes warnings and errors on to stderr.
type eventHandler struct {
	ev   *emitter
	warn slog.Handler
}

func (h eventHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h eventHandler) Handle(ctx context.Context, r slog.Record) error {
	kinds := map[string]string{
		"chronos: became leader":       "leader",
		"chronos: lost leadership":     "lost",
		"chronos: resigned leadership": "resigned",
	}
	if k, ok := kinds[r.Message]; ok {
		p := -1
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "partition" && a.Value.Kind() == slog.KindInt64 {
				p = int(a.Value.Int64())
				return false
			}
			return true
		})
		h.ev.emit(scaleEvent{Ev: k, T: r.Time.UnixNano(), P: p})
	}
	if r.Level >= slog.LevelWarn {
		return h.warn.Handle(ctx, r)
	}
	return nil
}

func (h eventHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return eventHandler{ev: h.ev, warn: h.warn.WithAttrs(as)}
}

func (h eventHandler) WithGroup(name string) slog.Handler {
	return eventHandler{ev: h.ev, warn: h.warn.WithGroup(name)}
}

// scaleMetrics reports the first trigger this instance enqueued in each
// partition, and counts them.
type scaleMetrics struct {
	chronos.NoMetrics
	ev     *emitter
	layout keyspace.Layout
	first  []atomic.Bool
	fired  atomic.Int64
}

func (m *scaleMetrics) TriggerFired(f chronos.FiredTrigger) {
	if f.Result != chronos.TriggerEnqueued {
		return
	}
	m.fired.Add(1)
	p := m.layout.ForSchedule(f.Schedule)
	if !m.first[p].Load() && m.first[p].CompareAndSwap(false, true) {
		m.ev.emit(scaleEvent{Ev: "fired", P: p})
	}
}

// scaleChild runs one instance of a deployment of n schedules: a Scheduler
// declaring all n (simple, staggered 1 ms apart from $CHRONOS_CHAOS_BASE
// with an interval of n ms: together 1,000 triggers a second), and a Server
// whose forwarder moves the triggers fired ahead to their stream. It
// reports on stdout (scaleEvent) and, on SIGUSR1, its heap after a GC.
func scaleChild(id string, n int) int {
	ev := &emitter{enc: json.NewEncoder(os.Stdout)}
	ev.emit(scaleEvent{Ev: "exec", T: processStart.UnixNano(), P: -1})
	fail := func(err error) int {
		ev.emit(scaleEvent{Ev: "error", P: -1, Err: err.Error()})
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// docs/cluster.md's recommended cluster client options.
	c, err := redistest.OpenURL(os.Getenv(redisEnv), func(o *redis.ClusterOptions) {
		o.ClusterStateReloadInterval = time.Second
		o.ReadTimeout = 2 * time.Second
	})
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	l, err := keyspace.NewResolver(c, "", keyspace.ResolveOptions{}).Layout(ctx)
	if err != nil {
		return fail(err)
	}
	mem := func() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		ev.emit(scaleEvent{Ev: "mem", P: -1, Heap: ms.HeapAlloc, Sys: ms.Sys})
	}
	mem() // the baseline, before any schedule
	fired := &scaleMetrics{ev: ev, layout: l, first: make([]atomic.Bool, l.Partitions())}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			ev.emit(scaleEvent{Ev: "mem", P: -1, Heap: ms.HeapAlloc, Sys: ms.Sys, Fired: fired.fired.Load()})
		}
	}()

	log := slog.New(eventHandler{ev: ev, warn: slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})})
	s := chronos.NewScheduler(c, chronos.SchedulerConfig{InstanceID: id, Logger: log, Metrics: fired})
	base, _ := strconv.ParseInt(os.Getenv(baseEnv), 10, 64)
	every := time.Duration(n) * time.Millisecond
	for i := range n {
		err := chronos.RegisterSimple(s, chronos.Simple{Every: every, Repeat: -1, Start: time.UnixMilli(base).Add(time.Duration(i) * time.Millisecond)},
			Tick{}, chronos.WithScheduleID(fmt.Sprintf("scale-%07d", i)))
		if err != nil {
			return fail(err)
		}
	}
	ev.emit(scaleEvent{Ev: "registered", P: -1})
	srv := chronos.NewServer(c, chronos.ServerConfig{Concurrency: 1, Logger: log})
	if err := srv.Start(ctx, chronos.NewMux()); err != nil {
		return fail(err)
	}
	for {
		err := s.Start(ctx)
		if err == nil {
			break
		}
		ev.emit(scaleEvent{Ev: "error", P: -1, Err: "start: " + err.Error()})
		select {
		case <-ctx.Done():
			return 1
		case <-time.After(time.Second):
		}
	}
	ev.emit(scaleEvent{Ev: "started", P: -1})
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		ev.emit(scaleEvent{Ev: "error", P: -1, Err: "shutdown: " + err.Error()})
	}
	_ = srv.Shutdown(sctx)
	ev.emit(scaleEvent{Ev: "stopped", P: -1})
	return 0
}

// scaleProc is the parent's view of one scale child.
type scaleProc struct {
	id   string
	cmd  *exec.Cmd
	exec time.Time // when the parent started it
	done chan struct{}
	mem  chan scaleEvent

	mu                     sync.Mutex
	registered, started    time.Time
	firstLeader, firstFire time.Time
	stopped                time.Time
	baseHeap               uint64
	leaderEvents, lost     int
	resigned               int
	errors                 []string
	warnings               map[string]int // stderr records by message
	stderrHead             []string
}

func (p *scaleProc) read(sc *bufio.Scanner) {
	first := true
	for sc.Scan() {
		var e scaleEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		at := time.Unix(0, e.T)
		p.mu.Lock()
		switch e.Ev {
		case "mem":
			if first {
				p.baseHeap, first = e.Heap, false
				p.mu.Unlock()
				continue
			}
		case "registered":
			p.registered = at
		case "started":
			p.started = at
		case "leader":
			p.leaderEvents++
			if p.firstLeader.IsZero() {
				p.firstLeader = at
			}
		case "lost":
			p.lost++
		case "resigned":
			p.resigned++
		case "fired":
			if p.firstFire.IsZero() {
				p.firstFire = at
			}
		case "error":
			p.errors = append(p.errors, at.Format("15:04:05.000")+" "+e.Err)
		case "stopped":
			p.stopped = at
		}
		p.mu.Unlock()
		if e.Ev == "mem" {
			select {
			case p.mem <- e:
			default:
			}
		}
	}
}

func (p *scaleProc) readStderr(sc *bufio.Scanner) {
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var r struct {
			Msg string `json:"msg"`
		}
		msg := sc.Text()
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Msg != "" {
			msg = r.Msg
		}
		p.mu.Lock()
		p.warnings[msg]++
		if len(p.stderrHead) < 20 {
			p.stderrHead = append(p.stderrHead, truncate(sc.Text(), 400))
		}
		p.mu.Unlock()
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// procStatus reads a field of /proc/<pid>/status in kB (VmRSS, VmHWM).
func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// scaleRedis is the Redis of the measurement: a cluster's masters or one
// server, with each partition's master.
type scaleRedis struct {
	cluster *redistest.Cluster
	server  *redistest.Server
	admin   redis.UniversalClient
	masters []*redistest.Server
	of      []int // partition → index in masters
}

func (r *scaleRedis) url() string {
	if r.cluster != nil {
		return r.cluster.URL()
	}
	return r.server.URL()
}

func (r *scaleRedis) stats(t *testing.T) redistest.ClusterStats {
	t.Helper()
	ctx := context.Background()
	if r.cluster != nil {
		st, err := r.cluster.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st, err := r.server.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return redistest.ClusterStats{st}
}

// memory is used_memory and used_memory_rss of each master, in bytes.
func (r *scaleRedis) memory(t *testing.T) (used, rss []int64) {
	t.Helper()
	for _, m := range r.masters {
		info, err := m.Client().Info(context.Background(), "memory").Result()
		if err != nil {
			t.Fatal(err)
		}
		var u, s int64
		for line := range strings.SplitSeq(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
				u, _ = strconv.ParseInt(v, 10, 64)
			}
			if v, ok := strings.CutPrefix(line, "used_memory_rss:"); ok {
				s, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		used, rss = append(used, u), append(rss, s)
	}
	return used, rss
}

// TestAMillionSchedulesOnAClusterOfThreeInstances measures a deployment of
// 1,000,000 schedules (-chaos.scale.schedules) on a cluster of three
// masters without replicas (-chaos.scale.single: one redis-server), with
// three scheduler instances (-chaos.scale.instances), each a process
// declaring every schedule, as instances running the same code do, and
// running a Server for the forwarder. The schedules are simple, staggered
// 1 ms apart with an interval of n ms, so that together they fire 1,000
// triggers a second, evenly (no bursts). It reports each instance's
// start-up, heap after GC, RSS and CPU, each master's keys, memory,
// commands and CPU, and the lag of the triggers of a window. Run it alone,
// without -race:
//
//	go test -count=1 -timeout 2h -run TestAMillionSchedulesOnAClusterOfThreeInstances -v ./runtime/internal/chaos \
//		-chaos.scale -chaos.scale.lead=10m -chaos.scale.nodetimeout=15s
//
// The first trigger must come after the start-up (-chaos.scale.lead): the
// schedules are the same in every instance, so it is fixed before they
// start. Figures and what they took: docs/cluster.md, "A million
// schedules".
func TestAMillionSchedulesOnAClusterOfThreeInstances(t *testing.T) {
	if !*scaleRun {
		t.Skip("a measurement: run with -chaos.scale")
	}
	n, instances, window := *scaleSchedules, *scaleInstances, *scaleWindow
	ctx := context.Background()
	r := &scaleRedis{}
	if *scaleSingle {
		r.server = redistest.Start(t)
		r.admin = r.server.Client()
		r.masters = []*redistest.Server{r.server}
	} else {
		r.cluster = redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3, NodeTimeout: *scaleNodeTimeout})
		r.admin = r.cluster.Client()
		for _, m := range r.cluster.Masters() {
			r.masters = append(r.masters, m.Server)
		}
	}
	l, err := keyspace.NewResolver(r.admin, "", keyspace.ResolveOptions{}).Layout(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.of = make([]int, l.Partitions())
	if r.cluster != nil {
		ms := r.cluster.Masters()
		for p := range r.of {
			slot := redistest.KeySlot(rdb.KeysAt(l.Partition(p)).Stream(chronos.DefaultQueue))
			for i, m := range ms {
				for _, sr := range m.Slots {
					if sr.Contains(slot) {
						r.of[p] = i
					}
				}
			}
		}
	}
	// Nothing takes the tasks: they stay in the streams, to be read.
	if err := chronos.NewInspector(r.admin).PauseQueue(ctx, chronos.DefaultQueue); err != nil {
		t.Fatal(err)
	}
	lead := *scaleLead
	if lead == 0 {
		lead = time.Minute + time.Duration(n)*500*time.Microsecond
	}
	t0 := time.Now()
	base := t0.Add(lead).Truncate(time.Second)
	redis0 := r.stats(t)
	t.Logf("%v on %s; %d instances of %d schedules each; first trigger at %s (in %v); load: %s",
		l, map[bool]string{true: "one redis-server", false: "a cluster of 3 masters"}[*scaleSingle],
		instances, n, base.Format("15:04:05"), base.Sub(t0).Round(time.Second), loadavg())

	procs := make([]*scaleProc, instances)
	for i := range procs {
		p := &scaleProc{id: fmt.Sprintf("scale-%d", i), done: make(chan struct{}), mem: make(chan scaleEvent, 1), warnings: map[string]int{}}
		p.cmd = exec.Command(os.Args[0], "-test.run=^$")
		p.cmd.Env = append(os.Environ(), childEnv+"="+p.id, redisEnv+"="+r.url(),
			scaleEnv+"="+strconv.Itoa(n), baseEnv+"="+strconv.FormatInt(base.UnixMilli(), 10))
		out, err := p.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		errs, err := p.cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		p.exec = time.Now()
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { p.read(bufio.NewScanner(out)) })
		wg.Go(func() { p.readStderr(bufio.NewScanner(errs)) })
		go func() { wg.Wait(); _ = p.cmd.Wait(); close(p.done) }()
		procs[i] = p
		t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	}
	defer func() {
		for _, p := range procs {
			p.mu.Lock()
			if len(p.errors) > 0 || len(p.warnings) > 0 {
				t.Logf("%s: errors %q; stderr records by message %v; first lines:\n%s", p.id, p.errors, p.warnings, strings.Join(p.stderrHead, "\n"))
			}
			p.mu.Unlock()
		}
	}()

	// Start-up: until every partition is led, shared out evenly, and the
	// first triggers are a few seconds past.
	ks := make([]leader.Keys, l.Partitions())
	for p := range ks {
		ks[p] = leader.KeysAt(l.Partition(p))
	}
	var allLed, shared, evenAt, holdersSince time.Time
	var lastHolders string
	var startupRedis redistest.ClusterStats
	peakRSS := make([]int64, instances)
	lastLog := time.Now()
	deadline := t0.Add(*scaleStartup)
	for {
		holders, _ := leader.Holders(ctx, r.admin, ks)
		count := map[string]int{}
		for _, h := range holders {
			count[h]++
		}
		now := time.Now()
		if allLed.IsZero() && len(holders) == l.Partitions() && count[""] == 0 {
			allLed = now
		}
		even := count[""] == 0 && len(count) == instances
		for _, k := range count {
			even = even && k >= l.Partitions()/instances && k <= (l.Partitions()+instances-1)/instances
		}
		if key := strings.Join(holders, ","); key != lastHolders {
			lastHolders, holdersSince = key, now
		}
		// Shared out evenly, or every partition led by the same instance
		// for a minute: an instance keeps a partition it rescued from an
		// owner that could not take it while the live instances stay the
		// same (docs/scheduler.md), so the shares may stay uneven.
		settled := even || count[""] == 0 && now.Sub(holdersSince) >= time.Minute
		if even && evenAt.IsZero() {
			evenAt = now
		}
		if settled && shared.IsZero() {
			shared = now
			startupRedis = r.stats(t).Sub(redis0)
		}
		for i, p := range procs {
			peakRSS[i] = max(peakRSS[i], procStatus(p.cmd.Process.Pid, "VmRSS"))
			select {
			case <-p.done:
				t.Fatalf("%s exited during the start-up: %v", p.id, p.cmd.ProcessState)
			default:
			}
		}
		if !shared.IsZero() && now.After(base.Add(5*time.Second)) {
			break
		}
		if now.After(deadline) {
			t.Fatalf("start-up not done in %v: leaders %v", *scaleStartup, count)
		}
		if now.Sub(lastLog) > 30*time.Second {
			lastLog = now
			var st []string
			for i, p := range procs {
				p.mu.Lock()
				last := ""
				if len(p.errors) > 0 {
					last = fmt.Sprintf(", %d errors, last: %s", len(p.errors), truncate(p.errors[len(p.errors)-1], 300))
				}
				st = append(st, fmt.Sprintf("%s: registered %v started %v leads %d RSS %d MB%s", p.id,
					!p.registered.IsZero(), !p.started.IsZero(), count[p.id], peakRSS[i]>>10, last))
				p.mu.Unlock()
			}
			used, _ := r.memory(t)
			t.Logf("%v: %s; redis used_memory %v MB; load %s", now.Sub(t0).Round(time.Second), strings.Join(st, "; "), mb(used), loadavg())
		}
		time.Sleep(250 * time.Millisecond)
	}
	if shared.After(base) {
		t.Logf("NOTE: the partitions were shared out %v after the first trigger; raise -chaos.scale.lead", shared.Sub(base).Round(time.Millisecond))
	}
	askMem := func() []scaleEvent {
		out := make([]scaleEvent, instances)
		for i, p := range procs {
			_ = p.cmd.Process.Signal(syscall.SIGUSR1)
			select {
			case out[i] = <-p.mem:
			case <-time.After(time.Minute):
				t.Fatalf("%s did not report its heap within a minute", p.id)
			}
		}
		return out
	}
	time.Sleep(5 * time.Second) // past the start-up's last reads
	memBefore := askMem()

	// The window.
	fired := func() []int64 {
		out := make([]int64, l.Partitions())
		for p := range out {
			k := rdb.KeysAt(l.Partition(p))
			out[p] = r.admin.XLen(ctx, k.Stream(chronos.DefaultQueue)).Val() + r.admin.ZCard(ctx, k.Delayed(chronos.DefaultQueue)).Val()
		}
		return out
	}
	cpu0 := make([]time.Duration, instances)
	startupCPU := make([]time.Duration, instances)
	for i, p := range procs {
		cpu0[i] = procCPU(t, p.cmd.Process.Pid)
		startupCPU[i] = cpu0[i]
	}
	f0, st0 := fired(), r.stats(t)
	start := time.Now().Truncate(time.Millisecond)
	for time.Since(start) < window {
		for i, p := range procs {
			peakRSS[i] = max(peakRSS[i], procStatus(p.cmd.Process.Pid, "VmRSS"))
		}
		time.Sleep(time.Second)
	}
	end := time.Now().Truncate(time.Millisecond)
	f1, st1 := fired(), r.stats(t)
	cpu := make([]time.Duration, instances)
	rss := make([]int64, instances)
	for i, p := range procs {
		cpu[i] = procCPU(t, p.cmd.Process.Pid) - cpu0[i]
		rss[i] = procStatus(p.cmd.Process.Pid, "VmRSS")
	}
	el := end.Sub(start)
	holders, _ := leader.Holders(ctx, r.admin, ks)
	memAfter := askMem()
	used, usedRSS := r.memory(t)

	// The lag of the window's triggers: stream entry (Redis's clock at the
	// XADD) minus trigger time. Wait for the forwarder to move the last.
	before := strconv.FormatInt(end.UnixMilli()-1, 10)
	for dl := time.Now().Add(10 * time.Second); time.Now().Before(dl); time.Sleep(50 * time.Millisecond) {
		var left int64
		for p := range l.Partitions() {
			left += r.admin.ZCount(ctx, rdb.KeysAt(l.Partition(p)).Delayed(chronos.DefaultQueue), "-inf", before).Val()
		}
		if left == 0 {
			break
		}
	}
	inWindow := func(m *rdb.Message) bool {
		return m.TriggerTime >= start.UnixMilli() && m.TriggerTime < end.UnixMilli()
	}
	var lags []time.Duration
	seen := map[string]int{}
	unforwarded := 0
	for p := range l.Partitions() {
		k := rdb.KeysAt(l.Partition(p))
		delayed, err := r.admin.ZRangeByScore(ctx, k.Delayed(chronos.DefaultQueue), &redis.ZRangeBy{Min: "-inf", Max: before}).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range delayed {
			if m, err := rdb.Decode([]byte(d)); err == nil && inWindow(m) {
				unforwarded++
				seen[fmt.Sprintf("%s@%d", m.ScheduleID, m.TriggerTime)]++
				lags = append(lags, time.Since(time.UnixMilli(m.TriggerTime)))
			}
		}
		for next := strconv.FormatInt(start.UnixMilli(), 10); ; {
			xs, err := r.admin.XRangeN(ctx, k.Stream(chronos.DefaultQueue), next, "+", 10_000).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range xs {
				m, err := rdb.Decode([]byte(x.Values["m"].(string)))
				if err != nil {
					t.Fatal(err)
				}
				if !inWindow(m) {
					continue
				}
				seen[fmt.Sprintf("%s@%d", m.ScheduleID, m.TriggerTime)]++
				ms, _, _ := strings.Cut(x.ID, "-")
				at, _ := strconv.ParseInt(ms, 10, 64)
				lags = append(lags, time.Duration(at-m.TriggerTime)*time.Millisecond)
			}
			if len(xs) < 10_000 {
				break
			}
			next = "(" + xs[len(xs)-1].ID
		}
	}
	dups := 0
	for _, c := range seen {
		dups += c - 1
	}
	slices.Sort(lags)
	q := func(f float64) time.Duration {
		if len(lags) == 0 {
			return 0
		}
		return lags[min(int(f*float64(len(lags))), len(lags)-1)]
	}

	// Shut down, all at once.
	stopAt := time.Now()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	var stopTook []time.Duration
	for _, p := range procs {
		select {
		case <-p.done:
		case <-time.After(2 * time.Minute):
			t.Errorf("%s did not exit within 2 minutes of SIGTERM", p.id)
		}
		stopTook = append(stopTook, time.Since(stopAt).Round(time.Millisecond))
	}

	// The report.
	var b strings.Builder
	rd := func(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }
	fmt.Fprintf(&b, "%d schedules declared by each of %d instances, %v, %s\n", n, instances, l,
		map[bool]string{true: "one redis-server", false: "a cluster of 3 masters (no replicas)"}[*scaleSingle])
	evenly := "never"
	if !evenAt.IsZero() {
		evenly = rd(evenAt.Sub(t0))
	}
	fmt.Fprintf(&b, "start-up (from the first instance's exec): every partition led %s, shared out evenly %s, settled %s; first trigger at %s\n",
		rd(allLed.Sub(t0)), evenly, rd(shared.Sub(t0)), rd(base.Sub(t0)))
	fmt.Fprintf(&b, "\n| instance | registered (in memory) | Start returned | first lease | first firing | partitions led | heap after GC before / after the window | B per schedule | RSS (peak) | CPU until the window | CPU in the window |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, p := range procs {
		p.mu.Lock()
		led := 0
		for _, h := range holders {
			if h == p.id {
				led++
			}
		}
		since := func(x time.Time) string {
			if x.IsZero() {
				return "never"
			}
			return rd(x.Sub(p.exec))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d | %d / %d MB | %.0f | %d MB (%d MB) | %.1f s | %.0f ms/s (%.1f µs per trigger of the namespace) |\n",
			p.id, since(p.registered), since(p.started), since(p.firstLeader), since(p.firstFire), led,
			memBefore[i].Heap>>20, memAfter[i].Heap>>20, float64(memAfter[i].Heap-p.baseHeap)/float64(n),
			rss[i]>>10, peakRSS[i]>>10, startupCPU[i].Seconds(),
			float64(cpu[i].Milliseconds())/el.Seconds(), float64(cpu[i].Microseconds())/float64(sum(f1)-sum(f0)))
		p.mu.Unlock()
	}
	win := st1.Sub(st0)
	triggers := make([]int64, len(r.masters))
	for p := range l.Partitions() {
		triggers[r.of[p]] += f1[p] - f0[p]
	}
	fmt.Fprintf(&b, "\n| master | keys | used_memory (RSS) | start-up: commands, CPU | window: triggers, commands, CPU | µs per trigger it fired |\n|---|---|---|---|---|---|\n")
	for i := range r.masters {
		fmt.Fprintf(&b, "| %d | %d | %d MB (%d MB) | %d, %.1f s | %d, %d, %.0f ms/s | %.1f |\n", i+1, st1[i].Keys, used[i]>>20, usedRSS[i]>>20,
			startupRedis[i].Commands, startupRedis[i].CPU.Seconds(),
			triggers[i], win[i].Commands, float64(win[i].CPU.Milliseconds())/el.Seconds(),
			float64(win[i].CPU.Microseconds())/float64(max(triggers[i], 1)))
	}
	fmt.Fprintf(&b, "\nwindow, commands per trigger of the namespace on all masters: %s\n", topCalls(win.Total(), sum(f1)-sum(f0), 12))
	fmt.Fprintf(&b, "\nwindow %v: %d triggers fired (%.0f/s); of the %d trigger times in it %d reached the stream (%d still in the delayed set), %d duplicates\n",
		el.Round(time.Millisecond), sum(f1)-sum(f0), float64(sum(f1)-sum(f0))/el.Seconds(), end.UnixMilli()-start.UnixMilli(), len(lags)-unforwarded, unforwarded, dups)
	fmt.Fprintf(&b, "lag (stream entry − trigger, every trigger; staggered, no bursts): p50 %v, p99 %v, p99.9 %v, max %v\n", q(0.5), q(0.99), q(0.999), q(1))
	fmt.Fprintf(&b, "shutdown (SIGTERM to all): exited after %v\n", stopTook)
	fmt.Fprintf(&b, "load: %s; whole run %v\n", loadavg(), time.Since(t0).Round(time.Second))
	for _, p := range procs {
		p.mu.Lock()
		fmt.Fprintf(&b, "%s: %d leases won, %d lost, %d resigned\n", p.id, p.leaderEvents, p.lost, p.resigned)
		p.mu.Unlock()
	}
	t.Logf("report:\n%s", b.String())
	if want := end.UnixMilli() - start.UnixMilli(); int64(len(lags)) != want || dups > 0 {
		t.Errorf("%d of %d trigger times found in the window, %d duplicates", len(lags), want, dups)
	}
}

// topCalls is the k most called commands of st, per trigger.
func topCalls(st redistest.NodeStats, triggers int64, k int) string {
	names := make([]string, 0, len(st.Calls))
	for c := range st.Calls {
		names = append(names, c)
	}
	slices.SortFunc(names, func(a, b string) int { return int(st.Calls[b] - st.Calls[a]) })
	var parts []string
	for _, c := range names[:min(k, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %.2f", c, float64(st.Calls[c])/float64(max(triggers, 1))))
	}
	return strings.Join(parts, ", ")
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

func mb(xs []int64) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = x >> 20
	}
	return out
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
