package redistest

import (
	"context"
	"os/exec"
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
