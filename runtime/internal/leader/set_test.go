package leader

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

// runSet runs a Set of the partitions of layout l for instance id, every
// elector in mode, until the test ends.
func runSet(t *testing.T, s *redistest.Server, l keyspace.Layout, id string, ttl time.Duration, mode Mode, onResign func(int)) *Set {
	t.Helper()
	cfgs := make([]Config, l.Partitions())
	for p := range cfgs {
		cfgs[p] = Config{Namespace: l.Namespace(), Prefix: l.Partition(p), Partition: p, InstanceID: id, TTL: ttl, Mode: mode}
	}
	set := NewSet(s.NewClient(nil), cfgs, onResign)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := set.Run(ctx); err != nil {
			t.Errorf("Set.Run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return set
}

func holds(set *Set, p int) bool { _, ok := set.Elector(p).Current(); return ok }

// Each partition is its own election, with its own lease, epoch and term
// record; the electors of a Set share one pub/sub connection, and a
// partition handed from one instance to another (the holder set Idle, the
// new owner set to Contend) changes hands within milliseconds, the others
// staying where they were.
func TestASetHandsOverOnePartitionAndSharesOneListener(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	l, err := keyspace.Partitioned("", 3)
	if err != nil {
		t.Fatal(err)
	}
	const ttl = 2 * time.Second
	a := runSet(t, s, l, "a", ttl, Contend, nil)
	waitFor(t, "a leads every partition", func() bool { return holds(a, 0) && holds(a, 1) && holds(a, 2) })
	resigned := make(chan int, 8)
	b := runSet(t, s, l, "b", ttl, Idle, func(p int) { resigned <- p })

	// One subscriber connection per Set, whatever the partitions.
	ctx := context.Background()
	waitFor(t, "both listeners subscribed", func() bool {
		list, _ := s.Client().ClientList(ctx).Result()
		return strings.Count(list, " sub=3 ") == 2
	})

	before, err := InspectAll(ctx, s.Client(), []Keys{KeysAt(l.Partition(0)), KeysAt(l.Partition(1)), KeysAt(l.Partition(2))})
	if err != nil {
		t.Fatal(err)
	}
	for p, le := range before {
		if !le.Held || le.Instance != "a" || le.Since.IsZero() || time.Since(le.Since) > time.Minute {
			t.Fatalf("partition %d: %+v, want held by a with the start of its term", p, le)
		}
	}
	b.Elector(1).SetMode(Contend)
	start := time.Now()
	a.Elector(1).SetMode(Idle)
	waitFor(t, "b leads partition 1", func() bool { return holds(b, 1) })
	took := time.Since(start)
	t.Logf("hand-over of one partition: %v (TTL %v)", took, ttl)
	if took > ttl/2 {
		t.Errorf("hand-over took %v: the resign notice did not reach the new owner", took)
	}
	if got := <-resigned; got != 1 {
		t.Errorf("resign notice for partition %d, want 1", got)
	}
	if holds(a, 1) || !holds(a, 0) || !holds(a, 2) || holds(b, 0) || holds(b, 2) {
		t.Fatal("another partition moved")
	}
	after, _ := Inspect(ctx, s.Client(), KeysAt(l.Partition(1)))
	if after.Instance != "b" || after.Epoch != before[1].Epoch+1 || !after.Since.After(before[1].Since) {
		t.Fatalf("partition 1 after the hand-over: %+v (before %+v)", after, before[1])
	}
	if other, _ := Inspect(ctx, s.Client(), KeysAt(l.Partition(2))); other.Epoch != before[2].Epoch {
		t.Fatalf("partition 2's epoch moved: %d → %d", before[2].Epoch, other.Epoch)
	}
}

// A follower in Standby takes a lease only once it has stayed free for the
// grace period: a contending owner that is live takes it first, and a
// lease its holder stopped renewing is taken within TTL + grace.
func TestStandbyTakesOnlyALeaseThatStayedFree(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	const ttl, grace = time.Second, 300 * time.Millisecond
	a := startMember(t, s, Config{InstanceID: "a", TTL: ttl}, nil)
	waitLeader(t, []*member{a})
	b := startMember(t, s, Config{InstanceID: "b", TTL: ttl, Grace: grace, Mode: Standby}, nil)
	c := startMember(t, s, Config{InstanceID: "c", TTL: ttl, Mode: Idle}, nil)

	// a hands over to c, which contends: c, not the standby, takes it.
	c.e.SetMode(Contend)
	a.e.SetMode(Idle)
	waitFor(t, "c leads", func() bool { _, ok := c.e.Current(); return ok })
	time.Sleep(2 * grace)
	if _, ok := b.e.Current(); ok {
		t.Fatal("the standby took a lease the contending owner took")
	}

	// c stops renewing (its connection is cut, as if it crashed): b takes
	// over once the lease expired and stayed free for the grace period.
	c.e.SetMode(Idle) // and it will not contend again
	waitFor(t, "c's resignation", func() bool { _, ok := c.e.Current(); return !ok })
	// Put a lease nobody renews in its place: the holder that crashed.
	if err := s.Client().Set(context.Background(), KeysFor("").Lock, "99:crashed:x", ttl).Err(); err != nil {
		t.Fatal(err)
	}
	lost := time.Now()
	waitFor(t, "b leads", func() bool { _, ok := b.e.Current(); return ok })
	took := time.Since(lost)
	t.Logf("standby takeover after the holder stopped: %v (TTL %v, grace %v)", took, ttl, grace)
	if took < ttl+grace-50*time.Millisecond || took > ttl+time.Second {
		t.Errorf("standby took over after %v; want between TTL+grace and TTL+1s", took)
	}
	if term, _ := b.e.Current(); term.Epoch <= 99 {
		t.Errorf("epoch %d does not follow the crashed holder's 99", term.Epoch)
	}
}
