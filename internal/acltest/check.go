package acltest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
)

// CheckACLLog fails the test if the ACL LOG of any node holds an entry: a
// command, key or channel denied to anyone, or a failed login. Replicas
// are read too: a client that reads from one, or a node that became a
// master, logs its own denials.
func CheckACLLog(t *testing.T, d *Deployment) {
	t.Helper()
	for _, e := range d.ACLLog(t) {
		t.Errorf("ACL LOG of %s: %s %q denied to %s in %s (command %s, %d times)",
			e.Node, e.Reason, e.Object, e.Username, e.Context, e.Command, e.Count)
	}
}

// Uncalled returns the commands rules grant (+name or +name|sub) that no
// node ran since Reset, by INFO commandstats, in the order of rules. A
// first-argument rule (+info|replication) counts the calls of its command.
// It tells a rule that nothing needed from one the run did not exercise;
// the tests assert it holds only commands the docs say are conditional.
func Uncalled(t *testing.T, d *Deployment, rules []string) []string {
	t.Helper()
	calls := map[string]int64{}
	d.each(t, func(ctx context.Context, _ *redistest.Server, admin *redis.Client) error {
		info, err := admin.Info(ctx, "commandstats").Result()
		if err != nil {
			return err
		}
		for line := range strings.Lines(info) {
			name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":calls=")
			if !ok {
				continue
			}
			n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest+",", ',')], 10, 64)
			calls[name] += n
		}
		return nil
	})
	var out []string
	for _, r := range rules {
		if !strings.HasPrefix(r, "+") || strings.HasPrefix(r, "+@") {
			continue
		}
		name := r[1:]
		if cmd, _, ok := strings.Cut(name, "|"); ok && !slices.Contains([]string{"client", "cluster", "pubsub", "script", "xgroup", "xinfo"}, cmd) {
			name = cmd // a first-argument rule: Redis counts the command
		}
		if calls[name] == 0 {
			out = append(out, r)
		}
	}
	return out
}

// NoPerm reports whether err is an ACL denial.
func NoPerm(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "NOPERM") }

// CheckDenials proves the rules least-privilege and the ACL LOG
// watchful. With user, a client of the ACL user, it tries what the rules
// do not grant: reading and writing the keys in others (keys of other
// namespaces, written by an administrator), also from a script; publishing
// and subscribing to their channels; FLUSHALL, FLUSHDB, CONFIG, KEYS, INFO
// beyond replication, CLIENT LIST and KILL, ACL, SCRIPT FLUSH,
// SHUTDOWN. Each must be refused with NOPERM and be in the ACL LOG. It
// also shows the one thing key patterns do not limit: SCAN lists the
// names, and only the names, of the other namespaces' keys. It empties
// the ACL LOG before and after.
func CheckDenials(t *testing.T, d *Deployment, user redis.UniversalClient, others []string) {
	t.Helper()
	ctx := context.Background()
	d.Reset(t)
	denied := func(what string, err error) {
		t.Helper()
		if !NoPerm(err) {
			t.Errorf("%s: %v; want NOPERM", what, err)
		}
	}
	for _, other := range others {
		tag := hashTag(other)
		denied("GET "+other, user.Get(ctx, other).Err())
		denied("SET "+other, user.Set(ctx, other, "x", 0).Err())
		denied("DEL "+other, user.Del(ctx, other).Err())
		// The key is in KEYS, so Redis refuses the EVAL itself; a script
		// that named it only in Lua would be refused at that call.
		denied("EVAL with KEYS "+other, user.Eval(ctx, "return redis.call('GET', KEYS[1])", []string{other}).Err())
		denied("PUBLISH "+tag+":wake", user.Publish(ctx, tag+":wake", "x").Err())
		sub := user.Subscribe(ctx, tag+":leader:resign")
		_, err := sub.Receive(ctx)
		denied("SUBSCRIBE "+tag+":leader:resign", err)
		_ = sub.Close()
	}
	denied("FLUSHALL", user.FlushAll(ctx).Err())
	denied("FLUSHDB", user.FlushDB(ctx).Err())
	denied("CONFIG GET", user.ConfigGet(ctx, "requirepass").Err())
	denied("KEYS", user.Keys(ctx, "*").Err())
	denied("INFO", user.Info(ctx).Err())
	denied("INFO keyspace", user.Info(ctx, "keyspace").Err())
	denied("CLIENT LIST", user.ClientList(ctx).Err())
	denied("CLIENT KILL", user.ClientKillByFilter(ctx, "TYPE", "normal").Err())
	denied("ACL WHOAMI", user.Do(ctx, "ACL", "WHOAMI").Err())
	denied("SCRIPT FLUSH", user.ScriptFlush(ctx).Err())
	denied("SHUTDOWN", user.Do(ctx, "SHUTDOWN", "NOSAVE").Err())

	for _, other := range others {
		if keys := scanKeys(t, user, hashTag(other)+":*"); !slices.Contains(keys, other) {
			t.Errorf("SCAN MATCH %s:* = %v; want %s, since SCAN is not limited by key patterns", hashTag(other), keys, other)
		}
	}

	log := d.ACLLog(t)
	logged := func(reason, object string) {
		t.Helper()
		if !slices.ContainsFunc(log, func(e redistest.ACLLogEntry) bool {
			return e.Reason == reason && e.Object == object && e.Username == User
		}) {
			t.Errorf("ACL LOG has no %s denial of %s to %s: %+v", reason, object, User, log)
		}
	}
	for _, cmd := range []string{"flushall", "flushdb", "config|get", "keys", "info", "client|list", "client|kill",
		"acl|whoami", "script|flush", "shutdown"} {
		logged("command", cmd)
	}
	for _, other := range others {
		logged("key", other)
		logged("channel", hashTag(other)+":wake")
		logged("channel", hashTag(other)+":leader:resign")
	}
	d.Reset(t)
}

