package rdb

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
)

func TestEveryKeyOfANamespaceSharesItsHashTag(t *testing.T) {
	k := NewKeys("billing")
	keys := []string{
		k.Stream("q"), k.Delayed("q"), k.Dedup("x"), k.Dedup(""), k.Dead(), k.DeadIndex(), k.Runs("kind"),
	}
	keys = append(keys, k.EnqueueKeys("q", "d")...)
	for _, key := range keys {
		if !strings.HasPrefix(key, "{billing}:") {
			t.Errorf("key %q is outside the namespace's hash tag", key)
		}
	}
	if got := NewKeys("").Stream("default"); got != "{chronos}:q:default" {
		t.Errorf("default namespace stream = %q", got)
	}
}

// Redis Cluster only routes and checks keys declared in KEYS; a script that
// concatenates a key name breaks there (asynq#951). No script may build a
// string with "..", and every redis.call must take its key from KEYS or from
// a function parameter that receives one.
func TestScriptsNeverBuildKeyNames(t *testing.T) {
	for _, name := range []string{"enqueue", "fetch", "finish", "finishMany", "forward", "reclaim", "lease", "requeueDead", "deleteDead", "trimDead", "oldestDead", "releaseLock", "pruneConsumers"} {
		src := source(name)
		if strings.Contains(src, "..") {
			t.Errorf("script %s concatenates strings", name)
		}
		for _, m := range regexp.MustCompile(`redis\.call\('([A-Z]+)', (?:'(?:CONSUMERS|DELCONSUMER)', )?([^,)]+)`).FindAllStringSubmatch(src, -1) {
			cmd, key := m[1], m[2]
			switch cmd {
			case "PUBLISH":
				continue // a channel, not a key
			case "XREADGROUP":
				if !strings.Contains(src, "'STREAMS', key, '>'") || !strings.Contains(src, "local key = KEYS[m + i]") {
					t.Errorf("script %s: XREADGROUP on streams not taken from KEYS", name)
				}
				continue
			}
			if !strings.HasPrefix(key, "KEYS[") && key != "unpack(KEYS" && !strings.Contains("stream delayed dedup key", key) {
				t.Errorf("script %s: %s on %q, not a declared key", name, cmd, key)
			}
		}
		// A command built in a table (the fetch script's XREADGROUP over
		// several streams) takes its keys from KEYS too.
		for _, m := range regexp.MustCompile(`cmd\[[^]]+\] = ([^\n]+)`).FindAllStringSubmatch(src, -1) {
			if v := m[1]; !strings.HasPrefix(v, "'>'") && !strings.HasPrefix(v, "KEYS[") {
				t.Errorf("script %s: a command built of %q, not a declared key", name, v)
			}
		}
		if name == "fetch" && !strings.Contains(src, "cmd[7 + y] = KEYS[") {
			t.Errorf("script fetch: the XREADGROUP over several streams no longer takes them from KEYS")
		}
	}
}

// source returns the Lua text of a script, for TestScriptsNeverBuildKeyNames.
func source(name string) string {
	switch name {
	case "enqueue":
		return EnqueueFunc + EnqueueCall(1, 1)
	case "fetch":
		return fetchSrc
	case "finish":
		return finishSrc
	case "finishMany":
		return finishManySrc
	case "forward":
		return forwardSrc
	case "reclaim":
		return reclaimSrc
	case "lease":
		return leaseSrc
	case "requeueDead":
		return requeueDeadSrc
	case "pruneConsumers":
		return pruneConsumersSrc
	case "trimDead":
		return trimDeadSrc
	case "oldestDead":
		return oldestDeadSrc
	case "releaseLock":
		return releaseLockSrc
	default:
		return deleteDeadSrc
	}
}

func TestNewIDIsUniqueAndSortsByTime(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	a, b := NewID(t0), NewID(t0.Add(time.Millisecond))
	if len(a) != 26 || a >= b {
		t.Fatalf("NewID: %q then %q", a, b)
	}
	seen := map[string]bool{}
	for range 10000 {
		id := NewID(t0)
		if seen[id] {
			t.Fatalf("duplicate ID %s", id)
		}
		seen[id] = true
	}
}

func TestMessageKeepsOnlyTheLatestAttempts(t *testing.T) {
	m := &Message{}
	for i := range MaxHistory + 5 {
		m.AddAttempt(Attempt{At: int64(i)})
	}
	if len(m.History) != MaxHistory || m.History[0].At != 5 || m.History[MaxHistory-1].At != MaxHistory+4 {
		t.Fatalf("history = %+v", m.History)
	}
}

// The scheduler composes chronos_enqueue into its own fire script. This is
// the pattern it follows: extra keys first, then EnqueueKeys, in one slot.
func TestEnqueueFragmentComposesIntoAnotherScript(t *testing.T) {
	redistest.Parallel(t)
	c := redistest.Start(t).Client()
	ctx := context.Background()
	k := NewKeys("")
	fire := redis.NewScript(EnqueueFunc + `
local r = ` + EnqueueCall(2, 2) + `
if r[2] == 0 then redis.call('HSET', KEYS[1], 'lastFired', ARGV[1]) end
return r
`)
	m := &Message{ID: NewID(time.Now()), Kind: "k", Args: json.RawMessage(`{}`), Queue: "default"}
	b, _ := m.Encode()
	now := time.Now()
	keys := append([]string{k.Prefix() + "sched:s1"}, k.EnqueueKeys("default", "s1:1700000000")...)
	args := append([]any{"1700000000"}, k.EnqueueArgs(b, m.ID, time.Time{}, now, time.Hour)...)
	for i, wantDup := range []int64{0, 1} {
		res, err := fire.Run(ctx, c, keys, args...).Slice()
		if err != nil {
			t.Fatal(err)
		}
		if res[0] != m.ID || res[1] != wantDup {
			t.Fatalf("fire %d = %v", i, res)
		}
	}
	if n := c.XLen(ctx, k.Stream("default")).Val(); n != 1 {
		t.Fatalf("stream length = %d, want 1", n)
	}
	if v := c.HGet(ctx, k.Prefix()+"sched:s1", "lastFired").Val(); v != "1700000000" {
		t.Fatalf("lastFired = %q", v)
	}
}

func TestPruneConsumersDeletesOnlyIdleConsumersWithoutPendingEntries(t *testing.T) {
	redistest.Parallel(t)
	c := redistest.Start(t).Client()
	ctx := context.Background()
	r := New(c, "")
	if err := r.EnsureGroup(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ghost", "holder", "self"} {
		c.XAdd(ctx, &redis.XAddArgs{Stream: r.K.Stream("q"), Values: []any{"m", "{}"}})
		res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: Group, Consumer: name, Streams: []string{r.K.Stream("q"), ">"}, Count: 1, Block: -1}).Result()
		if err != nil {
			t.Fatal(err)
		}
		if name != "holder" {
			c.XAck(ctx, r.K.Stream("q"), Group, res[0].Messages[0].ID)
		}
	}
	time.Sleep(20 * time.Millisecond)
	n, err := r.PruneConsumers(ctx, "q", "self", 10*time.Millisecond)
	if err != nil || n != 1 {
		t.Fatalf("PruneConsumers = %d, %v; want 1", n, err)
	}
	var names []string
	for _, ci := range c.XInfoConsumers(ctx, r.K.Stream("q"), Group).Val() {
		names = append(names, ci.Name)
	}
	if strings.Join(names, ",") != "holder,self" {
		t.Fatalf("consumers left = %v", names)
	}
}
