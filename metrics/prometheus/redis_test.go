package prometheus_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startRedis returns a client of a private redis-server that lives as long
// as the test: listening on a unix socket in the test's temporary
// directory, without persistence. The main module's internal/redistest
// does the same for its own tests; this module cannot import it. With
// REDIS_URL set (as make test allows), that dedicated Redis is used and
// flushed instead.
func startRedis(t testing.TB) *redis.Client {
	t.Helper()
	if url := os.Getenv("REDIS_URL"); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			t.Fatalf("REDIS_URL: %v", err)
		}
		c := redis.NewClient(opt)
		t.Cleanup(func() { _ = c.Close() })
		if err := c.FlushDB(context.Background()).Err(); err != nil {
			t.Fatalf("flush REDIS_URL: %v", err)
		}
		return c
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server not found on PATH: install the Debian package redis-server (make test does it as root)")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command("redis-server", "--port", "0", "--unixsocket", sock, "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })

	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	t.Cleanup(func() { _ = c.Close() })
	deadline := time.Now().Add(15 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server exited:\n%s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer PING within 15s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return c
}
