package redistest

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"
)

// ClusterClientRules are the ACL rules a go-redis ClusterClient needs
// beyond the commands it is used for: it learns the slot map with CLUSTER
// SLOTS and the commands' key positions with COMMAND, and fails every
// command with NOPERM without them. Add them to a cluster user's rules
// unless the test is about their denial.
var ClusterClientRules = []string{"+cluster|slots", "+command"}

// aclUser is a user added with AddUser, kept so a restarted server gets it
// back: ACL SETUSER changes only the running server.
type aclUser struct {
	name  string
	rules []string // password and rules, as given to ACL SETUSER
}

func newACLUser(name, password string, rules []string) aclUser {
	// reset first: the user has no command, key or channel, and no
	// password, except what the rules give.
	return aclUser{name: name, rules: append([]string{"reset", "on", ">" + password}, rules...)}
}

func (u aclUser) apply(ctx context.Context, c *redis.Client) error {
	if err := c.ACLSetUser(ctx, u.name, u.rules...).Err(); err != nil {
		return fmt.Errorf("ACL SETUSER %s: %w", u.name, err)
	}
	return nil
}

// AddUser creates (or replaces) the ACL user name with password and
// nothing else but rules, in ACL SETUSER syntax: for example
// "~chronos:*", "+@read", "+set", "-flushdb", "&events". The user starts
// from reset, so it may run no command and touch no key or channel that the
// rules do not grant. Restart gives the user back to the server. It fails
// the test when Redis rejects a rule. On a REDIS_URL server the user is
// deleted when the test ends.
//
// Connect as the user with NewClient(func(o *redis.Options) { o.Username =
// name; o.Password = password }) or UserClient.
func (s *Server) AddUser(name, password string, rules ...string) {
	s.t.Helper()
	if err := s.addUser(context.Background(), newACLUser(name, password, rules)); err != nil {
		s.t.Fatalf("redistest: %s: %v", s.Addr(), err)
	}
	if s.url != "" {
		s.t.Cleanup(func() {
			c := redis.NewClient(s.Options())
			defer c.Close()
			_ = c.ACLDelUser(context.Background(), name).Err()
		})
	}
}

// addUser records u for Restart and applies it if the server is running.
func (s *Server) addUser(ctx context.Context, u aclUser) error {
	s.mu.Lock()
	s.users = slices.DeleteFunc(s.users, func(o aclUser) bool { return o.name == u.name })
	s.users = append(s.users, u)
	s.mu.Unlock()
	if s.url == "" && s.PID() == 0 {
		return nil // applied by the next launch
	}
	c := redis.NewClient(s.Options())
	defer c.Close()
	return u.apply(ctx, c)
}

// UserClient returns a client that authenticates as the ACL user name,
// closed when the test ends. It does not send CLIENT SETINFO when it
// connects (DisableIdentity): on Redis 7.2 and later a user without
// +client|setinfo is denied that, go-redis ignores the error, and the
// denial would be the first entry of every ACL LOG.
func (s *Server) UserClient(name, password string) *redis.Client {
	return s.NewClient(func(o *redis.Options) {
		o.Username, o.Password, o.DisableIdentity = name, password, true
	})
}

// ACLLogEntry is one entry of a server's ACL LOG: a denied command, key or
// channel, or a failed authentication. Redis folds repeats of the same
// denial into one entry and counts them.
type ACLLogEntry struct {
	Node     string // the host:port of the server that logged it
	Reason   string // "command", "key", "channel" or "auth"
	Context  string // where it ran: "toplevel", "multi", "lua" or "module"
	Object   string // the denied command, key or channel ("AUTH" for auth)
	Command  string // the command the client sent, as CLIENT LIST names it (e.g. "get", "evalsha")
	Username string
	Count    int64
}

// aclLogLen asks for more entries than the server keeps (acllog-max-len,
// 128 by default): ACL LOG alone returns only the last 10.
const aclLogLen = 1 << 16

// ACLLog returns the server's ACL LOG entries, newest first.
func (s *Server) ACLLog(ctx context.Context) ([]ACLLogEntry, error) {
	c := redis.NewClient(s.Options())
	defer c.Close()
	return aclLog(ctx, c, s.Addr())
}

// ACLLogReset empties the server's ACL LOG.
func (s *Server) ACLLogReset(ctx context.Context) error {
	c := redis.NewClient(s.Options())
	defer c.Close()
	if err := c.ACLLogReset(ctx).Err(); err != nil {
		return fmt.Errorf("redistest: ACL LOG RESET on %s: %w", s.Addr(), err)
	}
	return nil
}

func aclLog(ctx context.Context, c *redis.Client, addr string) ([]ACLLogEntry, error) {
	raw, err := c.ACLLog(ctx, aclLogLen).Result()
	if err != nil {
		return nil, fmt.Errorf("redistest: ACL LOG on %s: %w", addr, err)
	}
	entries := make([]ACLLogEntry, len(raw))
	for i, e := range raw {
		entries[i] = ACLLogEntry{Node: addr, Reason: e.Reason, Context: e.Context, Object: e.Object, Username: e.Username, Count: e.Count}
		if e.ClientInfo != nil {
			entries[i].Command = e.ClientInfo.LastCmd
		}
	}
	return entries, nil
}

// AddUser creates (or replaces) the ACL user on every node, masters and
// replicas alike (ACL SETUSER is not replicated), as Server.AddUser does. A
// node that is down gets the user when it is restarted. A ClusterClient for
// the user also needs ClusterClientRules.
func (c *Cluster) AddUser(name, password string, rules ...string) {
	c.t.Helper()
	c.taint("AddUser")
	u := newACLUser(name, password, rules)
	for _, n := range c.nodes {
		if err := n.addUser(context.Background(), u); err != nil {
			c.t.Fatalf("redistest: %s: %v", n.Addr(), err)
		}
	}
}

// UserClient returns a cluster client that authenticates as the ACL user
// name on every node, closed when the test ends. The user needs
// ClusterClientRules. Like Server.UserClient it does not send CLIENT
// SETINFO.
func (c *Cluster) UserClient(name, password string) *redis.ClusterClient {
	return c.NewClient(func(o *redis.ClusterOptions) {
		o.Username, o.Password, o.DisableIdentity = name, password, true
	})
}

// ACLLog returns the ACL LOG entries of every running node, node by node
// in start order, each node's newest first. A denied command is logged by
// the node that received it: usually the master of its key's slot.
func (c *Cluster) ACLLog(ctx context.Context) ([]ACLLogEntry, error) {
	var all []ACLLogEntry
	for _, n := range c.running() {
		entries, err := aclLog(ctx, n.admin, n.Addr())
		if err != nil {
			return nil, err
		}
		all = append(all, entries...)
	}
	return all, nil
}

// ACLLogReset empties the ACL LOG of every running node.
func (c *Cluster) ACLLogReset(ctx context.Context) error {
	for _, n := range c.running() {
		if err := n.admin.ACLLogReset(ctx).Err(); err != nil {
			return fmt.Errorf("redistest: ACL LOG RESET on %s: %w", n.Addr(), err)
		}
	}
	return nil
}
