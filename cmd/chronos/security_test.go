package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/acltest"
	"github.com/chronos-go/chronos/internal/redistest"
	chronos "github.com/chronos-go/chronos/runtime"
)

// The whole of chronos runs as an ACL user with exactly chronos.ACLRules,
// over TLS with a private CA and client certificates, on one server and on
// a cluster of three masters with a replica each: a service (clients,
// servers, two scheduler instances that hand over; acltest.Exercise), the
// CLI (every command) and the console served by "chronos web" (every page
// and every action). No node's ACL LOG then holds any entry; every command
// the rules grant was used, but for those docs/security.md says are
// conditional; and the user is refused what the rules do not grant.
func TestEverythingRunsAsAnACLUserWithExactlyACLRules(t *testing.T) {
	redistest.Parallel(t)
	rules := chronos.ACLRules()
	t.Run("TLS server", func(t *testing.T) {
		redistest.Parallel(t)
		s := redistest.Start(t, redistest.Options{TLS: true})
		d := acltest.Single(s, rules)
		runSecured(t, d, s.TLSFiles(), []string{"-redis", "rediss://" + acltest.User + ":" + acltest.Password + "@" + s.Addr()})
		// Only a cluster client needs the slot map, the command table and
		// ASKING; only SchedulerConfig.Replicas sends WAIT and INFO.
		checkUncalled(t, d, rules, "+cluster|slots", "+command", "+asking", "+wait", "+info|replication")
		checkDenials(t, d, s.Client())
	})
	t.Run("TLS cluster", func(t *testing.T) {
		redistest.Parallel(t)
		c := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3, ReplicasPerMaster: 1, TLS: true})
		d := acltest.OfCluster(c, rules)
		runSecured(t, d, c.TLSFiles(), []string{"-redis", "rediss://" + acltest.User + ":" + acltest.Password + "@" + c.Addrs()[1], "-cluster"},
			func() {
				// A migrating slot answers ASK, which go-redis follows
				// with ASKING on the importing node: the slot of one of
				// the namespace's partitions, where ListRuns reads.
				insp := chronos.NewInspector(d.User())
				acltest.WhileSlotMigrates(t, c, partitionTag(t, c.Client()), func() {
					if runs, err := insp.ListRuns(context.Background(), "acl_never_ran", 10); err != nil || len(runs) != 0 {
						t.Errorf("ListRuns while the slot migrates = %v, %v", runs, err)
					}
				})
			})
		checkUncalled(t, d, rules, "+wait", "+info|replication") // Start refuses Replicas with a cluster client
		checkDenials(t, d, c.Client())
	})
}

// partitionTag is the hash tag of a partition of the default namespace:
// that of a queue stream, which every partition has once a server ran.
func partitionTag(t *testing.T, c redis.UniversalClient) string {
	t.Helper()
	var (
		mu  sync.Mutex
		tag string
	)
	err := c.(*redis.ClusterClient).ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
		iter := m.Scan(ctx, 0, "{chronos:p*}:q:*", 1000).Iterator()
		for iter.Next(ctx) {
			if k := iter.Val(); strings.Contains(k, "}") {
				mu.Lock()
				tag = k[1:strings.Index(k, "}")]
				mu.Unlock()
			}
		}
		return iter.Err()
	})
	if err != nil || tag == "" {
		t.Fatalf("no partition of the default namespace: %q, %v", tag, err)
	}
	return tag
}

// runSecured runs the service, the CLI and the console on d as the ACL
// user, then whatever more says, and checks the ACL LOG of every node.
func runSecured(t *testing.T, d *acltest.Deployment, f redistest.TLSFiles, redisFlags []string, more ...func()) {
	d.Reset(t)
	svc := acltest.Start(t, d, "")
	svc.Exercise()
	conn := append(slices.Clone(redisFlags), "-tls-ca", f.CACert, "-tls-cert", f.ClientCert, "-tls-key", f.ClientKey)
	runCLI(t, svc, conn)
	runConsole(t, svc, conn)
	svc.Stop()
	for _, m := range more {
		m()
	}
	acltest.CheckACLLog(t, d)
}

