package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	chronos "github.com/chronos-go/chronos/runtime"
)

// This file turns -redis and the topology and TLS flags into one
// redis.UniversalClient. The URL forms are go-redis's own (ParseURL,
// ParseClusterURL, ParseFailoverURL), so a URL that works in a service's
// configuration works here; what go-redis cannot tell from a URL (one
// address may be a single server or a cluster's seed node) a flag says.

// topology is the kind of Redis deployment -redis names.
type topology int

const (
	topoSingle   topology = iota // one server (or a proxy in front of many)
	topoCluster                  // Redis Cluster: the URL's addresses are seed nodes
	topoSentinel                 // Sentinel: the URL's addresses are sentinels
)

func (t topology) String() string {
	switch t {
	case topoCluster:
		return "cluster"
	case topoSentinel:
		return "sentinel"
	}
	return "single"
}

// connFlags are the global flags that say how to reach Redis besides -redis.
type connFlags struct {
	cluster        bool
	sentinelMaster string
	tlsCA          string
	tlsCert        string
	tlsKey         string
}

// addConnFlags adds the connection flags to fs, keeping values given before
// the command as the defaults after it (see flagSet).
func (c *cli) addConnFlags(fs *flag.FlagSet) {
	f := &c.conn
	fs.StringVar(&c.redisURL, "redis", c.redisURL, "Redis `URL` (default $REDIS_URL, then "+defaultRedisURL+"); see -cluster and -sentinel-master")
	fs.BoolVar(&f.cluster, "cluster", f.cluster, "-redis names nodes of a Redis Cluster (implied by addr= in the URL)")
	fs.StringVar(&f.sentinelMaster, "sentinel-master", f.sentinelMaster, "-redis names Sentinels; connect to the master they know as `NAME` (or master_name= in the URL)")
	fs.StringVar(&f.tlsCA, "tls-ca", f.tlsCA, "trust the CA certificates in `FILE` (PEM) for a rediss:// URL")
	fs.StringVar(&f.tlsCert, "tls-cert", f.tlsCert, "present the client certificate in `FILE` (PEM; with -tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", f.tlsKey, "the private key of -tls-cert, in `FILE` (PEM)")
}

// topologyOf tells from the flags and the URL's query which deployment u
// names: master_name= (a parameter of go-redis's failover URL) means
// Sentinel, addr= without it (more seed nodes) means a cluster.
func (f connFlags) topologyOf(u *url.URL) (topology, error) {
	q := u.Query()
	if name := q.Get("master_name"); name != "" && f.sentinelMaster != "" && name != f.sentinelMaster {
		return 0, usagef("-sentinel-master %s and master_name=%s in -redis disagree", f.sentinelMaster, name)
	}
	isSentinel := f.sentinelMaster != "" || q.Has("master_name")
	switch {
	case isSentinel && f.cluster:
		return 0, usagef("-cluster and -sentinel-master exclude each other: a deployment is a cluster or has sentinels")
	case isSentinel:
		return topoSentinel, nil
	case f.cluster || q.Has("addr"):
		return topoCluster, nil
	}
	return topoSingle, nil
}

// dialerRetries is how many times a connection is dialed before a command
// fails, unless the URL says (dialer_retries=): go-redis's five attempts
// suit a service, which waits anyway, but keep an operator waiting
// 25 seconds for a server that does not answer.
const dialerRetries = 2

// newClient builds the client for rawURL, and names the topology.
func (c *cli) newClient(rawURL string) (redis.UniversalClient, topology, error) {
	bad := func(err error) error { return usagef("-redis %s: %v", redactURL(rawURL), err) }
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, 0, usagef("-redis %s: not a URL", redactURL(rawURL))
	}
	topo, err := c.conn.topologyOf(u)
	if err != nil {
		return nil, 0, err
	}
	tlsOn := u.Scheme == "rediss"
	if err := c.conn.checkTLS(tlsOn); err != nil {
		return nil, 0, err
	}
	switch topo {
	case topoCluster:
		opt, err := redis.ParseClusterURL(rawURL)
		if err != nil {
			return nil, 0, bad(err)
		}
		if opt.TLSConfig, err = c.conn.tlsConfig(opt.TLSConfig); err != nil {
			return nil, 0, err
		}
		opt.ContextTimeoutEnabled = true // so that -timeout cuts a read short
		opt.DialerRetries = cmp.Or(opt.DialerRetries, dialerRetries)
		clusterDefaults(opt)
		return redis.NewClusterClient(opt), topo, nil
	case topoSentinel:
		opt, err := redis.ParseFailoverURL(rawURL)
		if err != nil {
			return nil, 0, bad(err)
		}
		opt.MasterName = cmp.Or(c.conn.sentinelMaster, opt.MasterName)
		if opt.TLSConfig, err = c.conn.tlsConfig(opt.TLSConfig); err != nil {
			return nil, 0, err
		}
		opt.ContextTimeoutEnabled = true
		opt.DialerRetries = cmp.Or(opt.DialerRetries, dialerRetries)
		return redis.NewFailoverClient(opt), topo, nil
	}
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, 0, bad(err)
	}
	if opt.TLSConfig, err = c.conn.tlsConfig(opt.TLSConfig); err != nil {
		return nil, 0, err
	}
	opt.ContextTimeoutEnabled = true
	opt.DialerRetries = cmp.Or(opt.DialerRetries, dialerRetries)
	return redis.NewClient(opt), topo, nil
}

