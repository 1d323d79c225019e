package schedstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/firing"
	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/redis/go-redis/v9"
)

// minimalFireScript is the shape of the scheduler's fire script without the queue:
// fence, record the firing (a list stands in for the enqueue), and move the
// schedule's state, all in one atomic step.
//
//	KEYS[1] lease, KEYS[2] firing log, KEYS[3] schedule hash
//	ARGV[1] token, ARGV[2] trigger time (ms), ARGV[3] next (ms), ARGV[4] epoch
var minimalFireScript = leader.FenceScript(`
redis.call('RPUSH', KEYS[2], ARGV[2] .. '|' .. ARGV[4])
redis.call('HSET', KEYS[3], 'last_fired', ARGV[2], 'next_fire', ARGV[3])
return 1
`)

// node is one replica: an elector, and while it leads, a firing loop
// started from the schedule's durable state. The elector and the loop use
// separate connections, so a test can cut the elector off while the loop
// still reaches Redis (a partial partition, as in RedBeat #129).
type node struct {
	t        *testing.T
	rdb      *redis.Client // firing
	erdb     *redis.Client // election
	store    *Store
	stall    chan time.Duration // a pause injected between the trust check and the write
	stalling chan struct{}      // closed when the injected pause begins
	e        *leader.Elector
	next     firing.NextFunc

	stop context.CancelFunc
	done chan struct{}

	mu       sync.Mutex
	stopLoop context.CancelFunc
	loopDone chan struct{}
}

const tick = 50 * time.Millisecond

func every50ms(after time.Time) time.Time { return after.Truncate(tick).Add(tick) }

func startNode(t *testing.T, srv *redistest.Server, id string) *node {
	n := &node{t: t, rdb: srv.NewClient(nil), erdb: srv.NewClient(nil), next: every50ms,
		done: make(chan struct{}), stall: make(chan time.Duration, 1), stalling: make(chan struct{})}
	n.store = New(n.rdb, Config{})
	n.e = leader.New(n.erdb, leader.Config{InstanceID: id, TTL: 400 * time.Millisecond, OnChange: n.onChange})
	ctx, cancel := context.WithCancel(context.Background())
	n.stop = cancel
	go func() { defer close(n.done); _ = n.e.Run(ctx) }()
	return n
}

func (n *node) onChange(c leader.Change) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !c.Leader {
		if n.stopLoop != nil {
			n.stopLoop()
			<-n.loopDone
			n.stopLoop = nil
		}
		return
	}
	// A new term: read the durable state first, then fire from it.
	sc, err := n.store.Get(context.Background(), "tick")
	if err != nil {
		n.t.Errorf("load state: %v", err)
		return
	}
	loop := firing.New(firing.Config{Fire: n.fire})
	if sc.State.Next.IsZero() {
		loop.Set("tick", n.next, time.Now())
	} else {
		loop.SetAt("tick", n.next, sc.State.Next)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.stopLoop, n.loopDone = cancel, make(chan struct{})
	done := n.loopDone
	go func() { defer close(done); _ = loop.Run(ctx) }()
}

func (n *node) fire(ctx context.Context, now time.Time, batch []firing.Due) {
	term, ok := n.e.Current()
	if !ok {
		return
	}
	wctx := ctx
	select {
	case d := <-n.stall:
		close(n.stalling)
		time.Sleep(d) // trusted a moment ago; by now another term may have started
		// A paused process does not see its cancellation before the write
		// is on the wire.
		wctx = context.WithoutCancel(ctx)
	default:
	}
	for _, d := range batch {
		err := leader.CheckFence(minimalFireScript.Run(wctx, n.rdb,
			leader.FenceKeys(leader.KeysFor(""), "{chronos}:test-fired", n.store.SchedKey(d.ID)),
			leader.FenceArgs(term, d.At.UnixMilli(), d.Next.UnixMilli(), term.Epoch)...).Err())
		if errors.Is(err, leader.ErrFenced) || wctx.Err() != nil {
			return // the term is over; the next leader starts from the store
		}
		if err != nil {
			n.t.Logf("fire: %v", err)
			return
		}
	}
}

// crash stops the node without resigning: its connections go first, so
// its lease has to expire.
func (n *node) crash() {
	_ = n.erdb.Close()
	_ = n.rdb.Close()
	n.stop()
	<-n.done
}

// partition stalls the firing loop in its next firing, between the trust
// check and the write, for longer than the lease TTL, and cuts the elector
// off Redis meanwhile; the loop keeps its own connection. By the time the
// write goes out another term has started: the fence must reject it.
func (n *node) partition() {
	n.stall <- 600 * time.Millisecond
	<-n.stalling
	_ = n.erdb.Close()
	n.stop()
	<-n.done
}

// leave stops the node cleanly: it resigns.
func (n *node) leave() {
	n.stop()
	<-n.done
}

// TestFailoversNeverFireATriggerTwice runs three replicas that fire a 50 ms
// schedule from the store while their leaders resign, crash, or lose the
// election's connection in the middle of a firing, over and over, and
// checks that no trigger time was ever recorded twice: the fence, the state
// moving in the same script, and each new term reading the state after
// acquiring are enough, without a dedup key. (Without the fence the
// partitioned leader's late write duplicates a trigger.)
func TestFailoversNeverFireATriggerTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for a few seconds")
	}
	srv := redistest.Start(t)
	ctx := context.Background()
	st := New(srv.Client(), Config{})
	inst := Instance{ID: "setup", Version: "v1", Started: time.Now()}
	st.Heartbeat(ctx, inst)
	if _, err := st.Register(ctx, inst.Declarer(), []Definition{{ID: "tick", Kind: "interval", Spec: "50ms",
		Jobs: []Job{{Name: "main", Kind: "noop"}}}}); err != nil {
		t.Fatal(err)
	}

	nodes := []*node{startNode(t, srv, "n0"), startNode(t, srv, "n1"), startNode(t, srv, "n2")}
	leaderOf := func() int {
		for i, n := range nodes {
			if _, ok := n.e.Current(); ok {
				return i
			}
		}
		return -1
	}
	for round := range 9 {
		var l int
		deadline := time.Now().Add(10 * time.Second)
		for l = leaderOf(); l < 0; l = leaderOf() {
			if time.Now().After(deadline) {
				t.Fatal("no leader")
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // let it fire a few times
		switch round % 3 {
		case 0:
			nodes[l].leave()
		case 1:
			nodes[l].crash()
		case 2:
			nodes[l].partition()
		}
		nodes[l] = startNode(t, srv, fmt.Sprintf("n%d-%d", l, round))
	}
	for _, n := range nodes {
		n.leave()
	}

	log, err := srv.Client().LRange(ctx, "{chronos}:test-fired", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]string{}
	epochs := map[string]bool{}
	var prev int64
	for _, entry := range log {
		at, epoch, _ := strings.Cut(entry, "|")
		ms, _ := strconv.ParseInt(at, 10, 64)
		if first, dup := seen[ms]; dup {
			t.Errorf("trigger %d fired twice: epochs %s and %s", ms, first, epoch)
		}
		if ms < prev {
			t.Errorf("trigger %d recorded after %d", ms, prev)
		}
		seen[ms], prev = epoch, ms
		epochs[epoch] = true
	}
	t.Logf("%d firings by %d terms", len(log), len(epochs))
	if len(epochs) < 6 {
		t.Errorf("only %d terms fired; the failovers did not happen as planned", len(epochs))
	}
}