// hashTag is "{tag}" of a key "{tag}:...".
func hashTag(key string) string {
	tag, _, _ := strings.Cut(key, "}")
	return tag + "}"
}

// scanKeys SCANs every master for pattern.
func scanKeys(t *testing.T, c redis.UniversalClient, pattern string) []string {
	t.Helper()
	ctx := context.Background()
	var (
		mu  sync.Mutex
		out []string
	)
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			out = append(out, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	if cc, ok := c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return scan(ctx, m) })
	} else {
		err = scan(ctx, c)
	}
	if err != nil {
		t.Fatalf("SCAN %s: %v", pattern, err)
	}
	return out
}

// WhileSlotMigrates runs f while the slot of namespace ns is being
// migrated from its master to another (CLUSTER SETSLOT MIGRATING and
// IMPORTING), then ends the migration with the slot where it was. A key of
// the slot that the old master does not hold gets an ASK redirection,
// which go-redis follows with ASKING on the new one.
func WhileSlotMigrates(t *testing.T, c *redistest.Cluster, ns string, f func()) {
	t.Helper()
	ctx := context.Background()
	slot := redistest.KeySlot("{" + ns + "}:")
	var from, to *redistest.ClusterNode
	for _, m := range c.Masters() {
		if slices.ContainsFunc(m.Slots, func(r redistest.SlotRange) bool { return r.Contains(slot) }) {
			from = &m
		} else if to == nil {
			to = &m
		}
	}
	if from == nil || to == nil {
		t.Fatalf("no master serves slot %d, or no other master: %+v", slot, c.Masters())
	}
	setSlot := func(n *redistest.ClusterNode, args ...any) {
		t.Helper()
		if err := n.Client().Do(ctx, append([]any{"CLUSTER", "SETSLOT", slot}, args...)...).Err(); err != nil {
			t.Fatalf("CLUSTER SETSLOT %d %v on %s: %v", slot, args, n.Addr(), err)
		}
	}
	setSlot(to, "IMPORTING", from.ID)
	setSlot(from, "MIGRATING", to.ID)
	// Both nodes go back to the slot map the others never stopped
	// holding; no other node knew of the migration.
	defer func() {
		setSlot(to, "NODE", from.ID)
		setSlot(from, "NODE", from.ID)
	}()
	f()
}