// runCLI runs every command of the CLI once.
func runCLI(t *testing.T, svc *acltest.Service, conn []string) {
	t.Helper()
	ok := func(args ...string) string {
		t.Helper()
		r := invoke(append(slices.Clone(conn), args...)...)
		if r.code != exitOK || r.stderr != "" {
			t.Fatalf("chronos %s: exit %d, stderr %q, stdout:\n%s", strings.Join(args, " "), r.code, r.stderr, r.stdout)
		}
		return r.stdout
	}
	var list []scheduleView
	if err := json.Unmarshal([]byte(ok("-json", "schedules", "-all")), &list); err != nil || len(list) != 5 {
		t.Fatalf("schedules -json -all: %d schedules, %v", len(list), err)
	}
	if err := json.Unmarshal([]byte(ok("-json", "schedules")), &list); err != nil || len(list) != 4 {
		t.Fatalf("schedules -json: %d schedules, %v; want the 4 not retired", len(list), err)
	}
	ok("retire", acltest.Retired2, "-who", "ops") // retired by the leader already: reads, writes nothing
	ok("schedules")
	ok("schedule", acltest.Hourly)
	ok("health")
	ok("pause", acltest.Tick, "-note", "cli", "-until", "1h", "-who", "ops")
	ok("resume", acltest.Tick)
	ok("pause", acltest.Grouped, "-job", "fast")
	ok("resume", acltest.Grouped, "-job", "fast")
	ok("trigger", acltest.Hourly, "-who", "ops")
	to := time.Now().UTC().Truncate(time.Hour).Add(-3 * time.Hour)
	from := to.Add(-2 * time.Hour)
	span := []string{"-from", from.Format(time.RFC3339), "-to", to.Format(time.RFC3339)}
	ok(append([]string{"backfill", acltest.Hourly, "-dry-run"}, span...)...)
	ok(append([]string{"backfill", acltest.Hourly, "-who", "ops"}, span...)...)
	ok("clear-overlap", acltest.Grouped, "-job", "slow")
	ok("leader")
	ok("instances")
	ok("queues")
	ok("queue", "pause", "imports")
	ok("queue", "resume", "imports")
	ok("dead")
	ok("requeue", svc.DeadIDs[0])
	ok("delete", svc.DeadIDs[1], "-yes")
	if r := invoke(append(slices.Clone(conn), "delete", svc.DeadIDs[2])...); r.code != exitFail || !strings.Contains(r.stderr, svc.DeadIDs[2]) {
		t.Fatalf("delete without -yes: exit %d, stderr %q", r.code, r.stderr)
	}
	ok("runs", acltest.Tick)
	ok("runs", "-kind", acltest.Flaky{}.Kind())
	// A partitioned namespace: migrate finds nothing to move (the
	// migration of a layout-1 namespace as the ACL user is
	// runtime's TestMigrateRunsAsAnACLUserWithACLRules).
	if out := ok("migrate", "-dry-run"); !strings.Contains(out, "is partitioned already (12 partitions): nothing to move") {
		t.Errorf("migrate -dry-run: %q", out)
	}
	ok("migrate")
	acltest.Eventually(t, "the CLI's trigger and backfill to be carried out", func() bool {
		return len(svc.Firings(acltest.Hourly, "request")) == 2 && len(svc.Firings(acltest.Hourly, "backfill")) == 6
	})
	acltest.Eventually(t, "the task requeued by the CLI to run", func() bool { return svc.Ran(svc.DeadIDs[0]) > 0 })
}

