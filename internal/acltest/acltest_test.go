package acltest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

// Through Sentinel, with SchedulerConfig.Replicas, the leader also sends
// WAIT and reads INFO replication (in its scripts and after them): the
// rules grant both, and nothing else is denied on the master or the
// replica. The CLI's and the console's tests in cmd/chronos run the same
// service on a TLS server and a TLS cluster.
func TestTheLibraryUnderTheACLUserThroughSentinelWithReplicas(t *testing.T) {
	redistest.Parallel(t)
	rules := chronos.ACLRules()
	d := OfSentinel(redistest.StartSentinel(t), rules)
	d.Reset(t)
	s := Start(t, d, "")
	s.Exercise()
	s.Stop()
	CheckACLLog(t, d)
	uncalled := Uncalled(t, d, rules)
	for _, cmd := range []string{"+wait", "+info|replication"} {
		if slices.Contains(uncalled, cmd) {
			t.Errorf("nothing ran %s with Replicas set", cmd)
		}
	}
}

// On a cluster with a replica per master, with SchedulerConfig.Replicas
// and WithReplicas, the leader and the client send WAIT and read INFO
// replication on each master's own connection: the rules grant both, and
// no node denies anything.
func TestTheLibraryUnderTheACLUserOnAClusterWithReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("a cluster of six nodes")
	}
	redistest.Parallel(t)
	rules := chronos.ACLRules()
	d := OfCluster(redistest.StartCluster(t, redistest.ClusterOptions{ReplicasPerMaster: 1}), rules)
	d.Replicas = 1
	d.Reset(t)
	s := Start(t, d, "")
	s.Exercise()
	s.Stop()
	CheckACLLog(t, d)
	uncalled := Uncalled(t, d, rules)
	for _, cmd := range []string{"+wait", "+info|replication"} {
		if slices.Contains(uncalled, cmd) {
			t.Errorf("nothing ran %s with Replicas set", cmd)
		}
	}
}

// go-redis sends SELECT on connecting to a database other than 0, and
// CLIENT SETNAME when the client is given a name: ACLRules grants neither
// (docs/security.md), so without "+select|N" and "+client|setname" every
// connection fails; with them the user works in that database.
func TestADatabaseOtherThanZeroNeedsSelectAndAClientNameSetname(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	if s.External() {
		t.Skip("REDIS_URL is set: the test selects database 3 of its own server")
	}
	Single(s, chronos.ACLRules())
	s.AddUser("chronos-db3", Password, append(chronos.ACLRules(), "+select|3", "+client|setname")...)
	ctx := context.Background()
	conf := func(user string) func(*redis.Options) {
		return func(o *redis.Options) {
			o.Username, o.Password, o.DB, o.ClientName = user, Password, 3, "orders-worker"
		}
	}
	if _, err := chronos.NewClient(s.NewClient(conf(User))).Enqueue(ctx, Work{}); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("Enqueue in database 3 with ACLRules alone: %v; want NOPERM", err)
	}
	log, err := s.ACLLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"select", "client|setname"} {
		if !slices.ContainsFunc(log, func(e redistest.ACLLogEntry) bool { return e.Object == cmd && e.Username == User }) {
			t.Errorf("ACL LOG has no denial of %s: %+v", cmd, log)
		}
	}
	rdb := s.NewClient(conf("chronos-db3"))
	if _, err := chronos.NewClient(rdb).Enqueue(ctx, Work{}); err != nil {
		t.Fatalf("Enqueue in database 3 with +select|3 +client|setname: %v", err)
	}
	if q, err := chronos.NewInspector(rdb).QueueInfo(ctx, chronos.DefaultQueue); err != nil || q.Ready != 1 {
		t.Fatalf("QueueInfo in database 3 = %+v, %v; want the task", q, err)
	}
}
