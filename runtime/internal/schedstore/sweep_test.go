package schedstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// leader returns a Store for the leader's sweeps on its own connection,
// whose commands rec records (rec may be nil).
func (w *world) leader(rec *recorder, tweak func(*Config)) *Store {
	c := w.srv.NewClient(nil)
	if rec != nil {
		c.AddHook(rec)
	}
	cfg := Config{Layout: testLayout(), Now: w.clk.Now, InstanceTTL: 15 * time.Second, RetireGrace: time.Hour}
	if tweak != nil {
		tweak(&cfg)
	}
	return New(c, cfg)
}

// recorder is a go-redis hook that keeps the arguments of every command
// sent, and can run a function before a pipeline goes out.
type recorder struct {
	mu     sync.Mutex
	cmds   [][]string
	before func(cmds []redis.Cmder)
}

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.add(cmd)
		return next(ctx, cmd)
	}
}

func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.mu.Lock()
		before := r.before
		r.mu.Unlock()
		if before != nil {
			before(cmds)
		}
		for _, c := range cmds {
			r.add(c)
		}
		return next(ctx, cmds)
	}
}

func (r *recorder) add(cmd redis.Cmder) {
	args := make([]string, len(cmd.Args()))
	for i, a := range cmd.Args() {
		args[i] = fmt.Sprint(a)
	}
	r.mu.Lock()
	r.cmds = append(r.cmds, args)
	r.mu.Unlock()
}

// take returns the commands recorded since the last take.
func (r *recorder) take() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cmds
	r.cmds = nil
	return c
}

// commandCalls returns redis-server's count of calls per command (scripts'
// own commands included), from INFO commandstats.
func commandCalls(t *testing.T, rdb redis.UniversalClient) map[string]int64 {
	t.Helper()
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	for line := range strings.Lines(info) {
		name, stats, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "cmdstat_")), ":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.SplitN(stats, ",", 2)[0], 10, 64)
		calls[name] = n
	}
	return calls
}

// callsSince returns the calls made since before, INFO itself left out.
func callsSince(t *testing.T, rdb redis.UniversalClient, before map[string]int64) map[string]int64 {
	t.Helper()
	d := map[string]int64{}
	for name, n := range commandCalls(t, rdb) {
		if n > before[name] && name != "info" {
			d[name] = n - before[name]
		}
	}
	return d
}

