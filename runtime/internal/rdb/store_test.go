package rdb

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

// partitioned is a Store of namespace "t" in 12 partitions over c, with
// the consumer groups of queues created.
func partitioned(t *testing.T, c redis.UniversalClient, queues ...string) *Store {
	t.Helper()
	l, err := keyspace.Partitioned("t", 12)
	if err != nil {
		t.Fatal(err)
	}
	st := NewStore(c, l)
	if err := st.EnsureGroups(context.Background(), queues); err != nil {
		t.Fatal(err)
	}
	return st
}

// add puts n tasks into queue's stream in partition p and returns their IDs.
func add(t *testing.T, st *Store, p int, queue string, n int) []string {
	t.Helper()
	var ids []string
	for range n {
		id := NewID(time.Now())
		m := &Message{ID: id, Kind: "k", Queue: queue, Args: []byte(`{}`)}
		b, _ := m.Encode()
		if err := st.C.XAdd(context.Background(), &redis.XAddArgs{Stream: st.Parts[p].K.Stream(queue), Values: []any{"m", b}}).Err(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// from counts entries by partition.
func from(es []Entry) map[int]int {
	out := map[int]int{}
	for _, e := range es {
		out[e.Partition]++
	}
	return out
}

// A fetch reads queues in priority order, each queue's partitions from the
// start partition on, and skips a queue paused in some partitions only
// there. It works the same in one script call (a single server) and in one
// call per partition (a cluster), where each partition asked is asked for
// its share of the count, and a round that reads nothing has asked every
// partition for its pauses.
func TestFetchReadsEveryPartitionInOrderFromTheStart(t *testing.T) {
	redistest.Parallel(t)
	for _, topo := range []string{"single", "cluster"} {
		t.Run(topo, func(t *testing.T) {
			var c redis.UniversalClient
			if topo == "single" {
				c = redistest.Start(t).Client()
			} else {
				if testing.Short() {
					t.Skip("starts a cluster")
				}
				c = redistest.StartCluster(t).Client()
			}
			ctx := context.Background()
			st := partitioned(t, c, "hi", "lo")
			add(t, st, 3, "hi", 5)
			add(t, st, 7, "hi", 2)
			for p := range 12 {
				add(t, st, p, "lo", 1)
			}
			if err := st.Parts[5].SetPaused(ctx, "lo", true); err != nil {
				t.Fatal(err)
			}

			if !st.combined() {
				// Each partition reads its share, its own queues in order:
				// rounds drain hi before lo within a partition, and read
				// everything but lo in partition 5.
				got := map[PartQueue]int{}
				for start := range 12 {
					es, _, err := st.Fetch(ctx, "w", []string{"hi", "lo"}, start, 6)
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range es {
						pq := PartQueue{e.Partition, e.Queue}
						if e.Queue == "lo" && (e.Partition == 3 && got[PartQueue{3, "hi"}] < 5 || e.Partition == 7 && got[PartQueue{7, "hi"}] < 2) {
							t.Fatalf("read lo in partition %d before its hi", e.Partition)
						}
						got[pq]++
					}
				}
				if got[PartQueue{3, "hi"}] != 5 || got[PartQueue{7, "hi"}] != 2 || got[PartQueue{5, "lo"}] != 0 || len(got) != 13 {
					t.Fatalf("read %v", got)
				}
				// A round that reads nothing has asked every partition.
				es, paused, err := st.Fetch(ctx, "w", []string{"hi", "lo"}, 0, 6)
				if err != nil || len(es) != 0 || !slices.Equal(paused, []PartQueue{{5, "lo"}}) {
					t.Fatalf("empty round = %v, %v, %v; want the pause of lo in partition 5", es, paused, err)
				}
				return
			}
			es, _, err := st.Fetch(ctx, "w", []string{"hi", "lo"}, 3, 6)
			if err != nil || len(es) != 6 {
				t.Fatalf("Fetch = %d entries, %v", len(es), err)
			}
			for _, e := range es {
				if e.Queue != "hi" {
					t.Fatalf("a task of lo came before hi was drained: %+v", e)
				}
			}
			// The start partition first, then the rest in order.
			if got := from(es); got[3] != 5 || got[7] != 1 {
				t.Fatalf("read from partitions %v, want 5 of partition 3 and 1 of 7", got)
			}

			es, paused, err := st.Fetch(ctx, "w", []string{"hi", "lo"}, 4, 24)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, e := range es {
				got[e.Queue]++
				if e.Queue == "lo" && e.Partition == 5 {
					t.Fatalf("read lo in partition 5, where it is paused")
				}
			}
			if got["hi"] != 1 || got["lo"] != 11 {
				t.Fatalf("second fetch read %v, want the last of hi and lo everywhere but partition 5", got)
			}
			if !slices.Contains(paused, PartQueue{5, "lo"}) {
				t.Fatalf("paused = %v, want lo in partition 5", paused)
			}

			// A count of 0 reads nothing and reports every pause.
			es, paused, err = st.Fetch(ctx, "w", []string{"hi", "lo"}, 0, 0)
			if err != nil || len(es) != 0 || !slices.Equal(paused, []PartQueue{{5, "lo"}}) {
				t.Fatalf("pauses only = %v, %v, %v", es, paused, err)
			}
		})
	}
}

// A queue's streams of every partition are read with one command when the
// first leaves room: each gets an even share of what is left, and the full
// ones are read again one by one, so a round reads the count when the
// partitions hold it between them, however unevenly.
func TestFetchFillsTheCountFromUnevenPartitions(t *testing.T) {
	redistest.Parallel(t)
	st := partitioned(t, redistest.Start(t).Client(), "q")
	ctx := context.Background()
	add(t, st, 0, "q", 1)
	add(t, st, 2, "q", 30)
	add(t, st, 9, "q", 3)
	es, _, err := st.Fetch(ctx, "w", []string{"q"}, 0, 30)
	if err != nil || len(es) != 30 {
		t.Fatalf("Fetch = %d entries, %v; want 30", len(es), err)
	}
	// Partition 0 first (1), then 2 each of the others (2 and 9 have
	// them), then what partition 2, full, still holds.
	if got := from(es); got[0] != 1 || got[9] != 2 || got[2] != 27 {
		t.Fatalf("read %v", got)
	}
	es, _, err = st.Fetch(ctx, "w", []string{"q"}, 1, 30)
	if got := from(es); err != nil || len(es) != 4 || got[2] != 3 || got[9] != 1 {
		t.Fatalf("second Fetch = %v, %v; want the 4 left in partitions 2 and 9", got, err)
	}
}

// A batch of outcomes from several partitions is one script call off a
// cluster and one per partition on a cluster; each outcome is finished in
// its own partition either way.
func TestFinishBatchAcrossPartitions(t *testing.T) {
	redistest.Parallel(t)
	for _, topo := range []string{"single", "cluster"} {
		t.Run(topo, func(t *testing.T) {
			var c redis.UniversalClient
			if topo == "single" {
				c = redistest.Start(t).Client()
			} else {
				if testing.Short() {
					t.Skip("starts a cluster")
				}
				c = redistest.StartCluster(t).Client()
			}
			ctx := context.Background()
			st := partitioned(t, c, "q")
			for p := range 12 {
				add(t, st, p, "q", 2)
			}
			var es []Entry
			for start := 0; len(es) < 24 && start < 24; start++ { // on a cluster a round reads some partitions
				more, _, err := st.Fetch(ctx, "w", []string{"q"}, start, 24-len(es))
				if err != nil {
					t.Fatal(err)
				}
				es = append(es, more...)
			}
			if len(es) != 24 {
				t.Fatalf("fetched %d entries, want 24", len(es))
			}
			b := NewFinishBatcher(st)
			defer b.Close()
			var wg sync.WaitGroup
			for i, e := range es {
				wg.Go(func() {
					f := &Finish{Partition: e.Partition, Queue: "q", EntryID: e.ID, Outcome: Done, TaskID: fmt.Sprint(i), Kind: "k"}
					if i%3 == 0 {
						f.Outcome, f.Msg, f.At, f.DeadCap = Dead, []byte(`{}`), time.Now(), 100
					}
					if res, err := b.Finish(ctx, "w", f); err != nil || res != Finished {
						t.Errorf("finish %d = %d, %v", i, res, err)
					}
				})
			}
			wg.Wait()
			for p, r := range st.Parts {
				if n := c.XLen(ctx, r.K.Stream("q")).Val(); n != 0 {
					t.Errorf("partition %d: %d entries left", p, n)
				}
			}
			if n, err := st.CountDead(ctx); err != nil || n != 8 {
				t.Errorf("CountDead = %d, %v; want 8", n, err)
			}
		})
	}
}

// Run records are merged newest first over the partitions, and a page's
// cursor continues exactly where it stopped, also between records of
// different partitions that have the same entry ID.
func TestRecentRunsPagesExactlyAcrossPartitions(t *testing.T) {
	redistest.Parallel(t)
	st := partitioned(t, redistest.Start(t).Client())
	ctx := context.Background()
	// Records 1..36 in three partitions, three of each ID.
	for i := 1; i <= 12; i++ {
		for _, p := range []int{2, 5, 11} {
			id := fmt.Sprintf("%d-0", 1_000_000+i)
			rec := (&RunRecord{TaskID: fmt.Sprintf("%d/%d", i, p), Status: RunSuccess, Start: time.UnixMilli(int64(i))}).Fields()
			if err := st.C.XAdd(ctx, &redis.XAddArgs{Stream: st.Parts[p].K.Runs("k"), ID: id, Values: rec}).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var seen []string
	below := map[string]string{}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		got, err := st.RecentRuns(ctx, 5, []string{"k"}, below)
		if err != nil {
			t.Fatal(err)
		}
		page := got["k"]
		for _, r := range page.Records {
			seen = append(seen, r.TaskID)
		}
		if !page.More {
			break
		}
		below["k"] = page.Cursor
	}
	var want []string
	for i := 12; i >= 1; i-- {
		for _, p := range []int{11, 5, 2} {
			want = append(want, fmt.Sprintf("%d/%d", i, p))
		}
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("pages gave\n%v\nwant\n%v", seen, want)
	}
	recs, err := st.ListRuns(ctx, "k", 4)
	if err != nil || len(recs) != 4 || recs[0].TaskID != "12/11" || recs[3].TaskID != "11/11" {
		t.Fatalf("ListRuns = %v, %v", recs, err)
	}
}

// Dead letters are listed newest death first over every partition, and
// the namespace keeps at most its cap, dropping the oldest wherever they
// are.
func TestDeadLettersMergeAndAreCappedOverPartitions(t *testing.T) {
	redistest.Parallel(t)
	st := partitioned(t, redistest.Start(t).Client(), "q")
	ctx := context.Background()
	for i := range 10 {
		p := (i * 5) % 12
		r := st.Parts[p]
		m := &Message{ID: fmt.Sprint(i), Kind: "k", Queue: "q", Args: []byte(`{}`), DiedAt: int64(1000 + i)}
		b, _ := m.Encode()
		st.C.HSet(ctx, r.K.Dead(), m.ID, b)
		st.C.ZAdd(ctx, r.K.DeadIndex(), redis.Z{Score: float64(m.DiedAt), Member: m.ID})
	}
	ms, err := st.ListDead(ctx, 2, 3)
	if err != nil || len(ms) != 3 || ms[0].ID != "7" || ms[2].ID != "5" {
		t.Fatalf("ListDead(2, 3) = %v, %v", ms, err)
	}
	if err := st.TrimDead(ctx, 6, 1); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.CountDead(ctx); n != 5 {
		t.Fatalf("after making room for one under a cap of 6: %d dead letters, want 5", n)
	}
	if _, _, err := st.GetDead(ctx, "4"); err == nil {
		t.Fatal("dead letter 4 is kept while older ones went")
	}
	if _, p, err := st.GetDead(ctx, "5"); err != nil || p != (5*5)%12 {
		t.Fatalf("GetDead(5) = partition %d, %v", p, err)
	}
	// Trims of one state, however many, drop the same letters.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := st.TrimDead(ctx, 3, 0); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ms, err := st.ListDead(ctx, 0, 10); err != nil || len(ms) != 3 || ms[2].ID != "7" {
		t.Fatalf("after four trims to 3 at once: %v, %v; want 9, 8 and 7", ms, err)
	}
}
