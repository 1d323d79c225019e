package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

// startProbe runs a scheduler with one schedule, "probe", in namespace ns
// of the deployment client reaches, as a service would.
func startProbe(t *testing.T, client redis.UniversalClient, ns string) {
	t.Helper()
	s := chronos.NewScheduler(client, chronos.SchedulerConfig{
		Namespace: ns, InstanceID: "probe-" + ns, LeaderTTL: time.Second, Logger: quiet,
	})
	must(t, chronos.RegisterInterval(s, time.Hour, report{Format: "probe"}, chronos.WithScheduleID("probe")))
	must(t, s.Start(context.Background()))
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
}

// Every form of -redis reaches its deployment: the CLI lists the schedule
// a scheduler registered there, pauses a queue and reads the pause back,
// and the web console, which connects the same way, serves its overview.
func TestEveryConnectionFormReachesItsDeployment(t *testing.T) {
	redistest.Parallel(t)
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3, ReplicasPerMaster: 1})
	tlsCl := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3, TLS: true})
	sen := redistest.StartSentinel(t)
	tlsNoCert := redistest.Start(t, redistest.Options{TLS: true, TLSClientAuth: redistest.ClientCertNone})
	tlsCert := redistest.Start(t, redistest.Options{TLS: true})

	nodes, sentinels := cl.Addrs(), sen.SentinelAddrs()
	certFlags := func(f redistest.TLSFiles) []string {
		return []string{"-tls-ca", f.CACert, "-tls-cert", f.ClientCert, "-tls-key", f.ClientKey}
	}
	cases := []struct {
		name   string
		ns     string
		client redis.UniversalClient
		args   []string
		web    bool
	}{
		{"cluster URL with addr=", "c1", cl.Client(),
			[]string{"-redis", "redis://" + nodes[0] + "?addr=" + nodes[1] + "&addr=" + nodes[2]}, false},
		// Any one node will do, however its slots are spread: it is a seed.
		{"one cluster node and -cluster", "c2", cl.Client(),
			[]string{"-redis", "redis://" + notOwner(cl, "c2"), "-cluster"}, true},
		{"cluster over TLS with a client certificate", "c3", tlsCl.Client(),
			append([]string{"-redis", "rediss://" + tlsCl.Addrs()[1], "-cluster"}, certFlags(tlsCl.TLSFiles())...), false},
		{"sentinel and -sentinel-master", "s1", sen.Client(),
			[]string{"-redis", "redis://" + sentinels[0], "-sentinel-master", sen.MasterName()}, true},
		{"failover URL with master_name=", "s2", sen.Client(),
			[]string{"-redis", "redis://" + sentinels[0] + "?master_name=" + sen.MasterName()}, false},
		{"TLS with -tls-ca", "t1", tlsNoCert.Client(),
			[]string{"-redis", tlsNoCert.URL(), "-tls-ca", tlsNoCert.TLSFiles().CACert}, false},
		{"TLS with a client certificate", "t2", tlsCert.Client(),
			append([]string{"-redis", tlsCert.URL()}, certFlags(tlsCert.TLSFiles())...), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			startProbe(t, tc.client, tc.ns)
			cli := func(args ...string) result {
				return invoke(append(append(slices.Clone(tc.args), "-ns", tc.ns), args...)...)
			}
			var list []scheduleView
			eventually(t, "the probe schedule to be listed", func() bool {
				r := cli("-json", "schedules")
				return r.code == exitOK && json.Unmarshal([]byte(r.stdout), &list) == nil && len(list) == 1
			})
			if list[0].ID != "probe" {
				t.Fatalf("schedules = %+v", list)
			}
			if r := cli("queue", "pause", "-force", "imports"); r.code != exitOK || !strings.HasPrefix(r.stdout, "paused queue imports") {
				t.Fatalf("queue pause: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			var qs []queueView
			if r := cli("-json", "queues"); r.code != exitOK || json.Unmarshal([]byte(r.stdout), &qs) != nil ||
				len(qs) != 1 || qs[0].Queue != "imports" || !qs[0].Paused {
				t.Fatalf("queues: exit %d, stdout %s, stderr %q", r.code, r.stdout, r.stderr)
			}
			if !tc.web {
				return
			}
			w := startWeb(t, append(slices.Clone(tc.args), "-ns", tc.ns)...)
			if status, body := httpGet(t, w.url+"schedules", nil); status != http.StatusOK || !strings.Contains(body, "probe") {
				t.Fatalf("console schedules page: %d\n%s", status, body)
			}
		})
	}
}

// notOwner is a node of cl other than the master of namespace ns's slot,
// so that a plain client sent there meets MOVED.
func notOwner(cl *redistest.Cluster, ns string) string {
	owner := cl.MasterForKey("{" + ns + "}:").Addr()
	for _, a := range cl.Addrs() {
		if a != owner {
			return a
		}
	}
	panic("a cluster of one node")
}

func TestTheConsoleNamesTheDeploymentItServes(t *testing.T) {
	redistest.Parallel(t)
	sen := redistest.StartSentinel(t)
	startProbe(t, sen.Client(), "chronos")
	w := startWeb(t, "-redis", "redis://"+sen.SentinelAddrs()[0], "-sentinel-master", sen.MasterName())
	want := fmt.Sprintf(`chronos web: namespace "chronos" on redis://%s (the master the sentinels know as %q), console at`,
		sen.SentinelAddrs()[0], sen.MasterName())
	if !strings.HasPrefix(w.stdout.String(), want) {
		t.Fatalf("stdout %q, want it to start %q", w.stdout, want)
	}
}

