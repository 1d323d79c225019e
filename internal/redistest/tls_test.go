package redistest

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestTLSServerAcceptsTLSClientsAndRefusesPlaintext(t *testing.T) {
	parallel(t)
	start := time.Now()
	s := Start(t, Options{TLS: true, AOF: true})
	t.Logf("TLS server with a new CA ready in %v", time.Since(start))
	ctx := context.Background()
	c := s.Client()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("TLS client: %v", err)
	}
	if !strings.HasPrefix(s.URL(), "rediss://") {
		t.Fatalf("URL = %s; want rediss://", s.URL())
	}

	plain := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer plain.Close()
	if err := plain.Ping(ctx).Err(); err == nil {
		t.Fatal("a plaintext client got an answer")
	}
	noCert := s.TLSConfig()
	noCert.Certificates = nil
	anon := s.NewClient(func(o *redis.Options) { o.TLSConfig, o.MaxRetries = noCert, -1 })
	if err := anon.Ping(ctx).Err(); err == nil {
		t.Fatal("a client without a certificate got an answer; tls-auth-clients is yes")
	}

	// The files work for a CLI too.
	if _, err := exec.LookPath("redis-cli"); err == nil {
		f := s.TLSFiles()
		_, port, _ := strings.Cut(s.Addr(), ":")
		out, err := exec.Command("redis-cli", "-p", port, "--tls", "--cacert", f.CACert,
			"--cert", f.ClientCert, "--key", f.ClientKey, "GET", "k").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "v" {
			t.Fatalf("redis-cli --tls GET k: %q, %v", out, err)
		}
	}

	s.Kill()
	s.Restart()
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("after Restart: %q, %v; want v", got, err)
	}
}

func TestTLSWithoutClientCertificates(t *testing.T) {
	parallel(t)
	for _, auth := range []TLSClientAuth{ClientCertOptional, ClientCertNone} {
		s := Start(t, Options{TLS: true, TLSClientAuth: auth})
		if s.TLSConfig().Certificates != nil {
			t.Fatalf("%v: TLSConfig carries a client certificate", auth)
		}
		if err := s.Client().Ping(context.Background()).Err(); err != nil {
			t.Fatalf("tls-auth-clients %v: %v", auth, err)
		}
	}
}

func TestTLSCluster(t *testing.T) {
	parallel(t)
	start := time.Now()
	c := StartCluster(t, ClusterOptions{ReplicasPerMaster: 1, TLS: true})
	t.Logf("TLS cluster of 3 masters + 3 replicas ready in %v", time.Since(start))
	ctx := context.Background()
	rc := c.Client()
	for i := range 30 {
		if err := rc.Set(ctx, "k"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range st {
		if m.Keys == 0 {
			t.Fatalf("master %s has no keys: %+v", m.Addr, st)
		}
	}
	plain := redis.NewClient(&redis.Options{Addr: c.Addrs()[0], MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer plain.Close()
	if err := plain.Ping(ctx).Err(); err == nil {
		t.Fatal("a plaintext client got an answer from a TLS node")
	}
	// Replication runs over TLS: a graceful failover needs the replica to
	// have the master's whole stream.
	old := c.MasterForKey("k1")
	if c.Failover(old.Addr()) == old {
		t.Fatal("Failover kept the master")
	}
	if got, err := rc.Get(ctx, "k1").Result(); err != nil || got != "1" {
		t.Fatalf("GET k1 after failover = %q, %v", got, err)
	}
}
