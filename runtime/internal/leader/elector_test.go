package leader

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// member is one elector under test with its own client and a record of its
// transitions.
type member struct {
	e       *Elector
	rdb     *redis.Client
	cancel  context.CancelFunc
	done    chan struct{}
	changes chan Change
}

func (m *member) stop() {
	m.cancel()
	<-m.done
}

func startMember(t *testing.T, s *redistest.Server, cfg Config, hook func(*Elector)) *member {
	t.Helper()
	m := &member{rdb: s.NewClient(nil), done: make(chan struct{}), changes: make(chan Change, 256)}
	cfg.OnChange = func(c Change) { m.changes <- c }
	m.e = New(m.rdb, cfg)
	if hook != nil {
		hook(m.e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() {
		defer close(m.done)
		if err := m.e.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(m.stop)
	return m
}

func startMembers(t *testing.T, s *redistest.Server, n int, ttl time.Duration) []*member {
	ms := make([]*member, n)
	for i := range ms {
		ms[i] = startMember(t, s, Config{InstanceID: fmt.Sprintf("i%d", i), TTL: ttl}, nil)
	}
	return ms
}

// leaders returns the members that are trusted leaders right now.
func leaders(ms []*member) []*member {
	var out []*member
	for _, m := range ms {
		if _, ok := m.e.Current(); ok {
			out = append(out, m)
		}
	}
	return out
}

// waitFor polls cond until it holds or a generous deadline passes. The
// deadline only bounds a hung test; it is not a timing assertion.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitLeader waits until exactly one member is a trusted leader, checking
// on every poll that there are never two.
func waitLeader(t *testing.T, ms []*member) *member {
	t.Helper()
	var l *member
	waitFor(t, "a leader", func() bool {
		ls := leaders(ms)
		if len(ls) > 1 {
			t.Fatalf("%d trusted leaders at once", len(ls))
		}
		if len(ls) == 1 {
			l = ls[0]
		}
		return l != nil
	})
	return l
}

func nextChange(t *testing.T, m *member) Change {
	t.Helper()
	select {
	case c := <-m.changes:
		return c
	case <-time.After(20 * time.Second):
		t.Fatal("no transition")
		return Change{}
	}
}

func TestExactlyOneLeaderAmongElectors(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	ms := startMembers(t, s, 5, time.Second)
	l := waitLeader(t, ms)

	// Over several renewal periods the same member stays the only leader
	// and the lease holds its token.
	end := time.Now().Add(2 * time.Second)
	for time.Now().Before(end) {
		ls := leaders(ms)
		if len(ls) > 1 {
			t.Fatalf("%d trusted leaders at once", len(ls))
		}
		time.Sleep(10 * time.Millisecond)
	}
	term, ok := l.e.Current()
	if !ok {
		t.Fatal("leader lost its term without any fault")
	}
	got, err := l.rdb.Get(context.Background(), KeysFor("").Lock).Result()
	if err != nil || got != term.Token {
		t.Fatalf("lease = %q, %v; want leader's token %q", got, err, term.Token)
	}
	if term.Instance() != l.e.InstanceID() {
		t.Fatalf("token instance %q, want %q", term.Instance(), l.e.InstanceID())
	}
}

func TestResignHandsOverWellUnderTTL(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	const ttl = 5 * time.Second
	ms := startMembers(t, s, 3, ttl)
	l := waitLeader(t, ms)
	// Let every follower try once and subscribe before the resignation.
	time.Sleep(200 * time.Millisecond)

	rest := without(ms, l)
	start := time.Now()
	l.stop()
	next := waitLeader(t, rest)
	took := time.Since(start)
	t.Logf("takeover after graceful resign: %v (TTL %v)", took, ttl)
	if took >= ttl {
		t.Fatalf("takeover after resign took %v, not under the TTL %v: the resign hint was not used", took, ttl)
	}
	if c := nextChange(t, l); !c.Leader {
		t.Fatalf("first change of old leader = %+v, want acquisition", c)
	}
	if c := nextChange(t, l); c.Leader || c.Err != nil {
		t.Fatalf("old leader's second change = %+v, want a clean resignation", c)
	}
	_ = next
}

func TestCrashedLeaderIsReplacedWithinTTL(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	const ttl = time.Second
	ms := startMembers(t, s, 3, ttl)
	l := waitLeader(t, ms)

	// A crash: the leader's connection goes away, so it can neither renew
	// nor resign, and its lease has to expire.
	start := time.Now()
	_ = l.rdb.Close()
	waitLeader(t, without(ms, l))
	took := time.Since(start)
	t.Logf("takeover after crash: %v (TTL %v)", took, ttl)
	if slack := ttl/10 + time.Second; took > ttl+slack {
		t.Fatalf("takeover took %v, more than TTL + %v", took, slack)
	}
	c := nextChange(t, l) // acquired
	c = nextChange(t, l)
	if c.Leader || c.Err == nil {
		t.Fatalf("crashed leader's change = %+v, want step-down with an error", c)
	}
}

func TestEpochStrictlyIncreasesAcrossTerms(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	var (
		mu     sync.Mutex
		epochs []int64
	)
	record := func(c Change) {
		if c.Leader {
			mu.Lock()
			epochs = append(epochs, c.Term.Epoch)
			mu.Unlock()
		}
	}
	// Start and stop electors one after another; each resignation hands
	// the lease to a new term.
	for i := range 5 {
		e := New(s.Client(), Config{InstanceID: fmt.Sprintf("i%d", i), TTL: time.Second, OnChange: record})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = e.Run(ctx) }()
		waitFor(t, "acquisition", func() bool { _, ok := e.Current(); return ok })
		cancel()
		<-done
	}
	mu.Lock()
	defer mu.Unlock()
	if len(epochs) != 5 {
		t.Fatalf("got %d acquisitions, want 5: %v", len(epochs), epochs)
	}
	for i := 1; i < len(epochs); i++ {
		if epochs[i] <= epochs[i-1] {
			t.Fatalf("epochs not strictly increasing: %v", epochs)
		}
	}
}

// When Redis loses its data, the epoch counter goes with it; the next
// terms still get epochs above every earlier one, the electors' own memory
// of the highest epoch seen being the floor. Both the leader's and a
// follower's (it saw the leader's token in its failed acquisitions).
func TestEpochsDoNotRepeatWhenRedisLosesItsData(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	ctx := context.Background()
	ms := startMembers(t, s, 3, 500*time.Millisecond)
	// Many terms went before: the counter is at 40 when this one starts.
	if err := s.Client().Set(ctx, KeysFor("").Epoch, 40, 0).Err(); err != nil {
		t.Fatal(err)
	}
	gone := waitLeader(t, ms)
	gone.stop() // a new term, at epoch 41
	ms = slices.DeleteFunc(ms, func(m *member) bool { return m == gone })
	l := waitLeader(t, ms)
	firstTerm, _ := l.e.Current()
	first := struct{ term Term }{firstTerm}
	waitFor(t, "the followers to see the leader's token", func() bool {
		for _, m := range ms {
			if m != l && m.e.maxEpoch.Load() < first.term.Epoch {
				return false
			}
		}
		return true
	})
	if err := s.Client().FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	var next Term
	waitFor(t, "a term after the loss", func() bool {
		for _, m := range ms {
			if tm, ok := m.e.Current(); ok && tm.Token != first.term.Token {
				next = tm
				return true
			}
		}
		return false
	})
	if next.Epoch <= first.term.Epoch {
		t.Fatalf("epoch %d after the loss, %d before: an epoch was issued twice", next.Epoch, first.term.Epoch)
	}
}

func TestStaleTokenCannotRenewOrPassFence(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	ctx := context.Background()
	rdb := s.Client()
	ms := startMembers(t, s, 2, time.Second)
	a := waitLeader(t, ms)
	old, _ := a.e.Current()
	if err := Fence(ctx, rdb, KeysFor(""), old); err != nil {
		t.Fatalf("current leader fails the fence: %v", err)
	}
	a.stop()
	b := waitLeader(t, without(ms, a))
	cur, _ := b.e.Current()
	if cur.Epoch <= old.Epoch {
		t.Fatalf("new epoch %d not above old %d", cur.Epoch, old.Epoch)
	}

	n, err := renewScript.Run(ctx, rdb, []string{KeysFor("").Lock}, old.Token, 1000, 0).Int()
	if err != nil || n != 0 {
		t.Fatalf("renew with stale token = %d, %v; want 0", n, err)
	}
	if err := Fence(ctx, rdb, KeysFor(""), old); !errors.Is(err, ErrFenced) {
		t.Fatalf("fence with stale token: %v, want ErrFenced", err)
	}
	if err := Fence(ctx, rdb, KeysFor(""), cur); err != nil {
		t.Fatalf("fence with current token: %v", err)
	}

	// A fenced script writes nothing when its token is stale.
	write := FenceScript(`redis.call('SET', KEYS[2], ARGV[2]) return 1`)
	err = CheckFence(write.Run(ctx, rdb, FenceKeys(KeysFor(""), "{chronos}:probe"), FenceArgs(old, "stale")).Err())
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("fenced write with stale token: %v, want ErrFenced", err)
	}
	if n, _ := rdb.Exists(ctx, "{chronos}:probe").Result(); n != 0 {
		t.Fatal("fenced script wrote with a stale token")
	}
	if err := CheckFence(write.Run(ctx, rdb, FenceKeys(KeysFor(""), "{chronos}:probe"), FenceArgs(cur, "ok")).Err()); err != nil {
		t.Fatalf("fenced write with current token: %v", err)
	}
}

func TestRedisDownMeansNoLeaderAndOneLeaderAfterRestart(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t, redistest.Options{AOF: true})
	ms := startMembers(t, s, 3, time.Second)
	l := waitLeader(t, ms)
	term, _ := l.e.Current()
	<-l.changes // acquired

	s.Kill()
	c := nextChange(t, l)
	if c.Leader || c.Err == nil || c.Term.Token != term.Token {
		t.Fatalf("change after Redis died = %+v, want step-down with an error", c)
	}
	// Nobody is leader while Redis is down, and nobody can pass the fence.
	if ls := leaders(ms); len(ls) != 0 {
		t.Fatalf("%d trusted leaders while Redis is down", len(ls))
	}
	if err := Fence(context.Background(), l.rdb, KeysFor(""), term); err == nil {
		t.Fatal("fence passed while Redis is down")
	}

	s.Restart()
	waitLeader(t, ms)
	// And it stays exactly one.
	end := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(end) {
		if ls := leaders(ms); len(ls) != 1 {
			t.Fatalf("%d trusted leaders after restart", len(ls))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPausedLeaderIsNotTrustedAndIsFenced(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	const ttl = time.Second
	stall := make(chan struct{})
	var stalled sync.Once
	armed := make(chan struct{})
	pause := func(e *Elector) {
		e.beforeRenew = func(ctx context.Context) {
			select {
			case <-armed:
				stalled.Do(func() { <-stall })
			default:
			}
		}
	}
	a := startMember(t, s, Config{InstanceID: "a", TTL: ttl}, pause)
	waitLeader(t, []*member{a})
	term, _ := a.e.Current()
	<-a.changes // acquired
	b := startMember(t, s, Config{InstanceID: "b", TTL: ttl}, nil)

	close(armed) // a's next renewal blocks: the process is "paused"
	waitLeader(t, []*member{b})
	if term.Trusted(time.Now()) {
		t.Fatal("paused leader's term still trusted after another took over")
	}
	if _, ok := a.e.Current(); ok {
		t.Fatal("paused leader reports a trusted term")
	}
	if err := Fence(context.Background(), s.Client(), KeysFor(""), term); !errors.Is(err, ErrFenced) {
		t.Fatalf("paused leader's fence: %v, want ErrFenced", err)
	}

	close(stall) // resume: it must notice and step down, not renew
	c := nextChange(t, a)
	if c.Leader || !errors.Is(c.Err, ErrTrustExpired) {
		t.Fatalf("resumed leader's change = %+v, want step-down with ErrTrustExpired", c)
	}
	if _, ok := b.e.Current(); !ok {
		t.Fatal("new leader lost its term when the old one resumed")
	}
}

func TestRunTwiceConcurrentlyIsAnError(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	m := startMember(t, s, Config{TTL: time.Second}, nil)
	waitLeader(t, []*member{m})
	if err := m.e.Run(context.Background()); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second Run: %v, want ErrAlreadyRunning", err)
	}
}

func without(ms []*member, x *member) []*member {
	var out []*member
	for _, m := range ms {
		if m != x {
			out = append(out, m)
		}
	}
	return out
}

// failNext makes the next script call of a client fail with a network-like
// error, once, when armed.
type failNext struct{ armed chan struct{} }

func (f failNext) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f failNext) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" {
			select {
			case <-f.armed:
				err := errors.New("injected: connection reset by peer")
				cmd.SetErr(err)
				return err
			default:
			}
		}
		return next(ctx, cmd)
	}
}
func (f failNext) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func TestARenewalErrorEndsTheTermAndANewOneGetsANewEpoch(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	f := failNext{armed: make(chan struct{}, 1)}
	m := startMember(t, s, Config{InstanceID: "solo", TTL: time.Second}, func(e *Elector) {
		e.client.(*redis.Client).AddHook(f)
	})
	first := nextChange(t, m)
	if !first.Leader {
		t.Fatalf("first change = %+v", first)
	}
	f.armed <- struct{}{} // the next renewal fails once

	down := nextChange(t, m)
	if down.Leader || down.Err == nil || down.Term.Token != first.Term.Token {
		t.Fatalf("after a renewal error: %+v, want the first term to end with the error", down)
	}
	// Its own lease is still in Redis; it may take it back at once, but
	// only as a new term: the old token no longer passes the fence.
	again := nextChange(t, m)
	if !again.Leader || again.Term.Epoch <= first.Term.Epoch {
		t.Fatalf("re-acquisition = %+v, want a new term with a higher epoch than %d", again, first.Term.Epoch)
	}
	if err := Fence(context.Background(), s.Client(), KeysFor(""), first.Term); !errors.Is(err, ErrFenced) {
		t.Fatalf("old term's fence: %v, want ErrFenced", err)
	}
}

