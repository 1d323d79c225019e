package chronos

import "github.com/chronos-go/chronos/runtime/internal/keyspace"

// aclCommands are the commands chronos sends, each for a reason
// docs/security.md gives. Keep them in the order of that table.
var aclCommands = []string{
	// Connections (go-redis and chronos's own).
	"+ping",           // PubSub health checks of the wake and resign subscriptions; chronos web at start
	"+client|id",      // the server's blocking-read connection learns its own ID...
	"+client|unblock", // ...so that Shutdown can end that read at once
	"+cluster|slots",  // a ClusterClient learns the slot map
	"+command",        // a ClusterClient learns the key positions of commands
	"+asking",         // a ClusterClient follows ASK redirections while a slot migrates
	// Scripts, transactions, pub/sub.
	"+eval", "+evalsha", "+script|load",
	"+multi", "+exec",
	"+subscribe", "+publish", "+pubsub|numsub",
	// SchedulerConfig.Replicas and WithReplicas.
	"+wait", "+info|replication",
	// Keys (limited to the namespace by the key patterns).
	"+scan",
	"+del", "+unlink", "+rename", "+exists", "+get", "+set", "+incr", "+pexpire", "+pttl", "+type",
	"+hdel", "+hexists", "+hget", "+hgetall", "+hkeys", "+hlen", "+hmget", "+hscan", "+hset", "+hsetnx",
	"+lindex", "+lpush", "+lrange", "+ltrim",
	"+sadd", "+scard", "+sismember", "+smembers", "+srandmember", "+srem",
	"+zadd", "+zcard", "+zrange", "+zrangebyscore", "+zrem", "+zremrangebyrank", "+zremrangebyscore",
	"+zrevrange", "+zscan", "+zscore", "+zmscore",
	"+xack", "+xadd", "+xautoclaim", "+xclaim", "+xdel", "+xgroup|create", "+xgroup|delconsumer",
	"+xinfo|consumers", "+xinfo|groups", "+xlen", "+xpending", "+xrange", "+xreadgroup", "+xrevrange",
}

// ACLRules returns the rules of a Redis ACL user (the arguments of ACL
// SETUSER after the user name) that may do everything chronos does in the
// given namespaces ("" or none: the default namespace, "chronos") and
// nothing else: the Client, Server, Scheduler and Inspector, the chronos
// CLI and the web console, on a single server, Redis Cluster or Sentinel.
// The user still needs "on" and a password:
//
//	rules := append([]string{"on", ">" + password}, chronos.ACLRules("orders")...)
//	err := admin.ACLSetUser(ctx, "orders-app", rules...).Err()
//
// The rules start with resetkeys, resetchannels and -@all, so applying
// them to an existing user replaces its permissions (add a service's own
// rules after them); then they grant:
//
//   - each command chronos or go-redis sends, by name (+get, +xadd, ...,
//     +xgroup|create), never a category. Two are @dangerous in Redis's
//     own categories: CLIENT UNBLOCK (also @admin), which ends another
//     connection's blocking read (chronos unblocks only its own), and
//     INFO, granted for its replication section only. None of FLUSHALL,
//     FLUSHDB, KEYS, CONFIG, DEBUG, SHUTDOWN, MONITOR, CLIENT KILL or ACL
//     is granted;
//   - the keys of the namespaces only: "~{<ns>}:*" and, for the keys of
//     its partitions, "~{<ns>:p[0-9]*}:*" per namespace;
//   - their pub/sub channels only: "&{<ns>}:*" and "&{<ns>:p[0-9]*}:*".
//
// docs/security.md lists why each command is needed and what go-redis
// options need more (SELECT for a database other than 0, CLIENT SETINFO
// on Redis 7.2 and later). The key and channel patterns come from the
// package that names the keys, so they follow the key layout. A test
// runs everything above as a user with exactly these rules, on a TLS
// server and a TLS cluster, and fails on any entry of ACL LOG.
func ACLRules(namespaces ...string) []string {
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	rules := []string{"resetkeys", "resetchannels", "-@all"}
	rules = append(rules, aclCommands...)
	for _, ns := range namespaces {
		for _, p := range keyspace.ACLKeyPatterns(ns) {
			rules = append(rules, "~"+p)
		}
	}
	for _, ns := range namespaces {
		for _, p := range keyspace.ACLChannelPatterns(ns) {
			rules = append(rules, "&"+p)
		}
	}
	return rules
}
