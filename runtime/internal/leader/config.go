package leader

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

// DefaultTTL is the lease lifetime when Config.TTL is zero. A crashed leader
// is replaced within about one TTL; a resigning one at once.
const DefaultTTL = 5 * time.Second

// Config configures an Elector. The zero value is usable: namespace
// "chronos" in layout 1, a random instance ID, a 5 s lease, contending, and
// no logging.
type Config struct {
	// Namespace selects the key set of layout 1 (see KeysFor) when Prefix
	// is empty, and names the election in logs. Default "chronos".
	Namespace string
	// Prefix is the key prefix of the election, hash tag included: one
	// partition of a partitioned namespace (keyspace.Layout.Partition; see
	// KeysAt). Default keyspace.Prefix(Namespace), layout 1.
	Prefix string
	// Partition is the partition the election is for, for logs only.
	Partition int
	// Mode is the elector's mode until SetMode changes it. The zero value,
	// Contend, takes the lease whenever it is free.
	Mode Mode
	// Grace is how long a lease must have stayed free before an elector in
	// Standby takes it. Default min(TTL/10, 500ms), which is at least the
	// jitter of a contending elector, so a live contender is first.
	Grace time.Duration
	// ExternalHints makes Run leave the resign channel alone: whoever runs
	// the elector delivers resign notices with Hint instead (a Set does,
	// for the electors of every partition, on one connection).
	ExternalHints bool
	// InstanceID names this process in the token and in logs. It should be
	// unique per process; default "<hostname>-<pid>-<random>". Each Elector
	// also adds a random nonce to its tokens, so two electors that share an
	// ID still never mistake each other's lease for their own.
	InstanceID string
	// TTL is the lease lifetime. The leader renews every TTL/2. Default 5s.
	TTL time.Duration
	// DriftMargin is subtracted from TTL when computing TrustedUntil, to
	// absorb clock-rate differences between this host and Redis and the
	// granularity of Redis expiry. Default TTL/10; it is capped below TTL/2.
	DriftMargin time.Duration
	// Replicas, if positive, is how many replicas must acknowledge every
	// acquire and renew (Redis WAIT, on the same connection) before the term
	// starts or goes on. Set it with Sentinel or managed failover, where an
	// unreplicated lease could be lost on promotion and a second instance
	// acquire while the first still trusts its term. A write acknowledged
	// by too few replicas fails closed, like a Redis error. With a cluster
	// client the script and WAIT go to the master of the lease's slot, on
	// that master's own client (Primary).
	Replicas int
	// ReplicaTimeout bounds each WAIT. Default TTL/10.
	ReplicaTimeout time.Duration
	// Guard decides how many replicas each write must reach (see
	// ReplicaGuard); share one with the other writers of the same leader
	// that write to the same master (on a cluster, of the same partition).
	// Default: NewReplicaGuard(Replicas).
	Guard *ReplicaGuard
	// Logger receives transitions and renewal failures. Default: discard.
	Logger *slog.Logger
	// OnChange, if set, is called for every transition, in order, one at a
	// time, from a goroutine owned by Run. A slow callback delays later
	// notifications but never renewals. Notifications are for reacting
	// (start or stop the firing loop); safety comes from Term.Trusted and
	// the fence, not from how quickly a notification arrives.
	OnChange func(Change)
}

func (c Config) withDefaults() Config {
	if c.Namespace == "" {
		c.Namespace = keyspace.DefaultNamespace
	}
	if c.InstanceID == "" {
		host, _ := os.Hostname()
		if host == "" {
			host = "host"
		}
		c.InstanceID = host + "-" + strconv.Itoa(os.Getpid()) + "-" + randomHex(4)
	}
	if c.Prefix == "" {
		c.Prefix = keyspace.Prefix(c.Namespace)
	}
	if c.TTL <= 0 {
		c.TTL = DefaultTTL
	}
	if c.Grace <= 0 {
		c.Grace = maxJitter(c.TTL)
	}
	if c.DriftMargin <= 0 {
		c.DriftMargin = c.TTL / 10
	}
	if c.DriftMargin >= c.TTL/2 {
		c.DriftMargin = c.TTL/2 - time.Millisecond
	}
	if c.ReplicaTimeout <= 0 {
		c.ReplicaTimeout = c.TTL / 10
	}
	if c.Guard == nil && c.Replicas > 0 {
		c.Guard = NewReplicaGuard(c.Replicas)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// maxJitter bounds the random delay a contending follower adds to its
// attempts after a lease's expiry, so that followers do not all try at the
// same instant: TTL/10, and never over 500ms, so that a crashed leader is
// replaced within TTL + 1s whatever the TTL.
func maxJitter(ttl time.Duration) time.Duration { return min(ttl/10, 500*time.Millisecond) }
