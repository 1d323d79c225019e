package chronos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// starveRedis fills Redis past a maxmemory under noeviction, so that
// every write is refused with OOM and reads go on; the returned function
// lifts the limit. On a cluster it starves every master.
func starveRedis(t *testing.T, c redis.UniversalClient) (lift func()) {
	t.Helper()
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return starveNode(t, c, "filler")
	}
	ctx := context.Background()
	var mu sync.Mutex
	var masters []*redis.Client
	if err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		masters = append(masters, m)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var lifts []func()
	for _, m := range masters {
		for i := 0; ; i++ { // a key of one of m's slots
			key := fmt.Sprintf("filler-%d", i)
			if owner, err := cc.MasterForKey(ctx, key); err == nil && owner.Options().Addr == m.Options().Addr {
				lifts = append(lifts, starveNode(t, m, key))
				break
			}
		}
	}
	return func() {
		for _, l := range lifts {
			l()
		}
	}
}

// starveNode starves the server of c, writing filler.
func starveNode(t *testing.T, c redis.UniversalClient, filler string) (lift func()) {
	t.Helper()
	ctx := context.Background()
	if err := c.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, filler, strings.Repeat("x", 4<<20), 0).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the big SET's buffers freed: used_memory settles
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	var used int64
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			used, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	// Half of it: under what the filler alone takes, over what Redis
	// holds without it.
	if err := c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used/2, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, filler, "1", 0).Err(); err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("a write with Redis starved = %v, want OOM", err)
	}
	return func() {
		if err := c.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// With Redis refusing writes (maxmemory under noeviction), the leader
// does not retry every schedule's firing many times a second: each backs
// off, and the log says so once per interval with a count. Once Redis
// takes writes again, the missed fire times are caught up per misfire
// policy, each once.
func TestFailedFiringsBackOffAndAreCaughtUpOnce(t *testing.T) {
	e := newSchedEnv(t)
	const n = 5
	s := e.start(e.scheduler("a", SchedulerConfig{}, func(s *Scheduler) {
		for i := range n {
			_ = RegisterInterval(s, time.Second, tick{N: i}, WithScheduleID("s"+strconv.Itoa(i)))
		}
	}))
	waitLeader(t, s)
	waitUntil(t, "every schedule firing", func() bool {
		for i := range n {
			if len(triggerTimes(t, e.tasks(DefaultQueue), "s"+strconv.Itoa(i))) < 2 {
				return false
			}
		}
		return true
	})
	logsBefore := len(e.logs.String())
	lift := starveRedis(t, e.rdb)
	starved := time.Now()
	time.Sleep(6 * time.Second)
	during := e.logs.String()[logsBefore:]
	lift()
	lifted := time.Now()

	if c := strings.Count(during, "refuses the leader's writes"); c < 1 || c > 2 {
		t.Errorf("%d warnings about failed firings in 6 s, want one (and one more at most): %s", c, during)
	}
	if c := strings.Count(during, "level=WARN"); c > 6 {
		t.Errorf("%d warnings in 6 s of refused writes:\n%s", c, during)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("scheduler log:\n%s", e.logs)
		}
	})
	waitUntil(t, "firings after Redis takes writes again", func() bool {
		return strings.Contains(e.logs.String(), "firings recorded again")
	})
	time.Sleep(2500 * time.Millisecond) // the next refresh catches every schedule up
	for i := range n {
		id := "s" + strconv.Itoa(i)
		secs := triggerTimes(t, e.tasks(DefaultQueue), id) // fails on a second fired twice
		seen := map[int64]bool{}
		for _, sec := range secs {
			seen[sec] = true
		}
		// The slots of the starvation are far under MisfireThreshold: the
		// policy fires each of them late, none twice, none skipped.
		for sec := starved.Unix() + 1; sec < lifted.Unix(); sec++ {
			if !seen[sec] {
				t.Errorf("%s: fire time %v of the starvation was not caught up", id, time.Unix(sec, 0))
			}
		}
	}
}
