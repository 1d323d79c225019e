package rdb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chronos-go/chronos/internal/redistest"
)

// leaseEnv is a queue "q" holding one task, read by consumer "a".
func leaseEnv(t *testing.T) (*RDB, Entry) {
	t.Helper()
	redistest.Parallel(t)
	r := New(redistest.Start(t).Client(), "")
	ctx := context.Background()
	if err := r.EnsureGroup(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	m := &Message{ID: NewID(time.Now()), Kind: "k", Queue: "q", Args: []byte(`{}`)}
	b, _ := m.Encode()
	if _, _, err := r.Enqueue(ctx, "q", b, m.ID, time.Time{}, time.Now(), "", 0); err != nil {
		t.Fatal(err)
	}
	es, _, err := r.Fetch(ctx, "a", []string{"q"}, 10)
	if err != nil || len(es) != 1 {
		t.Fatalf("Fetch = %v, %v", es, err)
	}
	return r, es[0]
}

func TestOnlyTheHolderOfAnEntryCanFinishIt(t *testing.T) {
	r, e := leaseEnv(t)
	ctx := context.Background()
	time.Sleep(5 * time.Millisecond)
	stolen, _, err := r.Reclaim(ctx, "q", "b", time.Millisecond, "0-0", 10)
	if err != nil || len(stolen) != 1 || stolen[0].Deliveries != 2 {
		t.Fatalf("Reclaim = %+v, %v", stolen, err)
	}
	f := &Finish{Queue: "q", EntryID: e.ID, Outcome: Done, TaskID: "t", Kind: "k", RunsCap: 10, DeadCap: 10,
		Run: &RunRecord{Status: RunSuccess}}
	if res, err := r.Finish(ctx, "a", f); err != nil || res != LeaseLost {
		t.Fatalf("Finish by the old holder = %v, %v; want LeaseLost", res, err)
	}
	if res, err := r.Finish(ctx, "b", f); err != nil || res != Finished {
		t.Fatalf("Finish by the new holder = %v, %v; want Finished", res, err)
	}
	if res, err := r.Finish(ctx, "b", f); err != nil || res != AlreadyDone {
		t.Fatalf("second Finish = %v, %v; want AlreadyDone", res, err)
	}
	if n := r.C.XLen(ctx, r.K.Runs("k")).Val(); n != 1 {
		t.Fatalf("run records = %d, want 1", n)
	}
}

func TestExtendReportsLeasesTakenByOthers(t *testing.T) {
	r, e := leaseEnv(t)
	ctx := context.Background()
	if lost, err := r.Extend(ctx, "q", "a", []string{e.ID}); err != nil || len(lost) != 0 {
		t.Fatalf("Extend by the holder = %v, %v", lost, err)
	}
	time.Sleep(5 * time.Millisecond)
	if _, _, err := r.Reclaim(ctx, "q", "b", time.Millisecond, "0-0", 10); err != nil {
		t.Fatal(err)
	}
	lost, err := r.Extend(ctx, "q", "a", []string{e.ID})
	if err != nil || len(lost) != 1 || lost[0] != e.ID {
		t.Fatalf("Extend after takeover = %v, %v; want the entry reported lost", lost, err)
	}
}

func TestExtendKeepsTheEntryFromBeingReclaimed(t *testing.T) {
	r, e := leaseEnv(t)
	ctx := context.Background()
	time.Sleep(30 * time.Millisecond)
	if _, err := r.Extend(ctx, "q", "a", []string{e.ID}); err != nil {
		t.Fatal(err)
	}
	got, _, err := r.Reclaim(ctx, "q", "b", 20*time.Millisecond, "0-0", 10)
	if err != nil || len(got) != 0 {
		t.Fatalf("Reclaim right after a renewal = %+v, %v; want nothing", got, err)
	}
}

func TestReleasedEntryIsReclaimableAtOnceWithoutCountingADelivery(t *testing.T) {
	r, e := leaseEnv(t)
	ctx := context.Background()
	if err := r.Release(ctx, "q", "a", []string{e.ID}, time.Hour); err != nil {
		t.Fatal(err)
	}
	got, _, err := r.Reclaim(ctx, "q", "b", time.Hour, "0-0", 10)
	if err != nil || len(got) != 1 || got[0].ID != e.ID {
		t.Fatalf("Reclaim after release = %+v, %v", got, err)
	}
	if got[0].Deliveries != 1 {
		t.Fatalf("deliveries = %d, want 1: the released delivery never ran", got[0].Deliveries)
	}
}

func TestForwardMovesOnlyDueTasksAndReportsTheNext(t *testing.T) {
	redistest.Parallel(t)
	r := New(redistest.Start(t).Client(), "")
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	for i, d := range []time.Duration{-time.Second, 0, time.Minute} {
		m := &Message{ID: NewID(now), Kind: "k", Queue: "q", Args: []byte(`{}`), Attempt: i}
		b, _ := m.Encode()
		// Enqueue with a "now" before the due time so each lands in the delayed set.
		if _, _, err := r.Enqueue(ctx, "q", b, m.ID, now.Add(d), now.Add(-time.Hour), "", 0); err != nil {
			t.Fatal(err)
		}
	}
	moved, next, err := r.Forward(ctx, "q", now, 100)
	if err != nil || moved != 2 || !next.Equal(now.Add(time.Minute)) {
		t.Fatalf("Forward = %d, %v, %v", moved, next, err)
	}
	if n := r.C.XLen(ctx, r.K.Stream("q")).Val(); n != 2 {
		t.Fatalf("stream length = %d", n)
	}
}

// A fetch over several queues must not lose what it read from one queue
// because another has no consumer group: Redis does not roll a failed
// script back, so the read entries would sit pending with no one running them.
func TestFetchReturnsWhatItReadWhenAnotherQueueHasNoGroup(t *testing.T) {
	r, e := leaseEnv(t) // queue "q" with one entry, already read by "a"
	ctx := context.Background()
	m := &Message{ID: NewID(time.Now()), Kind: "k", Queue: "q", Args: []byte(`{}`)}
	b, _ := m.Encode()
	if _, _, err := r.Enqueue(ctx, "q", b, m.ID, time.Time{}, time.Now(), "", 0); err != nil {
		t.Fatal(err)
	}
	es, _, err := r.Fetch(ctx, "a", []string{"q", "nogroup"}, 10)
	if !IsNoGroup(err) || !strings.Contains(err.Error(), "nogroup") {
		t.Fatalf("err = %v, want the missing group reported", err)
	}
	if len(es) != 1 || es[0].ID == e.ID || es[0].Queue != "q" {
		t.Fatalf("entries = %+v, want the new entry of q", es)
	}
}