// runConsole serves the console with "chronos web" and loads every page
// and submits every action, as a browser without JavaScript would.
func runConsole(t *testing.T, svc *acltest.Service, conn []string) {
	t.Helper()
	w := startWeb(t, conn...)
	defer w.stop()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: waitTimeout}
	do := func(req *http.Request) string {
		t.Helper()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", req.Method, req.URL, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d (after redirects)\n%s", req.Method, req.URL, resp.StatusCode, body)
		}
		return string(body)
	}
	get := func(path string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, w.url+path, nil)
		return do(req)
	}
	post := func(from, path string, values url.Values) string {
		t.Helper()
		m := csrfToken.FindStringSubmatch(get(from))
		if m == nil {
			t.Fatalf("page %s has no form", from)
		}
		values.Set("csrf_token", m[1])
		req, _ := http.NewRequest(http.MethodPost, w.url+path, strings.NewReader(values.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return do(req)
	}

	waiting, err := svc.Insp.ListTasks(context.Background(), acltest.Unserved, chronos.TaskReady, chronos.TaskFilter{})
	if err != nil || len(waiting) == 0 {
		t.Fatalf("tasks of %s: %v, %v", acltest.Unserved, waiting, err)
	}
	to := time.Now().UTC().Truncate(time.Hour).Add(-6 * time.Hour)
	from := to.Add(-2 * time.Hour)
	span := "from=" + from.Format(time.RFC3339) + "&to=" + to.Format(time.RFC3339)
	for _, path := range []string{
		"", "schedules", "schedules?q=acl&status=active", "schedules/" + acltest.Hourly, "schedules/" + acltest.Grouped,
		"schedules/" + acltest.Hourly + "/backfill?" + span, "schedules/" + acltest.Retired2 + "/retire",
		"queues", "tasks?queue=default&state=ready", "tasks?queue=default&state=running",
		"tasks?queue=default&state=delayed", "tasks?queue=" + acltest.Unserved + "&state=ready",
		"tasks/" + waiting[0].ID, "tasks?id=" + waiting[0].ID, "dead", "dead?queue=default&kind=" + acltest.Doomed{}.Kind(),
		"dead/" + svc.DeadIDs[3] + "/delete",
	} {
		get(path)
	}
	live, _ := http.NewRequest(http.MethodGet, w.url+"schedules", nil)
	live.Header.Set("X-Chronos-Live", "1")
	do(live)

	post("schedules", "schedules/"+acltest.Tick+"/pause", url.Values{"note": {"console"}, "until": {"1h"}})
	post("schedules", "schedules/"+acltest.Tick+"/resume", url.Values{})
	post("schedules", "schedules/"+acltest.Grouped+"/pause", url.Values{"job": {"fast"}})
	post("schedules", "schedules/"+acltest.Grouped+"/resume", url.Values{"job": {"fast"}})
	post("schedules", "schedules/"+acltest.Hourly+"/trigger", url.Values{})
	post("schedules/"+acltest.Hourly+"/backfill?"+span, "schedules/"+acltest.Hourly+"/backfill",
		url.Values{"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "planned": {"3"}})
	post("schedules/"+acltest.Retired2+"/retire", "schedules/"+acltest.Retired2+"/retire", url.Values{"confirm": {"yes"}})
	post("queues", "queues/imports/pause", url.Values{})
	post("queues", "queues/imports/resume", url.Values{})
	post("dead", "dead/"+svc.DeadIDs[2]+"/requeue", url.Values{})
	post("dead/"+svc.DeadIDs[3]+"/delete", "dead/"+svc.DeadIDs[3]+"/delete", url.Values{"confirm": {"yes"}})

	acltest.Eventually(t, "the console's trigger and backfill to be carried out", func() bool {
		return len(svc.Firings(acltest.Hourly, "request")) == 3 && len(svc.Firings(acltest.Hourly, "backfill")) == 9
	})
	acltest.Eventually(t, "the task requeued by the console to run", func() bool { return svc.Ran(svc.DeadIDs[2]) > 0 })
	if n, err := svc.Insp.CountDead(context.Background()); err != nil || n != 0 {
		t.Errorf("dead letters left: %d, %v; want none (requeued or deleted)", n, err)
	}
}

var csrfToken = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// checkUncalled fails unless the commands of rules that nothing ran are
// exactly want.
func checkUncalled(t *testing.T, d *acltest.Deployment, rules []string, want ...string) {
	t.Helper()
	if got := acltest.Uncalled(t, d, rules); !slices.Equal(got, want) {
		t.Errorf("commands granted but not run: %v; want %v", got, want)
	}
}

// checkDenials writes keys of two other namespaces, one whose name starts
// like the user's, and checks the user is refused them and more.
func checkDenials(t *testing.T, d *acltest.Deployment, admin redis.UniversalClient) {
	t.Helper()
	others := []string{"{billing}:dead", "{chronosx}:q:default"}
	for _, k := range others {
		if err := admin.Set(context.Background(), k, "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	acltest.CheckDenials(t, d, d.User(), others)
}

// A user given the rules of another namespace is refused this one's keys;
// the CLI and the console say what to grant rather than failing with the
// bare reply. With -ns of its namespace, the same user gets an answer.
func TestAUserWithoutTheRulesOfTheNamespaceIsToldWhatToGrant(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	s.AddUser(acltest.User, acltest.Password, chronos.ACLRules("billing")...)
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(acltest.User, acltest.Password)
	r := invoke("-redis", u.String(), "schedules")
	want := `chronos schedules: ` + redactURL(u.String()) + `: the Redis user lacks a permission chronos needs in namespace "chronos" (NOPERM `
	if r.code != exitFail || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "check -ns, and give the user the rules of chronos.ACLRules") {
		t.Errorf("schedules in a namespace the user may not read: exit %d, stderr %q; want %q...", r.code, r.stderr, want)
	}
	if r := invoke("-redis", u.String(), "-ns", "billing", "schedules"); r.code != exitFail || strings.Contains(r.stderr, "NOPERM") ||
		!strings.Contains(r.stderr, `namespace "billing" has no schedules`) {
		t.Errorf("schedules in the user's own, empty namespace: exit %d, stderr %q", r.code, r.stderr)
	}

	w := startWeb(t, "-redis", u.String())
	status, body := httpGet(t, w.url, nil)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "Redis refused the console&#39;s user") ||
		!strings.Contains(body, "chronos.ACLRules") {
		t.Errorf("console overview: %d\n%s", status, body)
	}
}
