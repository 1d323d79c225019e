// Package leader elects one scheduler instance per election through a lease
// in Redis and tells its owner, at every moment, whether it may act as leader.
// An election is a namespace's in layout 1, or one partition's in a
// partitioned namespace (KeysAt): each partition has its own lease and
// epoch, a Set runs one elector per partition with one resign listener,
// and Assign tells every instance which partitions to contend for.
//
// The lease is a string key holding a token "<epoch>:<instance>:<nonce>".
// Acquiring it increments a fencing epoch in the same script, so every term
// has a number larger than every term before it, and the token alone
// identifies the term: a fence check is one GET compared with the token.
//
// An elector is a small state machine with two states, follower and leader.
// A follower in mode Contend (the default) tries to acquire when the
// current lease should have expired (its PTTL plus jitter) and at once when
// the leader publishes that it resigned; in Standby only once the lease has
// stayed free for a grace period; in Idle never (a leader set Idle
// resigns). A leader renews every TTL/2 with a compare-token-then-PEXPIRE
// script and steps down at the first renewal that does not succeed, whether
// the token no longer matches or Redis returned any error: it fails closed.
//
// Independently of renewals, a leader trusts its term only until
//
//	TrustedUntil = start of the last successful acquire or renew + TTL − DriftMargin
//
// measured on the monotonic clock. Redis starts counting the TTL after the
// command started, so the lease outlives the trust window; a process that
// was paused (GC, SIGSTOP, an overloaded host) and resumes after its lease
// expired sees Trusted(now) == false before it can act. Callers check
// [Term.Trusted] before each action and, for anything written to Redis,
// check the token inside the same script with [FenceScript].
package leader
