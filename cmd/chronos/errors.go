package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/internal/errtext"
	chronos "github.com/chronos-go/chronos/runtime"
)

// This file turns the error of a failed command into the one line an
// operator reads: the command, then, for a failure to talk to Redis, the
// (redacted) address, what went wrong and, where one applies, the fix. The
// call chain the error was wrapped in ("list schedules: schedstore: list:")
// says where in chronos it happened, which an operator cannot act on, so it
// is left out.

// describe returns the message for err, the error of c.cmd.
func (c *cli) describe(err error) string {
	var (
		nf *notFoundError
		ns *noNamespaceError
	)
	switch {
	case errors.As(err, &ns):
		return fmt.Sprintf("chronos %s: namespace %q has no schedules, queues or instances in %s (check -ns)",
			c.cmd.name, c.namespace(), redactURL(c.redisURL))
	case errors.As(err, &nf):
		return fmt.Sprintf("chronos %s: no %s %q in namespace %q%s", c.cmd.name, nf.what, nf.id, c.namespace(), nf.hint)
	}
	if what, ok := c.explainRedis(err); ok {
		return fmt.Sprintf("chronos %s: %s: %s", c.cmd.name, redactURL(c.redisURL), what)
	}
	return fmt.Sprintf("chronos %s: %s", c.cmd.name, withoutChain(err))
}

// withoutChain is the message of err without chronos's call chain: its
// cause, and the schedules or tasks the operations named, without package
// prefixes and bare operation names (errtext.Clean).
func withoutChain(err error) string {
	return errtext.Clean(err.Error())
}

// explainRedis says what went wrong when err is a failure to reach Redis
// or an error Redis replied, and how to fix it; ok is false for any other
// error.
func (c *cli) explainRedis(err error) (what string, ok bool) {
	var (
		unknownCA   x509.UnknownAuthorityError
		wrongHost   x509.HostnameError
		invalidCert x509.CertificateInvalidError
		notTLS      tls.RecordHeaderError
		dnsErr      *net.DNSError
		opErr       *net.OpError
		redisErr    redis.Error
	)
	tlsOn := c.usesTLS()
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		what := "no answer in time (dial_timeout, read_timeout)"
		if c.ctx != nil && c.ctx.Err() != nil {
			what = fmt.Sprintf("no answer within %v (-timeout)", c.timeout)
		}
		if tlsOn {
			what += ": a server that does not speak TLS never answers the TLS handshake; if so, use redis:// instead of rediss://"
		}
		return what, true
	case errors.As(err, &unknownCA):
		return "the server's certificate is signed by an authority this machine does not trust: " +
			"pass that CA's certificate with -tls-ca FILE", true
	case errors.As(err, &wrongHost):
		return fmt.Sprintf("the server's certificate is not valid for %s (%v): connect by a name it was issued for",
			wrongHost.Host, wrongHost.Error()), true
	case errors.As(err, &invalidCert):
		return fmt.Sprintf("the server's certificate is not valid: %v", invalidCert.Error()), true
	case errors.As(err, &notTLS):
		return "the server does not speak TLS: use redis:// instead of rediss://", true
	case errors.As(err, &opErr) && opErr.Op == "remote error": // a TLS alert from the server
		if strings.Contains(opErr.Err.Error(), "certificate required") {
			return "the server requires a client certificate: pass -tls-cert FILE and -tls-key FILE", true
		}
		return fmt.Sprintf("the server refused the TLS handshake (%v): check -tls-cert and -tls-key", opErr.Err), true
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("no such host %q: check the host of -redis", dnsErr.Name), true
	case errors.Is(err, syscall.ECONNREFUSED):
		at := ""
		if errors.As(err, &opErr) && opErr.Addr != nil {
			at = " at " + opErr.Addr.String()
		}
		return fmt.Sprintf("connection refused%s: is Redis running there? check the host and port of -redis", at), true
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		if !tlsOn {
			return "the server closed the connection at once: if it speaks TLS, use a rediss:// URL (and -tls-ca for a private CA)", true
		}
		return "the server closed the connection: if it requires a client certificate, pass -tls-cert FILE and -tls-key FILE", true
	case errors.As(err, &opErr):
		return opErr.Error(), true
	case c.topo == topoSentinel && strings.Contains(err.Error(), "all sentinels specified"):
		return c.explainSentinel(err), true
	case errors.As(err, &redisErr):
		return c.explainReply(redisErr.Error()), true
	case strings.HasPrefix(err.Error(), "redis: ") || strings.Contains(err.Error(), ": redis: "):
		return withoutChain(err), true // the client's own: "redis: connection pool timeout"
	}
	return "", false
}

