// Package clustertest starts a private Redis Cluster for tests: several
// redis-server processes in cluster mode on free loopback ports, joined with
// redis-cli --cluster create, each with its data in t.TempDir(). It exists
// to prove on a real cluster what the queue's key design promises: every
// script declares its keys and all keys of a namespace share one slot.
package clustertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Start launches a cluster of n masters (n >= 3) and returns a client for
// it, closed and torn down when the test ends. It skips the test when
// redis-server or redis-cli is not installed.
func Start(t testing.TB, n int) *redis.ClusterClient {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("clustertest: %s not on PATH", bin)
		}
	}
	dir := t.TempDir()
	addrs := make([]string, 0, n)
	for i := range n {
		port, err := freePort()
		if err != nil {
			t.Fatalf("clustertest: %v", err)
		}
		nodeDir := filepath.Join(dir, strconv.Itoa(i))
		if err := os.Mkdir(nodeDir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("redis-server",
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", nodeDir,
			"--save", "", "--appendonly", "no", "--protected-mode", "no",
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--logfile", filepath.Join(nodeDir, "redis.log"))
		cmd.SysProcAttr = sysProcAttr()
		if err := cmd.Start(); err != nil {
			t.Fatalf("clustertest: start redis-server: %v", err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		waitPing(t, addr)
		addrs = append(addrs, addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("clustertest: redis-cli --cluster create: %v\n%s", err, out)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { _ = c.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for { // every node must agree the cluster is up, or the first commands fail with CLUSTERDOWN
		err := allOK(addrs)
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("clustertest: cluster not ok after 30s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// allOK reports an error unless every node says cluster_state:ok.
func allOK(addrs []string) error {
	for _, a := range addrs {
		n := redis.NewClient(&redis.Options{Addr: a})
		info, err := n.ClusterInfo(context.Background()).Result()
		_ = n.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", a, err)
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("%s: cluster_state not ok", a)
		}
	}
	return nil
}

func waitPing(t testing.TB, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("clustertest: %s did not answer PING", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