func TestReplicasMustAcknowledgeTheLease(t *testing.T) {
	redistest.Parallel(t)
	primary := redistest.Start(t)
	replica := redistest.Start(t)
	if primary.External() {
		t.Skip("needs two private servers")
	}
	host, port, _ := strings.Cut(primary.Addr(), ":")
	ctx := context.Background()
	// Start the full sync at once instead of after the default 5 s delay.
	if err := primary.Client().ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := replica.Client().SlaveOf(ctx, host, port).Err(); err != nil {
		t.Fatal(err)
	}
	linkStart := time.Now()
	waitFor(t, "replication link", func() bool {
		info, _ := replica.Client().Info(ctx, "replication").Result()
		return strings.Contains(info, "master_link_status:up")
	})

	t.Logf("replication link up after %v", time.Since(linkStart))
	m := startMember(t, primary, Config{InstanceID: "r", TTL: time.Second, Replicas: 1}, nil)
	if c := nextChange(t, m); !c.Leader {
		t.Fatalf("with a replica attached: %+v, want a term", c)
	}
	// The replica goes away: the next renewal is not acknowledged, and the
	// term ends instead of trusting a lease a failover could lose.
	replica.Kill()
	c := nextChange(t, m)
	if c.Leader || !errors.Is(c.Err, ErrNotReplicated) {
		t.Fatalf("after losing the replica: %+v, want step-down with ErrNotReplicated", c)
	}
	// Nor can it start a new term while no replica acknowledges.
	time.Sleep(1500 * time.Millisecond)
	if _, ok := m.e.Current(); ok {
		t.Fatal("trusted term without an acknowledging replica")
	}
}

func TestInspectShowsTheHolder(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	ctx := context.Background()
	l, err := Inspect(ctx, s.Client(), KeysFor(""))
	if err != nil || l.Held || l.LastEpoch != 0 {
		t.Fatalf("before any election: %+v, %v", l, err)
	}
	m := startMember(t, s, Config{InstanceID: "pod-a:8080", TTL: 2 * time.Second}, nil)
	waitLeader(t, []*member{m})
	term, _ := m.e.Current()
	l, err = Inspect(ctx, s.Client(), KeysFor(""))
	if err != nil || !l.Held || l.Token != term.Token || l.Epoch != term.Epoch ||
		l.Instance != "pod-a:8080" || l.LastEpoch != term.Epoch || l.Remaining <= 0 || l.Remaining > 2*time.Second {
		t.Fatalf("Inspect = %+v, %v; want the holder of %v", l, err, term)
	}
	m.stop()
	if l, _ = Inspect(ctx, s.Client(), KeysFor("")); l.Held || l.LastEpoch != term.Epoch {
		t.Fatalf("after resignation: %+v", l)
	}
}