// explainReply explains an error reply of Redis.
func (c *cli) explainReply(msg string) string {
	code, _, _ := strings.Cut(msg, " ")
	switch {
	case code == "MOVED" || code == "ASK":
		return fmt.Sprintf("this is a Redis Cluster node (%s): add -cluster (and more nodes as ?addr=HOST:PORT)", msg)
	case code == "CLUSTERDOWN":
		return fmt.Sprintf("the cluster is down (%s): see CLUSTER INFO on its nodes", msg)
	case strings.Contains(msg, "cluster support disabled"):
		return "this server is not in cluster mode: drop -cluster (and addr= from the URL)"
	case code == "NOAUTH":
		if c.topo == topoSentinel {
			return "the master requires a password: add ?password=PASSWORD to -redis " +
				"(the URL's user:password@ authenticates to the sentinels)"
		}
		return "the server requires a password: put it in -redis as redis://:PASSWORD@HOST:PORT (or USER:PASSWORD@)"
	case code == "WRONGPASS":
		return "the server refused the user name and password: check them in -redis (or $REDIS_URL)"
	case code == "NOPERM":
		return fmt.Sprintf("the Redis user lacks a permission chronos needs in namespace %q (%s): check -ns, "+
			"and give the user the rules of chronos.ACLRules for the namespace (docs/security.md)", c.namespace(), msg)
	case code == "READONLY":
		return "this server is a replica: point -redis at its master, or at the sentinels with -sentinel-master NAME"
	case code == "LOADING":
		return "the server is loading its data set: try again in a moment"
	case strings.HasPrefix(msg, "ERR unknown command"):
		if c.topo != topoSentinel {
			if names, ok := c.sentinelMasters(); ok {
				return fmt.Sprintf("this is a Sentinel, not a data server: add -sentinel-master NAME (it monitors %s)",
					orNone(strings.Join(names, ", ")))
			}
		}
		return fmt.Sprintf("the server does not know a command chronos needs (%s): is it Redis 6.2 or later?", msg)
	}
	return msg
}

// explainSentinel explains why no sentinel gave the address of the master.
func (c *cli) explainSentinel(err error) string {
	var redisErr redis.Error
	switch {
	case errors.Is(err, redis.Nil):
		names, _ := c.sentinelMasters()
		return fmt.Sprintf("the sentinels know no master named %q: check -sentinel-master (they monitor %s)",
			c.sentinelName(), orNone(strings.Join(names, ", ")))
	case !errors.As(err, &redisErr):
	case strings.Contains(redisErr.Error(), "unknown command 'sentinel'"):
		return "this is not a Sentinel: point -redis at the sentinels (port 26379 by default), " +
			"or drop -sentinel-master (and master_name= from the URL)"
	case strings.HasPrefix(redisErr.Error(), "NOAUTH"):
		return "the sentinels require a password: put it in -redis as redis://:PASSWORD@SENTINEL:PORT"
	case strings.HasPrefix(redisErr.Error(), "WRONGPASS"):
		return "the sentinels refused the user name and password in -redis: check them " +
			"(the master's go in ?password=, and ?username=)"
	}
	return withoutChain(err)
}

// sentinelMasters asks the first address of -redis for the masters it
// monitors as a Sentinel. It reports false when that is not a Sentinel
// (or it does not answer).
func (c *cli) sentinelMasters() ([]string, bool) {
	opt, err := redis.ParseURL(c.redisURL)
	if err != nil {
		return nil, false
	}
	if opt.TLSConfig, err = c.conn.tlsConfig(opt.TLSConfig); err != nil {
		return nil, false
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: opt.Addr, Username: opt.Username, Password: opt.Password,
		TLSConfig: opt.TLSConfig, MaxRetries: -1})
	defer sc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	masters, err := sc.Masters(ctx).Result()
	if err != nil {
		return nil, false
	}
	var names []string
	for _, m := range masters {
		if fields, ok := m.([]any); ok {
			for k := 0; k+1 < len(fields); k += 2 {
				if fields[k] == "name" {
					names = append(names, fmt.Sprint(fields[k+1]))
				}
			}
		}
		if fields, ok := m.(map[any]any); ok {
			names = append(names, fmt.Sprint(fields["name"]))
		}
	}
	return names, true
}

func (c *cli) sentinelName() string {
	if c.conn.sentinelMaster != "" {
		return c.conn.sentinelMaster
	}
	if opt, err := redis.ParseFailoverURL(c.redisURL); err == nil {
		return opt.MasterName
	}
	return ""
}

// usesTLS reports whether -redis is a rediss:// URL.
func (c *cli) usesTLS() bool { return strings.HasPrefix(c.redisURL, "rediss://") }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// notFoundError reports that the schedule or task an operator named does
// not exist; describe prints it without the layers of wrapping.
type notFoundError struct {
	what, id string
	hint     string // more to say, starting with "; " or " ("
	err      error
}

func (e *notFoundError) Error() string {
	return fmt.Sprintf("%s %q not found: %v", e.what, e.id, e.err)
}
func (e *notFoundError) Unwrap() error { return e.err }

// checkFound wraps err in a notFoundError when it wraps one of the
// Inspector's not-found sentinels.
func checkFound(err error, what, id string) error {
	if errors.Is(err, chronos.ErrScheduleNotFound) || errors.Is(err, chronos.ErrTaskNotFound) {
		return &notFoundError{what: what, id: id, err: err}
	}
	return err
}

// noNamespaceError reports that nothing at all is stored under the
// namespace: an empty answer would hide a mistyped -ns or -redis.
type noNamespaceError struct{}

func (*noNamespaceError) Error() string { return "no such namespace" }

// requireNamespace returns a noNamespaceError when the namespace holds
// nothing. Commands call it when their answer is empty, so that an
// existing namespace pays nothing for it.
func (c *cli) requireNamespace(ctx context.Context) error {
	ok, err := c.insp.NamespaceExists(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return &noNamespaceError{}
	}
	return nil
}
