package chaos

import (
	"context"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/leader"
)

// leases reads the holder (instance ID) and epoch of every partition's
// lease.
func (h *harness) leases(t *testing.T) ([]string, []int64) {
	t.Helper()
	ks := make([]leader.Keys, h.layout.Partitions())
	for p := range ks {
		ks[p] = leader.KeysAt(h.layout.Partition(p))
	}
	ls, err := leader.InspectAll(context.Background(), h.rdb, ks)
	if err != nil {
		t.Fatal(err)
	}
	holders, epochs := make([]string, len(ls)), make([]int64, len(ls))
	for p, l := range ls {
		holders[p], epochs[p] = l.Instance, l.Epoch
	}
	return holders, epochs
}

// partitionHarness starts n scheduler processes on a private Redis and
// waits until they share the partitions evenly.
func partitionHarness(t *testing.T, n int) *harness {
	t.Helper()
	if testing.Short() {
		t.Skip("starts scheduler processes")
	}
	if os.Getenv("CHRONOS_TEST_LAYOUT") == "1" {
		t.Skip("layout 1 has a single partition")
	}
	redistest.Parallel(t)
	h := &harness{t: t}
	h.startRedis(false)
	var err error
	if h.layout, err = keyspace.NewResolver(h.rdb, "", keyspace.ResolveOptions{}).Layout(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		h.spawn(i)
	}
	t.Cleanup(func() {
		for _, p := range h.procs {
			if p != nil {
				_ = p.cmd.Process.Signal(syscall.SIGCONT)
				_ = p.cmd.Process.Kill()
			}
		}
		if t.Failed() {
			h.mu.Lock()
			defer h.mu.Unlock()
			var b strings.Builder
			for _, e := range h.events {
				b.WriteString(e.String() + "\n")
			}
			t.Logf("event log:\n%s", b.String())
		}
	})
	share := h.layout.Partitions() / n
	deadline := time.Now().Add(30 * time.Second)
	for {
		holders, _ := h.leases(t)
		count := map[string]int{}
		for _, id := range holders {
			count[id]++
		}
		balanced := len(count) == n && count[""] == 0
		for _, c := range count {
			balanced = balanced && (c == share || c == share+1)
		}
		if balanced {
			t.Logf("partitions shared: %v", count)
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("partitions not shared out within 30s: %v", count)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// slotOf returns the slot of the process with instance ID id.
func (h *harness) slotOf(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, p := range h.procs {
		if p != nil && p.id == id {
			return i
		}
	}
	return -1
}

// watchMoves polls the leases after a fault on instance gone until every
// partition it held is held by another instance, and returns how long each
// took; it fails the test if a partition that gone did not hold changes
// hands or epoch, until hold has passed.
func (h *harness) watchMoves(t *testing.T, gone string, before []string, epochs []int64, at time.Time, hold time.Duration) map[int]time.Duration {
	t.Helper()
	took := map[int]time.Duration{}
	for time.Since(at) < hold || len(took) < countOf(before, gone) {
		holders, now := h.leases(t)
		for p, id := range holders {
			switch {
			case before[p] == gone:
				if _, ok := took[p]; !ok && id != "" && id != gone {
					took[p] = time.Since(at)
				}
			case id != before[p] || now[p] != epochs[p]:
				t.Fatalf("partition %d of %s moved to %q (epoch %d → %d) after a fault on %s", p, before[p], id, epochs[p], now[p], gone)
			}
		}
		if time.Since(at) > 30*time.Second {
			t.Fatalf("partitions of %s still not taken over after 30s: %v", gone, took)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return took
}

func countOf(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// A SIGKILLed instance's partitions, and only those, move to the other
// instances within LeaderTTL + 1s, before its heartbeat expires
// (InstanceTTL 3 s): its standbys take them once their leases stayed
// free for the grace period, and keep them when its heartbeat expires.
func TestAKilledInstancesPartitionsAloneMoveWithinTheTTL(t *testing.T) {
	h := partitionHarness(t, 3)
	before, epochs := h.leases(t)
	victim := before[0]
	slot := h.slotOf(victim)
	killed := time.Now()
	h.wait(h.signal(slot, syscall.SIGKILL, "kill"))
	// Watch past the expiry of its heartbeat (3 × LeaderTTL): the
	// assignment without it must not move the partitions again.
	took := h.watchMoves(t, victim, before, epochs, killed, 3*leaderTTL+2*time.Second)
	var worst time.Duration
	for _, d := range took {
		worst = max(worst, d)
	}
	t.Logf("SIGKILL of %s, which led %d of %d partitions: taken over in max %v (LeaderTTL %v): %v",
		victim, len(took), len(before), worst, leaderTTL, took)
	if worst > leaderTTL+time.Second {
		t.Errorf("takeover took %v, more than LeaderTTL + 1s", worst)
	}
	after, _ := h.leases(t)
	count := map[string]int{}
	for _, id := range after {
		count[id]++
	}
	if count[victim] != 0 || count[""] != 0 || len(count) != 2 {
		t.Errorf("after the victim's heartbeat expired: %v", count)
	}
	for id, c := range count {
		if c != len(after)/2 {
			t.Errorf("after the victim's heartbeat expired, %s leads %d partitions: %v", id, c, count)
		}
	}
}

// A SIGTERMed instance hands its partitions over with no gap and no
// double: it deregisters, then resigns each; the others take them within
// milliseconds (the resign notices), every other partition stays where it
// was, and every trigger of every schedule is enqueued once.
func TestAGracefulShutdownHandsItsPartitionsOverWithNoGap(t *testing.T) {
	h := partitionHarness(t, 3)
	time.Sleep(2 * time.Second) // firings under the first assignment
	before, epochs := h.leases(t)
	victim := before[len(before)-1]
	slot := h.slotOf(victim)
	termed := time.Now()
	p := h.signal(slot, syscall.SIGTERM, "term")
	took := h.watchMoves(t, victim, before, epochs, termed, 2*time.Second)
	h.wait(p)
	var worst time.Duration
	for _, d := range took {
		worst = max(worst, d)
	}
	t.Logf("SIGTERM of %s, which led %d partitions: taken over in max %v: %v", victim, len(took), worst, took)
	if worst > leaderTTL/2 {
		t.Errorf("a graceful hand-over took %v: the resign notices were not acted on", worst)
	}
	time.Sleep(2 * time.Second) // firings after the hand-over
	for i, p := range h.procs {
		if i != slot && p != nil {
			h.wait(h.signal(i, syscall.SIGTERM, "term"))
		}
	}
	h.mu.Lock()
	events := slices.Clone(h.events)
	h.mu.Unlock()
	rep := analyze(t, h.rdb, h.layout, events, time.Since(termed))
	t.Logf("report:\n%s", rep)
	if len(rep.duplicates) > 0 || len(rep.missing) > 0 {
		t.Errorf("duplicates %v, missing %v", rep.duplicates, rep.missing)
	}
}
