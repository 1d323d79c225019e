package redistest

import (
	"context"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestACLDenialIsLogged(t *testing.T) {
	parallel(t)
	s := Start(t)
	ctx := context.Background()
	if err := s.ACLLogReset(ctx); err != nil {
		t.Fatal(err)
	}
	s.AddUser("worker", "secret", "~chronos:*", "+get", "+set")
	u := s.UserClient("worker", "secret")
	if err := u.Set(ctx, "chronos:a", "1", 0).Err(); err != nil {
		t.Fatalf("allowed SET: %v", err)
	}
	if err := u.Set(ctx, "other", "1", 0).Err(); !isNoPerm(err) {
		t.Fatalf("SET outside the key pattern: %v; want NOPERM", err)
	}
	if err := u.Del(ctx, "chronos:a").Err(); !isNoPerm(err) {
		t.Fatalf("DEL: %v; want NOPERM", err)
	}
	log, err := s.ACLLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []ACLLogEntry{
		{Node: s.Addr(), Reason: "key", Context: "toplevel", Object: "other", Command: "set", Username: "worker", Count: 1},
		{Node: s.Addr(), Reason: "command", Context: "toplevel", Object: "del", Command: "del", Username: "worker", Count: 1},
	} {
		if !slices.Contains(log, want) {
			t.Errorf("ACL LOG lacks %+v: %+v", want, log)
		}
	}
	if err := s.ACLLogReset(ctx); err != nil {
		t.Fatal(err)
	}
	if log, err := s.ACLLog(ctx); err != nil || len(log) != 0 {
		t.Fatalf("after reset: %+v, %v", log, err)
	}
}

func TestACLUserSurvivesRestart(t *testing.T) {
	parallel(t)
	s := Start(t)
	if s.External() {
		t.Skip("REDIS_URL set: Restart needs a private server")
	}
	s.AddUser("worker", "secret", "+ping")
	s.Restart()
	if err := s.UserClient("worker", "secret").Ping(context.Background()).Err(); err != nil {
		t.Fatalf("after Restart: %v", err)
	}
}

func TestACLOnEveryClusterNode(t *testing.T) {
	parallel(t)
	c := StartCluster(t, ClusterOptions{ReplicasPerMaster: 1})
	ctx := context.Background()
	c.AddUser("worker", "secret", append([]string{"~{chronos}:*", "+@read", "+@write"}, ClusterClientRules...)...)
	u := c.UserClient("worker", "secret")
	if err := u.Set(ctx, "{chronos}:a", "1", 0).Err(); err != nil {
		t.Fatalf("allowed SET: %v", err)
	}
	if err := u.Set(ctx, "{billing}:a", "1", 0).Err(); !isNoPerm(err) {
		t.Fatalf("SET outside the key pattern: %v; want NOPERM", err)
	}
	log, err := c.ACLLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := ACLLogEntry{Node: c.MasterForKey("{billing}:a").Addr(), Reason: "key", Context: "toplevel",
		Object: "{billing}:a", Command: "set", Username: "worker", Count: 1}
	if !slices.Contains(log, want) {
		t.Fatalf("ACL LOG lacks %+v: %+v", want, log)
	}
	if len(log) != 1 {
		t.Errorf("ACL LOG has more than the one denial (the cluster client itself was denied something?): %+v", log)
	}
	// ACL SETUSER is not replicated: every node got the user itself.
	for _, n := range c.Nodes() {
		if err := n.Client().Do(ctx, "ACL", "GETUSER", "worker").Err(); err != nil {
			t.Fatalf("%s %s: ACL GETUSER worker: %v", n.Role, n.Addr(), err)
		}
	}
	if err := c.ACLLogReset(ctx); err != nil {
		t.Fatal(err)
	}
	if log, err := c.ACLLog(ctx); err != nil || len(log) != 0 {
		t.Fatalf("after reset: %+v, %v", log, err)
	}
}

func isNoPerm(err error) bool { return err != nil && redis.HasErrorPrefix(err, "NOPERM") }
