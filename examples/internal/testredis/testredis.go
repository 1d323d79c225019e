// Package testredis gives the examples' tests a private redis-server.
//
// It is a small stand-in for runtime/internal/redistest, which Go's
// internal-package rule keeps out of reach of packages outside runtime/.
// It follows the same conventions: a real redis-server on a free loopback
// port with its data in t.TempDir(), killed when the test ends; or, when
// REDIS_URL is set, that server, flushed first (point it at a dedicated,
// disposable database).
package testredis

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Start returns the options of a Redis owned by t, and registers its
// cleanup. It fails t when redis-server is not installed and REDIS_URL is
// not set.
func Start(t testing.TB) *redis.Options {
	t.Helper()
	if u := os.Getenv("REDIS_URL"); u != "" {
		opt, err := redis.ParseURL(u)
		if err != nil {
			t.Fatalf("testredis: REDIS_URL: %v", err)
		}
		c := redis.NewClient(opt)
		defer c.Close()
		if err := c.FlushDB(context.Background()).Err(); err != nil {
			t.Fatalf("testredis: flush REDIS_URL=%s: %v", u, err)
		}
		return opt
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("testredis: redis-server not found on PATH: install the Debian package redis-server or set REDIS_URL")
	}
	var err error
	for range 3 { // a free port can be taken between probe and bind
		var opt *redis.Options
		if opt, err = launch(t); err == nil {
			return opt
		}
	}
	t.Fatalf("testredis: %v", err)
	return nil
}

// Client returns a client of a Redis owned by t, closed when t ends.
func Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(Start(t))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func launch(t testing.TB) (*redis.Options, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--save", "", "--appendonly", "no", "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	opt := &redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	probe := redis.NewClient(&redis.Options{Addr: opt.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer probe.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			return nil, fmt.Errorf("redis-server on port %d exited (%v): %s", port, err, log)
		default:
		}
		if probe.Ping(context.Background()).Err() == nil {
			t.Cleanup(stop)
			return opt, nil
		}
	}
	stop()
	return nil, fmt.Errorf("redis-server on port %d did not answer PING within 10s", port)
}
