package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/console"
)

// Environment variables that carry the console's credentials, so that they
// stay out of the process list and shell history.
const (
	envBasicAuth   = "CHRONOS_WEB_BASIC_AUTH"   // "user:password"
	envBearerToken = "CHRONOS_WEB_BEARER_TOKEN" // the token
)

// defaultWebAddr is loopback only: the console can pause schedules and
// delete tasks, so it is reachable from elsewhere only when asked.
const defaultWebAddr = "127.0.0.1:8080"

func webCommands() []command {
	return []command{
		{name: "web", synopsis: "[-addr HOST:PORT] [-prefix PATH] [-read-only] [-basic-auth USER:PASSWORD] [-bearer-token TOKEN]", run: runWeb,
			summary: "Serve the web console (on " + defaultWebAddr + " by default) until interrupted. See docs/console.md."},
	}
}

func runWeb(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("web")
	addr := fs.String("addr", defaultWebAddr, "listen on `HOST:PORT`; other than loopback only with care, and with auth")
	prefix := fs.String("prefix", "", "serve under this `PATH` (for a reverse proxy that forwards /PATH/...)")
	readOnly := fs.Bool("read-only", false, "show everything, change nothing")
	basic := fs.String("basic-auth", "", "require HTTP basic auth `USER:PASSWORD` (default $"+envBasicAuth+")")
	bearer := fs.String("bearer-token", "", "accept Authorization: Bearer `TOKEN` (default $"+envBearerToken+")")
	refresh := fs.Duration("refresh", console.DefaultRefreshInterval, "how often open pages update themselves (0: never)")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	// Resolved after parsing, so that -h never prints a credential.
	opts := console.Options{Prefix: *prefix, ReadOnly: *readOnly, Namespace: c.namespace(), RefreshInterval: *refresh,
		BearerToken: cmp.Or(*bearer, os.Getenv(envBearerToken)),
		Logger:      slog.New(slog.NewTextHandler(c.stderr, nil)),
	}
	if *refresh == 0 {
		opts.RefreshInterval = -1
	}
	if c.timeout > 0 {
		opts.Timeout = c.timeout
	}
	if ba := cmp.Or(*basic, os.Getenv(envBasicAuth)); ba != "" {
		user, pass, ok := strings.Cut(ba, ":")
		if !ok || user == "" || pass == "" {
			return usagef("-basic-auth (or $%s): want USER:PASSWORD", envBasicAuth)
		}
		opts.BasicAuth = console.BasicAuth{User: user, Password: pass}
	}
	if *prefix != "" && !strings.HasPrefix(*prefix, "/") {
		return usagef("-prefix %q: want a path starting with /", *prefix)
	}
	// -timeout bounds each request of the console, not its lifetime: the
	// context connect returns is not the one the server runs under.
	_, insp, err := c.connect(ctx)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("chronos: web: %w", err)
	}
	srv := &http.Server{Handler: console.New(insp, opts), ReadHeaderTimeout: 10 * time.Second}

	mode := ""
	if *readOnly {
		mode = " (read-only)"
	}
	fmt.Fprintf(c.stdout, "chronos web: namespace %q on %s%s, console at http://%s%s/%s\n",
		c.namespace(), redactURL(c.redisURL), c.topologyText(), ln.Addr(), strings.TrimRight(*prefix, "/"), mode)
	if opts.BasicAuth.User == "" && opts.BearerToken == "" && !isLoopback(ln.Addr()) {
		fmt.Fprintf(c.stderr, "chronos web: warning: listening on %s without -basic-auth or -bearer-token: "+
			"anyone who reaches it can pause schedules and delete tasks\n", ln.Addr())
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	if err := c.rdb.Ping(pctx).Err(); err != nil {
		what, ok := c.explainRedis(err)
		if !ok {
			what = withoutChain(err)
		}
		fmt.Fprintf(c.stderr, "chronos web: warning: %s: %s; pages say Redis is unavailable until it answers\n",
			redactURL(c.redisURL), what)
	}
	cancel()

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("chronos: web: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("chronos: web: shut down: %w", err)
	}
	<-served
	fmt.Fprintln(c.stdout, "chronos web: stopped")
	return nil
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}
