package chronos

import (
	"errors"
	"testing"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// The forwarder forwards a partition's queue when its earliest task is due
// or a wake-up names the partition, and every queue once a second, instead
// of every queue whenever one is due.
func TestTheForwarderForwardsOnlyTheQueuesThatAreDue(t *testing.T) {
	pqs := []rdb.PartQueue{{Part: 0, Queue: "a"}, {Part: 1, Queue: "a"}, {Part: 0, Queue: "b"}, {Part: 1, Queue: "b"}}
	f := newForwarder(pqs, []string{"wake0", "wake1"})
	t0 := time.Unix(1000, 0)
	parts := func(reqs []*rdb.ForwardReq) []rdb.PartQueue {
		var out []rdb.PartQueue
		for _, r := range reqs {
			out = append(out, r.PartQueue)
		}
		return out
	}
	same := func(got, want []rdb.PartQueue) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i] != want[i] {
				return false
			}
		}
		return true
	}

	// The first pass forwards everything.
	ix, reqs := f.due(t0)
	if !same(parts(reqs), pqs) {
		t.Fatalf("first pass: %v", parts(reqs))
	}
	reqs[0].Next = t0.Add(10 * time.Millisecond) // a due in 10 ms in partition 0
	reqs[1].Next = t0.Add(20 * time.Millisecond) // and in 20 ms in partition 1
	reqs[3].Err = errors.New("down")             // b of partition 1 failed; b of partition 0 is empty
	f.done(ix, reqs)
	if got := f.next(); !got.Equal(t0.Add(10 * time.Millisecond)) {
		t.Fatalf("next pass at %v, want in 10 ms", got.Sub(t0))
	}
	if _, reqs := f.due(t0.Add(5 * time.Millisecond)); len(reqs) != 0 {
		t.Fatalf("nothing is due after 5 ms, forwarded %v", parts(reqs))
	}
	ix, reqs = f.due(t0.Add(10 * time.Millisecond))
	if !same(parts(reqs), pqs[:1]) {
		t.Fatalf("after 10 ms: %v, want only a of partition 0", parts(reqs))
	}
	f.done(ix, reqs) // now empty
	if got := f.next(); !got.Equal(t0.Add(20 * time.Millisecond)) {
		t.Fatalf("next pass at %v, want in 20 ms", got.Sub(t0))
	}

	// A wake-up of partition 1 forwards both its queues at once.
	f.woken("wake1")
	ix, reqs = f.due(t0.Add(12 * time.Millisecond))
	if !same(parts(reqs), []rdb.PartQueue{pqs[1], pqs[3]}) {
		t.Fatalf("after a wake-up of partition 1: %v", parts(reqs))
	}
	f.done(ix, reqs) // both empty now

	// Nothing known: the next pass is the full one, a second after the last.
	if got := f.next(); !got.Equal(t0.Add(forwardPollMax)) {
		t.Fatalf("next pass at %v, want the full pass at %v", got.Sub(t0), forwardPollMax)
	}
	if _, reqs := f.due(t0.Add(forwardPollMax)); !same(parts(reqs), pqs) {
		t.Fatalf("full pass: %v", parts(reqs))
	}

	// A channel it does not know (cannot happen) forwards everything.
	f.woken("other")
	if _, reqs := f.due(t0.Add(forwardPollMax + time.Millisecond)); !same(parts(reqs), pqs) {
		t.Fatalf("after an unknown wake-up: %v", parts(reqs))
	}
}
