// Package redistest starts private redis-server processes for tests.
//
// Every test that needs Redis gets its own server: a real redis-server
// binary listening on a free loopback port, with its data directory in
// t.TempDir(). Fault tests can Kill and Restart it. Setting REDIS_URL makes
// Start use that server instead (it is flushed first, so point it at a
// dedicated instance and run with -p 1); Kill and Restart then skip the test.
//
// It lives at the module root so that every package of the module, the
// examples included, can use it.
//
// Besides single servers (Start) it starts Sentinel deployments
// (StartSentinel) and Redis Clusters with replicas (StartCluster); each
// deployment's Client is a redis.UniversalClient, so a test can run the same
// body against any of them. A ClusterPool lends clusters to many tests in
// turn, cleaned between them, for packages whose suites run on a cluster
// when ClusterEnv is set. Servers and clusters can speak TLS only
// (Options.TLS, ClusterOptions.TLS), and can be given least-privilege ACL
// users whose denials the test reads back (AddUser, ACLLog).
package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options configure a private server. The zero value is a server without
// persistence, which is what most tests want.
type Options struct {
	// AOF turns on the append-only file (appendfsync always), so Restart
	// after Kill keeps every acknowledged write.
	AOF bool

	// TLS makes the server accept TLS connections only (its plaintext port
	// is closed), with certificates from a private CA made for the test;
	// see Server.TLSConfig and Server.TLSFiles. Clients from Client and
	// NewClient use TLS on their own.
	TLS bool

	// TLSClientAuth says whether a TLS server asks clients for a
	// certificate. The zero value requires one, as Redis does by default.
	TLSClientAuth TLSClientAuth
}

// Server is a redis-server process owned by one test.
type Server struct {
	t    testing.TB
	opts Options
	dir  string
	port int
	url  string // set when REDIS_URL points at an external server

	tls   *tlsFiles // nil without TLS
	extra []string  // more redis-server arguments (cluster mode)

	mu      sync.Mutex
	proc    *os.Process
	frozen  bool          // proc was stopped with SIGSTOP (Freeze)
	exited  chan struct{} // closed when proc has been reaped
	clients []*redis.Client
	users   []aclUser // applied again after Restart
}

// Start launches a private redis-server for t (or connects to REDIS_URL) and
// registers its cleanup. It fails the test with an install hint when
// redis-server is not on PATH. With Options.TLS it skips the test when
// REDIS_URL is set, since it cannot give that server certificates.
func Start(t testing.TB, opts ...Options) *Server {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if u := os.Getenv("REDIS_URL"); u != "" {
		if o.TLS {
			t.Skip("redistest: a TLS server needs a private redis-server; REDIS_URL is set")
		}
		s := &Server{t: t, opts: o, url: u}
		c := s.Client()
		if err := c.FlushDB(context.Background()).Err(); err != nil {
			t.Fatalf("redistest: REDIS_URL=%s: %v", u, err)
		}
		return s
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redistest: redis-server not found on PATH: install the Debian package redis-server " +
			"(`make test` does this when run as root) or set REDIS_URL to a dedicated Redis")
	}
	var tf *tlsFiles
	if o.TLS {
		var err error
		if tf, err = newTLSFiles(t.TempDir(), o.TLSClientAuth); err != nil {
			t.Fatalf("redistest: %v", err)
		}
	}
	s, err := startServer(t, o, tf, nil, freePort)
	if err != nil {
		t.Fatalf("redistest: start redis-server: %v", err)
	}
	return s
}

// startServer launches a private redis-server with its own data directory,
// the TLS files tf (nil for none) and the extra arguments, on a port from
// pickPort, and registers its cleanup. It tries a few ports, since another
// process can take a free port before the server binds it.
func startServer(t testing.TB, o Options, tf *tlsFiles, extra []string, pickPort func() (int, error)) (*Server, error) {
	s := &Server{t: t, opts: o, dir: t.TempDir(), tls: tf, extra: extra}
	t.Cleanup(s.cleanup)
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if s.port, err = pickPort(); err != nil {
			continue
		}
		if err = s.launch(); err == nil {
			return s, nil
		}
	}
	return nil, err
}

// Addr is the host:port of the server.
func (s *Server) Addr() string {
	if s.url != "" {
		opt, err := redis.ParseURL(s.url)
		if err != nil {
			s.t.Fatalf("redistest: REDIS_URL: %v", err)
		}
		return opt.Addr
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// URL is a redis:// URL for the server, for child processes; with TLS it is
// a rediss:// URL, and the child must also trust TLSFiles().CACert (and
// present the client certificate when the server requires one).
func (s *Server) URL() string {
	if s.url != "" {
		return s.url
	}
	if s.tls != nil {
		return "rediss://" + s.Addr()
	}
	return "redis://" + s.Addr()
}

// External reports whether the server is the one named by REDIS_URL.
func (s *Server) External() bool { return s.url != "" }

// Client returns a new client for the server, closed when the test ends.
func (s *Server) Client() redis.UniversalClient {
	return s.NewClient(nil)
}

// NewClient returns a client configured by tweak (which may be nil), closed
// when the test ends.
func (s *Server) NewClient(tweak func(*redis.Options)) *redis.Client {
	opt := s.Options()
	if tweak != nil {
		tweak(opt)
	}
	c := redis.NewClient(opt)
	s.mu.Lock()
	s.clients = append(s.clients, c)
	s.mu.Unlock()
	if s.url != "" {
		s.t.Cleanup(func() { _ = c.Close() })
	}
	return c
}

// Options returns fresh client options for the server, for callers that
// build and own their client.
func (s *Server) Options() *redis.Options {
	if s.url != "" {
		opt, err := redis.ParseURL(s.url)
		if err != nil {
			s.t.Fatalf("redistest: REDIS_URL: %v", err)
		}
		return opt
	}
	return &redis.Options{Addr: s.Addr(), TLSConfig: s.TLSConfig()}
}

// PID is the process ID of the running server, or 0 (killed, or frozen).
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.frozen {
		return 0
	}
	return s.proc.Pid
}

// hasProc reports whether the server's process exists, running or frozen.
func (s *Server) hasProc() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil
}

