package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/redistest"
)

// internalChain matches the package prefixes an operator must never read.
var internalChain = regexp.MustCompile(`(^|: )(schedstore|rdb|leader|keyspace|chronos): `)

// Each way of pointing the CLI at the wrong thing fails with one line that
// names the Redis (without its password) and says what to change.
func TestConnectionErrorsNameTheAddressAndTheFix(t *testing.T) {
	redistest.Parallel(t)
	plain := redistest.Start(t)
	withPassword := redistest.Start(t)
	must(t, withPassword.Client().ConfigSet(context.Background(), "requirepass", "the-real-one").Err())
	tlsNoCert := redistest.Start(t, redistest.Options{TLS: true, TLSClientAuth: redistest.ClientCertNone})
	tlsCert := redistest.Start(t, redistest.Options{TLS: true})
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3})
	sen := redistest.StartSentinel(t)
	node, sentinel := notOwner(cl, "chronos"), sen.SentinelAddrs()[0]

	cases := []struct {
		name string
		args []string
		want string // the line after "chronos schedules: "
	}{
		{"nothing listens on the port", []string{"-redis", "redis://127.0.0.1:1"},
			"redis://127.0.0.1:1: connection refused at 127.0.0.1:1: is Redis running there? check the host and port of -redis"},
		{"TLS with a private CA and no -tls-ca", []string{"-redis", tlsNoCert.URL()},
			tlsNoCert.URL() + ": the server's certificate is signed by an authority this machine does not trust: " +
				"pass that CA's certificate with -tls-ca FILE"},
		{"TLS server that requires a client certificate", []string{"-redis", tlsCert.URL(), "-tls-ca", tlsCert.TLSFiles().CACert},
			tlsCert.URL() + ": the server requires a client certificate: pass -tls-cert FILE and -tls-key FILE"},
		{"plaintext to a TLS port", []string{"-redis", "redis://" + tlsNoCert.Addr()},
			"redis://" + tlsNoCert.Addr() + ": the server closed the connection at once: " +
				"if it speaks TLS, use a rediss:// URL (and -tls-ca for a private CA)"},
		{"TLS to a plaintext port", []string{"-redis", "rediss://" + plain.Addr(), "-timeout", "2s"},
			"rediss://" + plain.Addr() + ": no answer within 2s (-timeout): a server that does not speak TLS never " +
				"answers the TLS handshake; if so, use redis:// instead of rediss://"},
		{"a cluster node without -cluster", []string{"-redis", "redis://" + node},
			"redis://" + node + ": this is a Redis Cluster node (MOVED "},
		{"-cluster on a server not in cluster mode", []string{"-redis", plain.URL(), "-cluster"},
			plain.URL() + ": this server is not in cluster mode: drop -cluster (and addr= from the URL)"},
		{"a sentinel without -sentinel-master", []string{"-redis", "redis://" + sentinel},
			"redis://" + sentinel + ": this is a Sentinel, not a data server: add -sentinel-master NAME (it monitors chronos)"},
		{"-sentinel-master on a data server", []string{"-redis", plain.URL(), "-sentinel-master", "chronos"},
			plain.URL() + ": this is not a Sentinel: point -redis at the sentinels (port 26379 by default), " +
				"or drop -sentinel-master (and master_name= from the URL)"},
		{"a master name the sentinels do not know", []string{"-redis", "redis://" + sentinel, "-sentinel-master", "nope"},
			"redis://" + sentinel + `: the sentinels know no master named "nope": check -sentinel-master (they monitor chronos)`},
		{"no password", []string{"-redis", withPassword.URL()},
			withPassword.URL() + ": the server requires a password: put it in -redis as redis://:PASSWORD@HOST:PORT (or USER:PASSWORD@)"},
		{"a wrong password", []string{"-redis", "redis://:wrong-pw@" + withPassword.Addr()},
			"redis://:xxxxx@" + withPassword.Addr() + ": the server refused the user name and password: check them in -redis (or $REDIS_URL)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := invoke(append(tc.args, "schedules")...)
			checkOneLine(t, r, "chronos schedules: "+tc.want)
		})
	}
	// MOVED names the slot and its owner; the fix follows.
	r := invoke("-redis", "redis://"+node, "schedules")
	if !strings.HasSuffix(r.stderr, "): add -cluster (and more nodes as ?addr=HOST:PORT)\n") {
		t.Errorf("MOVED: stderr %q", r.stderr)
	}
}

// The failover URL's user:password@ is the sentinels'; the master's
// password goes in ?password=, which the message says when the master
// asks for one, and which is never printed.
func TestASentinelMastersPasswordGoesInTheQuery(t *testing.T) {
	redistest.Parallel(t)
	sen := redistest.StartSentinel(t)
	ctx := context.Background()
	for _, s := range sen.Servers() {
		must(t, s.Client().ConfigSet(ctx, "requirepass", "master-pw").Err())
	}
	base := "redis://" + sen.SentinelAddrs()[0] + "?master_name=" + sen.MasterName()
	r := invoke("-redis", base, "schedules")
	checkOneLine(t, r, "chronos schedules: "+base+": the master requires a password: add ?password=PASSWORD to -redis "+
		"(the URL's user:password@ authenticates to the sentinels)")

	startProbe(t, sen.NewClient(func(o *redis.FailoverOptions) { o.Password = "master-pw" }), "chronos")
	eventually(t, "the probe schedule through ?password=", func() bool {
		return invoke("-redis", base+"&password=master-pw", "schedules").code == exitOK
	})
	r = invoke("-redis", base+"&password=wrong-pw", "schedules")
	checkOneLine(t, r, "chronos schedules: "+base+"&password=xxxxx: the server refused the user name and password: "+
		"check them in -redis (or $REDIS_URL)")
}

// checkOneLine checks that r failed with exactly the line want (or, when
// want ends in a space or "(", a line starting with it), without the
// internal call chain.
func checkOneLine(t *testing.T, r result, want string) {
	t.Helper()
	if r.code != exitFail || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1, nothing and one line", r.code, r.stdout, r.stderr)
	}
	got := strings.TrimSuffix(r.stderr, "\n")
	if prefix := strings.HasSuffix(want, " ") || strings.HasSuffix(want, "("); prefix && !strings.HasPrefix(got, want) ||
		!prefix && got != want {
		t.Fatalf("stderr\n  %s\nwant\n  %s", got, want)
	}
	if m := internalChain.FindString(strings.TrimPrefix(got, "chronos ")); m != "" {
		t.Fatalf("stderr %q has the internal prefix %q", got, m)
	}
	if strings.Contains(got, "-pw") {
		t.Fatalf("stderr %q shows a password", got)
	}
}

func TestOtherErrorsLoseTheirCallChain(t *testing.T) {
	for in, want := range map[string]string{
		"chronos: list schedules: schedstore: list: boom":                        "boom",
		`chronos: backfill "x": chronos: not supported for an isolated schedule`: `backfill "x": not supported for an isolated schedule`,
		"rdb: dead letter 1: rdb: not found":                                     "dead letter 1: not found",
		"chronos web: listen tcp: address in use":                                "chronos web: listen tcp: address in use",
	} {
		if got := withoutChain(errors.New(in)); got != want {
			t.Errorf("withoutChain(%q) = %q, want %q", in, got, want)
		}
	}
	// Wrapping keeps the cause and the context; the chain and repeats go.
	err := fmt.Errorf("chronos: pause %q: %w", "x", errors.New("schedstore: pause \"x\": nope"))
	if got := withoutChain(err); got != `pause "x": nope` {
		t.Errorf("withoutChain(%q) = %q", err, got)
	}
}