// The cluster client options docs/cluster.md recommends, where the URL
// does not say (go-redis's URL has no parameter for the reload interval):
// the slot map reloaded every second, so that chronos web follows a
// failover within a second of the promotion even without a failed command
// to prompt it, and reads that give up on a hung node after 2 s instead of
// 5 s.
const (
	clusterReloadInterval = time.Second
	clusterReadTimeout    = 2 * time.Second
)

func clusterDefaults(opt *redis.ClusterOptions) {
	opt.ClusterStateReloadInterval = cmp.Or(opt.ClusterStateReloadInterval, clusterReloadInterval)
	opt.ReadTimeout = cmp.Or(opt.ReadTimeout, clusterReadTimeout)
}

// topologyText names the deployment for messages, after the URL: nothing
// for a single server.
func (c *cli) topologyText() string {
	switch c.topo {
	case topoCluster:
		return " (Redis Cluster)"
	case topoSentinel:
		return fmt.Sprintf(" (the master the sentinels know as %q)", c.sentinelName())
	}
	return ""
}

// checkTLS refuses TLS flags without TLS, and half a client certificate.
func (f connFlags) checkTLS(tlsOn bool) error {
	if !tlsOn {
		for _, fl := range []struct{ name, value string }{{"tls-ca", f.tlsCA}, {"tls-cert", f.tlsCert}, {"tls-key", f.tlsKey}} {
			if fl.value != "" {
				return usagef("-%s needs a rediss:// URL in -redis (redis:// is plaintext)", fl.name)
			}
		}
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usagef("-tls-cert and -tls-key go together: a client certificate needs its key")
	}
	return nil
}

// tlsConfig adds the CA and client certificate of the flags to base, the
// configuration go-redis made for a rediss:// URL (nil for redis://).
func (f connFlags) tlsConfig(base *tls.Config) (*tls.Config, error) {
	if base == nil || f.tlsCA == "" && f.tlsCert == "" {
		return base, nil
	}
	cfg := base.Clone()
	if f.tlsCA != "" {
		pem, err := os.ReadFile(f.tlsCA)
		if err != nil {
			return nil, usagef("-tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("-tls-ca %s: no PEM certificate in it", f.tlsCA)
		}
		cfg.RootCAs = pool
	}
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return nil, usagef("-tls-cert %s, -tls-key %s: %v", f.tlsCert, f.tlsKey, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// connect returns an Inspector on the Redis of -redis and ctx bounded by
// -timeout. Commands call it once their command line is parsed, since
// the flags may follow the command.
func (c *cli) connect(ctx context.Context) (context.Context, *chronos.Inspector, error) {
	// Resolved only now, so that -h never prints a password from REDIS_URL.
	if c.redisURL == "" {
		c.redisURL = cmp.Or(os.Getenv("REDIS_URL"), defaultRedisURL)
	}
	rdb, topo, err := c.newClient(c.redisURL)
	if err != nil {
		return ctx, nil, err
	}
	c.rdb, c.topo = rdb, topo
	if c.timeout > 0 {
		ctx, c.cancel = context.WithTimeout(ctx, c.timeout)
	}
	var opts []chronos.ClientOption
	if c.ns != "" {
		opts = append(opts, chronos.WithNamespace(c.ns))
	}
	c.ctx, c.insp = ctx, chronos.NewInspector(c.rdb, opts...)
	return ctx, c.insp, nil
}

// close releases what connect took.
func (c *cli) close() {
	if c.cancel != nil {
		c.cancel()
	}
	if c.rdb != nil {
		_ = c.rdb.Close()
	}
}

// redactedQuery are the query parameters of go-redis URLs that carry a
// password (the failover URL's password= authenticates to the master).
var redactedQuery = []string{"password", "sentinel_password"}

// redactURL hides the passwords of a Redis URL, for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the Redis URL"
	}
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		for k, p := range params {
			name, _, _ := strings.Cut(p, "=")
			if slices.Contains(redactedQuery, name) {
				params[k] = name + "=xxxxx"
			}
		}
		u.RawQuery = strings.Join(params, "&")
	}
	return u.Redacted()
}