// Freeze stops the server with SIGSTOP, as a hung host would: its
// connections stay open and it answers nothing. PID then reports 0, as
// for a killed server; Restart kills it and starts it again, and so does
// the test's end.
func (s *Server) Freeze() {
	s.t.Helper()
	s.requirePrivate("Freeze")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		_ = s.proc.Signal(syscall.SIGSTOP)
		s.frozen = true
	}
}

// Kill stops the server with SIGKILL, as a crash would. Data not yet on disk
// is lost unless the server was started with AOF.
func (s *Server) Kill() {
	s.t.Helper()
	s.requirePrivate("Kill")
	s.signal(syscall.SIGKILL)
}

// Stop stops the server with SIGTERM (a clean shutdown).
func (s *Server) Stop() {
	s.t.Helper()
	s.requirePrivate("Stop")
	s.signal(syscall.SIGTERM)
}

// Restart starts the server again on the same port with the same data
// directory. It kills the old process first if it is still running.
func (s *Server) Restart() {
	s.t.Helper()
	s.requirePrivate("Restart")
	if s.hasProc() {
		s.signal(syscall.SIGKILL)
	}
	var err error
	for attempt := 0; attempt < 50; attempt++ { // the port can linger briefly
		if err = s.launch(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("redistest: restart: %v", err)
}

func (s *Server) requirePrivate(op string) {
	if s.url != "" {
		s.t.Skipf("redistest: %s needs a private redis-server; REDIS_URL is set", op)
	}
}

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	proc, exited := s.proc, s.exited
	s.proc, s.exited, s.frozen = nil, nil, false
	s.mu.Unlock()
	if proc == nil {
		return
	}
	_ = proc.Signal(sig)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = proc.Kill()
		<-exited
	}
}

// launch starts the process, waits for PING and gives it the ACL users
// added so far (a restarted server has forgotten them).
func (s *Server) launch() error {
	args := []string{
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--protected-mode", "no",
		"--daemonize", "no",
		"--logfile", filepath.Join(s.dir, "redis.log"),
	}
	if s.tls != nil {
		args = append(args, "--port", "0", "--tls-port", strconv.Itoa(s.port))
		args = append(args, s.tls.serverArgs()...)
	} else {
		args = append(args, "--port", strconv.Itoa(s.port))
	}
	if s.opts.AOF {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	}
	args = append(args, s.extra...)
	probe := redis.NewClient(&redis.Options{Addr: s.Addr(), TLSConfig: s.TLSConfig(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer probe.Close()
	cmd, exited, err := spawn(args, filepath.Join(s.dir, "redis.log"), func(ctx context.Context) error { return probe.Ping(ctx).Err() })
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.proc, s.exited = cmd.Process, exited
	users := append([]aclUser(nil), s.users...)
	s.mu.Unlock()
	for _, u := range users {
		if err := u.apply(context.Background(), probe); err != nil {
			s.signal(syscall.SIGKILL)
			return err
		}
	}
	return nil
}

// spawn starts redis-server with args (as a server or, with --sentinel, a
// sentinel) and waits until ping succeeds. It returns the process and a
// channel closed once the process has been reaped; on failure the process
// is gone and the error quotes the end of logFile.
func spawn(args []string, logFile string, ping func(context.Context) error) (*exec.Cmd, chan struct{}, error) {
	cmd := exec.Command("redis-server", args...)
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			log, _ := os.ReadFile(logFile)
			return nil, nil, fmt.Errorf("redis-server exited (%v): %s", waitErr, tail(log, 400))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := ping(ctx)
		cancel()
		if err == nil {
			return cmd, exited, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	<-exited
	return nil, nil, errors.New("redis-server did not answer PING within 15s")
}

func (s *Server) cleanup() {
	s.mu.Lock()
	clients := s.clients
	s.clients = nil
	s.mu.Unlock()
	for _, c := range clients {
		_ = c.Close()
	}
	if s.hasProc() {
		s.signal(syscall.SIGKILL)
	}
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

// Parallel marks t as a test that runs in parallel with the package's
// other parallel tests, each on its own private server. It does nothing
// for a benchmark, or when REDIS_URL points the tests at one shared server
// (Start flushes it, so its tests must run one at a time).
func Parallel(t testing.TB) {
	if os.Getenv("REDIS_URL") != "" {
		return
	}
	if p, ok := t.(interface{ Parallel() }); ok {
		p.Parallel()
	}
}
