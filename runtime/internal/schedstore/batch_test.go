package schedstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// sizeHook records the most commands of one pipeline and the most
// arguments of one command (but a script call's) a client sent.
type sizeHook struct {
	mu                sync.Mutex
	maxPipeline       int
	maxPipelineCmds   []string
	maxArgs           int
	maxArgsCmd        string
	declNextWritten   bool
	declHSetsOverSize int
}

func (h *sizeHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *sizeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		h.note(c)
		return next(ctx, c)
	}
}

func (h *sizeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cs []redis.Cmder) error {
		h.mu.Lock()
		n := 0
		for _, c := range cs {
			if name := c.Name(); name != "multi" && name != "exec" {
				n++
			}
		}
		if n > h.maxPipeline {
			h.maxPipeline, h.maxPipelineCmds = n, nil
			for _, c := range cs {
				h.maxPipelineCmds = append(h.maxPipelineCmds, c.Name())
			}
		}
		h.mu.Unlock()
		for _, c := range cs {
			h.note(c)
		}
		return next(ctx, cs)
	}
}

func (h *sizeHook) note(c redis.Cmder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	name := strings.ToLower(c.Name())
	if name == "hset" {
		if k, _ := c.Args()[1].(string); strings.Contains(k, "decl-next:") {
			h.declNextWritten = true
		}
	}
	if name == "evalsha" || name == "eval" {
		return
	}
	if n := len(c.Args()); n > h.maxArgs {
		h.maxArgs, h.maxArgsCmd = n, name
	}
}

// Registering, reading back, listing and sweeping many schedules go in
// pipelines and commands of a bounded size, whatever their number: one
// pipeline or command for all of a million schedules outlasted a client's
// timeouts (and held Redis). The results are those of one pipeline.
func TestOperationsOverManySchedulesGoInBoundedBatches(t *testing.T) {
	w := newWorld(t)
	hook := &sizeHook{}
	w.rdb.AddHook(hook)
	const n, batch = 200, 7
	defs := make([]Definition, n)
	ids := make([]string, n)
	for i := range defs {
		ids[i] = fmt.Sprintf("s-%03d", i)
		defs[i] = def(ids[i], "0 0 2 * * ?")
	}
	var stores []*Store
	for _, id := range []string{"a", "b"} {
		st := w.store()
		st.batch = batch
		inst := Instance{ID: id, Version: "1", Started: w.clk.Now(), Declares: true}
		if _, err := st.Heartbeat(ctx, inst); err != nil {
			t.Fatal(err)
		}
		res, err := st.Register(ctx, inst.Declarer(), defs)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Outcomes) != n || len(res.Conflicts) != 0 {
			t.Fatalf("%s: %d outcomes, conflicts %v", id, len(res.Outcomes), res.Conflicts)
		}
		stores = append(stores, st)
		// Declared again, as after a lost record: the declarations are
		// replaced whole.
		if _, err := st.Register(ctx, inst.Declarer(), defs[:n/2]); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Register(ctx, inst.Declarer(), defs); err != nil {
			t.Fatal(err)
		}
	}
	st := stores[0]
	for _, id := range []string{"a", "b"} {
		if got := w.rdb.HLen(ctx, st.keys.decl(id)).Val(); got != n {
			t.Fatalf("%s declares %d schedules, want %d", id, got, n)
		}
		if w.rdb.Exists(ctx, st.keys.declNext(id)).Val() != 0 {
			t.Fatalf("%s: the declarations being written are left behind", id)
		}
		if ttl := w.rdb.PTTL(ctx, st.keys.decl(id)).Val(); ttl <= 0 {
			t.Fatalf("%s: declarations without a TTL (%v)", id, ttl)
		}
	}
	if !hook.declNextWritten {
		t.Fatal("the declarations were not written to a key of their own first")
	}
	states, err := st.GetStates(ctx, ids, func(string) []string { return nil })
	if err != nil || len(states) != n {
		t.Fatalf("GetStates: %d, %v", len(states), err)
	}
	scores, err := st.ChangeScores(ctx, ids)
	if err != nil || len(scores) != n {
		t.Fatalf("ChangeScores: %d, %v", len(scores), err)
	}
	changes, _, err := st.ChangedSince(ctx, w.clk.Now().Add(-time.Hour))
	seen := map[string]bool{}
	for _, c := range changes {
		seen[c.ID] = true
	}
	if err != nil || len(seen) != n {
		t.Fatalf("ChangedSince: %d schedules, %v", len(seen), err)
	}
	all, err := st.List(ctx)
	if err != nil || len(all) != n {
		t.Fatalf("List: %d, %v", len(all), err)
	}
	many, err := st.GetMany(ctx, ids)
	if err != nil || len(many) != n {
		t.Fatalf("GetMany: %d, %v", len(many), err)
	}
	// The sweep hands every schedule over to b (declared later, same
	// version: it outranks a), in batches too.
	res, err := st.FullSweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Handed) != 0 || len(res.Retired) != 0 || len(res.Deleted) != 0 {
		t.Fatalf("sweep: %+v", res)
	}
	for _, id := range ids[:3] {
		if sc := mustGet(t, st, id); sc.DeclaredBy.InstanceID != "b" {
			t.Fatalf("%s declared by %q, want b", id, sc.DeclaredBy.InstanceID)
		}
	}
	// a goes: its declarations with it.
	if err := st.Deregister(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if w.rdb.Exists(ctx, st.keys.decl("a")).Val() != 0 {
		t.Fatal("a's declarations outlived it")
	}

	hook.mu.Lock()
	defer hook.mu.Unlock()
	t.Logf("largest pipeline %d commands %v, largest command %d arguments (%s)", hook.maxPipeline, hook.maxPipelineCmds, hook.maxArgs, hook.maxArgsCmd)
	// A command per partition (List's) is bounded too.
	if limit := max(batch+1, len(st.keys.parts)); hook.maxPipeline > limit {
		t.Errorf("a pipeline of %d commands, more than the batch of %d or one per partition", hook.maxPipeline, batch)
	}
	if hook.maxArgs > 40 { // an HMGET of the mirror's fields is 21; one command for all schedules at least n
		t.Errorf("a command (%s) of %d arguments", hook.maxArgsCmd, hook.maxArgs)
	}
}
