// Package redisproc starts a private redis-server for the benchmark program:
// a real redis-server binary on a free loopback port, with its data
// directory in a temporary directory and persistence off, so that nothing
// else on the machine shares it and nothing is written to disk during a
// measurement.
//
// It is a small equivalent of the main module's internal redistest package,
// which this nested module cannot import.
package redisproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoRedisServer is returned by Start when redis-server is not on PATH.
var ErrNoRedisServer = errors.New("redisproc: redis-server not found on PATH (Debian: apt-get install redis-server; or pass a dedicated Redis URL)")

// Server is a running private redis-server. Close stops it and removes its
// directory.
type Server struct {
	// Addr is the host:port the server listens on.
	Addr string

	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start launches redis-server on a free loopback port and waits until it
// answers PING. It tries a few ports, since a free port can be taken by
// someone else between probing and binding.
func Start(ctx context.Context) (*Server, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, ErrNoRedisServer
	}
	dir, err := os.MkdirTemp("", "chronos-bench-redis-")
	if err != nil {
		return nil, fmt.Errorf("redisproc: %w", err)
	}
	for attempt := 0; attempt < 5; attempt++ {
		var port int
		if port, err = freePort(); err != nil {
			continue
		}
		var s *Server
		if s, err = launch(ctx, dir, port); err == nil {
			return s, nil
		}
	}
	_ = os.RemoveAll(dir)
	return nil, fmt.Errorf("redisproc: start redis-server: %w", err)
}

func launch(ctx context.Context, dir string, port int) (*Server, error) {
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, exited: make(chan struct{})}
	s.cmd = exec.Command("redis-server",
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--dir", dir,
		"--save", "",
		"--appendonly", "no",
		"--protected-mode", "no",
		"--daemonize", "no",
		"--logfile", filepath.Join(dir, "redis.log"),
	)
	s.cmd.SysProcAttr = sysProcAttr()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	var waitErr error
	go func() { waitErr = s.cmd.Wait(); close(s.exited) }()

	probe := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer probe.Close()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			return nil, fmt.Errorf("redis-server exited (%v): %s", waitErr, tail(log, 400))
		case <-ctx.Done():
			s.kill()
			return nil, ctx.Err()
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := probe.Ping(pctx).Err()
		cancel()
		if err == nil {
			return s, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.kill()
	return nil, errors.New("redis-server did not answer PING within 15s")
}

// PID is the process ID of the server.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Close stops the server and removes its data directory.
func (s *Server) Close() error {
	s.kill()
	return os.RemoveAll(s.dir)
}

func (s *Server) kill() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