func TestConnectionFlagsThatCannotWorkAreUsageErrors(t *testing.T) {
	cases := []struct {
		args   []string
		stderr string
	}{
		{[]string{"-redis", "redis://h:1", "-tls-ca", "ca.pem"}, "-tls-ca needs a rediss:// URL in -redis"},
		{[]string{"-redis", "redis://h:1", "-tls-cert", "c.pem", "-tls-key", "k.pem"}, "-tls-cert needs a rediss:// URL"},
		{[]string{"-redis", "rediss://h:1", "-tls-cert", "c.pem"}, "-tls-cert and -tls-key go together"},
		{[]string{"-redis", "rediss://h:1", "-tls-ca", "/nonexistent/ca.pem"}, "-tls-ca: open /nonexistent/ca.pem"},
		{[]string{"-redis", "rediss://h:1", "-tls-ca", "connect_test.go"}, "no PEM certificate in it"},
		{[]string{"-redis", "redis://h:1", "-cluster", "-sentinel-master", "m"}, "-cluster and -sentinel-master exclude each other"},
		{[]string{"-redis", "redis://h:1?master_name=a", "-sentinel-master", "b"}, "-sentinel-master b and master_name=a in -redis disagree"},
		{[]string{"-redis", "redis://h:1?addr=nocolon"}, "unable to parse addr param: nocolon"},
		{[]string{"-redis", "redis://:pw-not-shown@h:1?bogus=1"}, "-redis redis://:xxxxx@h:1?bogus=1: redis: unexpected option: bogus"},
	}
	for _, tc := range cases {
		r := invoke(append(tc.args, "schedules")...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.stderr) || strings.Contains(r.stderr, "pw-not-shown") {
			t.Errorf("chronos %s schedules: exit %d, stderr %q; want 2 and %q",
				strings.Join(tc.args, " "), r.code, r.stderr, tc.stderr)
		}
	}
}

func TestRedactURLHidesEveryPassword(t *testing.T) {
	for in, want := range map[string]string{
		"redis://:hunter2@h:6379/0":                             "redis://:xxxxx@h:6379/0",
		"rediss://alice:hunter2@h:6379":                         "rediss://alice:xxxxx@h:6379",
		"redis://h:1?addr=h:2&addr=h:3":                         "redis://h:1?addr=h:2&addr=h:3",
		"redis://s:26379?master_name=m&password=hunter2":        "redis://s:26379?master_name=m&password=xxxxx",
		"redis://sen:hunter2@s:26379?password=hunter2&addr=x:1": "redis://sen:xxxxx@s:26379?password=xxxxx&addr=x:1",
		"redis://h:1?sentinel_password=hunter2":                 "redis://h:1?sentinel_password=xxxxx",
		"redis://h:1":                                           "redis://h:1",
		"::not a url":                                           "the Redis URL",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTopologyComesFromTheFlagsOrTheURL(t *testing.T) {
	cases := []struct {
		url   string
		flags connFlags
		want  topology
	}{
		{"redis://h:1", connFlags{}, topoSingle},
		{"redis://h:1?addr=h:2", connFlags{}, topoCluster},
		{"redis://h:1", connFlags{cluster: true}, topoCluster},
		{"redis://h:1?master_name=m", connFlags{}, topoSentinel},
		{"redis://h:1?master_name=m&addr=h:2", connFlags{}, topoSentinel},
		{"redis://h:1?addr=h:2", connFlags{sentinelMaster: "m"}, topoSentinel},
	}
	for _, tc := range cases {
		c := &cli{conn: tc.flags}
		rdb, got, err := c.newClient(tc.url)
		if err != nil || got != tc.want {
			t.Errorf("%s with %+v: %v, %v; want %v", tc.url, tc.flags, got, err, tc.want)
			continue
		}
		_ = rdb.Close()
	}
	// A cluster client reloads its slot map every second and gives up on a
	// hung node's read after 2 s (docs/cluster.md), unless the URL says.
	for u, want := range map[string]time.Duration{"redis://h:1?addr=h:2": 2 * time.Second, "redis://h:1?addr=h:2&read_timeout=7s": 7 * time.Second} {
		rdb, _, err := (&cli{}).newClient(u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		o := rdb.(*redis.ClusterClient).Options()
		if o.ClusterStateReloadInterval != time.Second || o.ReadTimeout != want {
			t.Errorf("%s: reload every %v, read timeout %v; want 1s and %v", u, o.ClusterStateReloadInterval, o.ReadTimeout, want)
		}
		_ = rdb.Close()
	}
	// go-redis's query parameters are passed on, whatever the form.
	for _, u := range []string{"redis://h:1?pool_size=3", "redis://h:1?pool_size=3&addr=h:2", "redis://h:1?pool_size=3&master_name=m"} {
		rdb, _, err := (&cli{}).newClient(u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		var size int
		switch c := rdb.(type) {
		case *redis.Client:
			size = c.Options().PoolSize
		case *redis.ClusterClient:
			size = c.Options().PoolSize
		}
		if size != 3 {
			t.Errorf("%s: pool size %d, want 3", u, size)
		}
		_ = rdb.Close()
	}
}