func mustSweep(t *testing.T, st *Store) SweepResult {
	t.Helper()
	res, err := st.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestASteadyStateSweepReadsOnlyTheLiveInstances(t *testing.T) {
	w := newWorld(t)
	defs := manyDefs(300)
	var insts []Instance
	var stores []*Store
	for _, id := range []string{"a", "b", "c"} {
		st, inst := w.instance(id, "v1", defs...)
		stores, insts = append(stores, st), append(insts, inst)
	}
	rec := &recorder{}
	l := w.leader(rec, nil)
	if res := mustSweep(t, l); !res.Full {
		t.Fatalf("first sweep = %+v, want a full one", res)
	}

	mustSweep(t, l) // the first steady sweep also loads its script

	w.clk.Advance(15 * time.Second)
	for i, st := range stores {
		st.Heartbeat(ctx, insts[i])
	}
	rec.take()
	before := commandCalls(t, w.rdb)
	res := mustSweep(t, l)
	if res.Full || res.Live != 3 || len(res.Handed)+len(res.Retired)+len(res.Deleted) != 0 {
		t.Fatalf("sweep with nothing changed = %+v, want a steady one over 3 live instances", res)
	}
	for _, c := range rec.take() {
		for _, a := range c {
			if strings.Contains(a, ":sched:") || strings.Contains(a, ":decl:") || strings.HasSuffix(a, ":schedules") {
				t.Errorf("steady sweep sent %v: it reads per-schedule keys", c)
			}
		}
	}
	if !w.srv.External() { // a shared server's counts include other clients
		// The live index, one HMGET per live instance and one for the
		// sweep record, and the script that confirms the record.
		want := map[string]int64{"zrangebyscore": 1, "hmget": 4, "evalsha": 1, "hget": 1, "hset": 1}
		if got := callsSince(t, w.rdb, before); !maps.Equal(got, want) {
			t.Errorf("steady sweep ran %v in redis-server, want %v (none per schedule)", got, want)
		}
	}

	// A new leader's first sweep reads everything, changed or not.
	if res, err := l.FullSweep(ctx); err != nil || !res.Full {
		t.Fatalf("FullSweep = %+v, %v; want a full sweep", res, err)
	}
}

// TestSweepSeesWhatChangedSinceItsLastFullPass: each change the registry
// can undergo between two sweeps is acted on by the next sweep after a
// steady one, or, for a change made behind the store's back, by the first
// sweep after FullSweepInterval.
func TestSweepSeesWhatChangedSinceItsLastFullPass(t *testing.T) {
	// steady sweeps once in full and once with nothing changed.
	steady := func(t *testing.T, l *Store) {
		t.Helper()
		mustSweep(t, l)
		if res := mustSweep(t, l); res.Full {
			t.Fatalf("second sweep = %+v, want a steady one", res)
		}
	}
	inForce := func(t *testing.T, st *Store, id, spec, by string) {
		t.Helper()
		if sc := mustGet(t, st, id); sc.Spec != spec || sc.DeclaredBy.InstanceID != by {
			t.Fatalf("%s: spec %q by %q, want %q by %q", id, sc.Spec, sc.DeclaredBy.InstanceID, spec, by)
		}
	}

	t.Run("a declarer that dies", func(t *testing.T) {
		w := newWorld(t)
		old, oldInst := w.instance("old", "v1", def("s", "v1 spec"))
		w.instance("new", "v2", def("s", "v2 spec"))
		l := w.leader(nil, nil)
		steady(t, l)
		w.clk.Advance(16 * time.Second) // "new" stopped heartbeating
		old.Heartbeat(ctx, oldInst)
		if res := mustSweep(t, l); !res.Full || !slices.Equal(res.Handed, []string{"s"}) {
			t.Fatalf("sweep = %+v, want s handed over", res)
		}
		inForce(t, old, "s", "v1 spec", "old")
	})

	t.Run("an instance that re-registers with changed declarations", func(t *testing.T) {
		w := newWorld(t)
		a, aInst := w.instance("a", "v2", def("s", "a"), def("t", "a"))
		w.instance("b", "v1", def("s", "b"), def("t", "b"))
		l := w.leader(nil, nil)
		steady(t, l)
		// "a" stops declaring t: the next sweep hands t to b.
		if _, err := a.Register(ctx, aInst.Declarer(), []Definition{def("s", "a")}); err != nil {
			t.Fatal(err)
		}
		if res := mustSweep(t, l); !res.Full || !slices.Equal(res.Handed, []string{"t"}) {
			t.Fatalf("sweep = %+v, want t handed over", res)
		}
		inForce(t, a, "t", "b", "b")
		inForce(t, a, "s", "a", "a")
	})

	t.Run("a schedule deleted by hand", func(t *testing.T) {
		w := newWorld(t)
		a, aInst := w.instance("a", "v1", def("s", "x"))
		l := w.leader(nil, nil)
		steady(t, l)
		w.rdb.Del(ctx, l.keys.sched("s"))
		w.rdb.ZRem(ctx, l.keys.of("s").schedules, "s")
		// Nothing the store tracks changed: the steady sweep does not see it.
		if res := mustSweep(t, l); res.Full || len(res.Handed) != 0 {
			t.Fatalf("sweep right after = %+v, want a steady one", res)
		}
		w.clk.Advance(DefaultFullSweepInterval)
		a.Heartbeat(ctx, aInst)
		if res := mustSweep(t, l); !res.Full || !slices.Equal(res.Handed, []string{"s"}) {
			t.Fatalf("sweep after FullSweepInterval = %+v, want s created again", res)
		}
		inForce(t, a, "s", "x", "a")
	})

	t.Run("a claim that loses its race", func(t *testing.T) {
		w := newWorld(t)
		b, bInst := w.instance("b", "v1", def("s", "b"))
		w.instance("a", "v2", def("s", "a"))
		// Another writer changes the declarer between the sweep's read and
		// its compare-and-set, once.
		var raced atomic.Bool
		rec := &recorder{before: func(cmds []redis.Cmder) {
			for _, c := range cmds {
				if c.Name() == "evalsha" && c.Args()[1] == claimScript.Hash() && raced.CompareAndSwap(false, true) {
					w.rdb.HSet(ctx, keysFor(testLayout()).sched("s"), FieldDeclaredBy, "ghost")
				}
			}
		}}
		l := w.leader(rec, nil)
		steady(t, l)
		w.clk.Advance(16 * time.Second) // "a" stopped heartbeating
		b.Heartbeat(ctx, bInst)
		if res := mustSweep(t, l); !res.Full || len(res.Handed) != 0 || !raced.Load() {
			t.Fatalf("sweep = %+v (raced %v), want the claim lost", res, raced.Load())
		}
		// Nothing tracked changed since, but that sweep left work undone.
		if res := mustSweep(t, l); !res.Full || !slices.Equal(res.Handed, []string{"s"}) {
			t.Fatalf("next sweep = %+v, want s handed over", res)
		}
		inForce(t, b, "s", "b", "b")
		if res := mustSweep(t, l); res.Full {
			t.Fatalf("sweep once settled = %+v, want a steady one", res)
		}
	})

	t.Run("an instance whose declarations expired while it stalled", func(t *testing.T) {
		// Its next heartbeat says they are gone, publishes no digest until
		// the instance declares them again, and nothing is retired meanwhile.
		w := newWorld(t)
		a, aInst := w.instance("a", "v1", def("s", "x"))
		l := w.leader(nil, nil)
		steady(t, l)
		w.rdb.Del(ctx, l.keys.instance("a"), l.keys.decl("a")) // both expire 2 TTLs after a heartbeat
		hb, err := a.Heartbeat(ctx, aInst)
		if err != nil || !hb.Lost || !hb.Undeclared {
			t.Fatalf("heartbeat = %+v, %v; want the record and the declarations reported gone", hb, err)
		}
		if res := mustSweep(t, l); !res.Full || len(res.Retired) != 0 {
			t.Fatalf("sweep = %+v, want a full one retiring nothing", res)
		}
		if _, err := a.Register(ctx, aInst.Declarer(), []Definition{def("s", "x")}); err != nil {
			t.Fatal(err)
		}
		w.clk.Advance(5 * time.Second) // a heartbeat later: the second look
		a.Heartbeat(ctx, aInst)
		if res := mustSweep(t, l); !res.Full || len(res.Retired) != 0 {
			t.Fatalf("sweep after the declarations = %+v, want a full one retiring nothing", res)
		}
		if res := mustSweep(t, l); res.Full {
			t.Fatalf("sweep after = %+v, want a steady one", res)
		}
	})

	t.Run("an instance that publishes no digest", func(t *testing.T) {
		// An instance of an earlier version: its declarations may change
		// unseen, so every sweep reads everything while it is live.
		w := newWorld(t)
		w.instance("a", "v1", def("s", "x"))
		l := w.leader(nil, nil)
		steady(t, l)
		w.rdb.HDel(ctx, l.keys.instance("a"), fieldDeclDigest)
		for range 2 {
			if res := mustSweep(t, l); !res.Full {
				t.Fatalf("sweep = %+v, want a full one", res)
			}
		}
	})
}

// TestRetirementCountsFromTheLastSweepThatSawTheScheduleDeclared: steady
// sweeps write no per-schedule "last declared" score, yet a schedule is
// kept for RetireGrace after the last sweep that found it declared, also
// when a new leader makes the sweep that finds it undeclared.
func TestRetirementCountsFromTheLastSweepThatSawTheScheduleDeclared(t *testing.T) {
	w := newWorld(t)
	keep, keepInst := w.instance("keep", "v1", def("kept", "a"))
	_, goneInst := w.instance("gone", "v1", def("kept", "a"), def("dropped", "b"))
	noPeriodicFullSweep := func(c *Config) { c.FullSweepInterval = 24 * time.Hour }
	first := w.leader(nil, noPeriodicFullSweep)
	mustSweep(t, first)
	for range 200 { // 50 minutes of steady sweeps
		w.clk.Advance(15 * time.Second)
		keep.Heartbeat(ctx, keepInst)
		keep.Heartbeat(ctx, goneInst)
		if res := mustSweep(t, first); res.Full {
			t.Fatalf("sweep at %v = %+v, want a steady one", w.clk.Now().Sub(t0), res)
		}
	}
	lastSeen := w.clk.Now()
	if err := keep.Deregister(ctx, "gone"); err != nil {
		t.Fatal(err)
	}

	// A new leader takes over.
	second := w.leader(nil, noPeriodicFullSweep)
	w.clk.Advance(15 * time.Second)
	keep.Heartbeat(ctx, keepInst)
	if res, err := second.FullSweep(ctx); err != nil || len(res.Deleted) != 0 {
		t.Fatalf("new leader's first sweep = %+v, %v", res, err)
	}
	w.clk.Set(lastSeen.Add(time.Hour - time.Second)) // well over an hour after t0
	keep.Heartbeat(ctx, keepInst)
	if res := mustSweep(t, second); len(res.Deleted) != 0 {
		t.Fatalf("deleted %v within an hour of the last sweep that saw it declared", res.Deleted)
	}
	w.clk.Advance(2 * time.Second)
	keep.Heartbeat(ctx, keepInst)
	if res := mustSweep(t, second); !slices.Equal(res.Deleted, []string{"dropped"}) {
		t.Fatalf("deleted %v, want [dropped]", res.Deleted)
	}
	mustGet(t, keep, "kept")
}
