package keyspace_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

func TestACLPatternsAreThePrefixWithItsGlobCharactersEscaped(t *testing.T) {
	for ns, want := range map[string]string{
		"":          "{chronos}:*",
		"chronos":   "{chronos}:*",
		"orders-eu": "{orders-eu}:*",
		`a*b?[c]\d`: `{a\*b\?\[c\]\\d}:*`,
	} {
		if got := keyspace.ACLKeyPatterns(ns); len(got) != 1 || got[0] != want {
			t.Errorf("ACLKeyPatterns(%q) = %q; want [%q]", ns, got, want)
		}
		if got := keyspace.ACLChannelPatterns(ns); len(got) != 1 || got[0] != want {
			t.Errorf("ACLChannelPatterns(%q) = %q; want [%q]", ns, got, want)
		}
		if !strings.ContainsAny(ns, `*?[]\`) && want != keyspace.Prefix(ns)+"*" {
			t.Errorf("pattern %q is not Prefix %q and *", want, keyspace.Prefix(ns))
		}
	}
}

// Redis reads the patterns as ACLRules writes them: a user with the
// pattern of a namespace whose name holds glob characters reaches that
// namespace's keys and no other's.
func TestRedisMatchesTheACLPatternsOfANamespaceOnly(t *testing.T) {
	redistest.Parallel(t)
	s := redistest.Start(t)
	ns := "a*b?[c]"
	s.AddUser("u", "p", "+set", "~"+keyspace.ACLKeyPatterns(ns)[0])
	u := s.UserClient("u", "p")
	ctx := context.Background()
	if err := u.Set(ctx, keyspace.Prefix(ns)+"q:default", "x", 0).Err(); err != nil {
		t.Fatalf("SET in the namespace: %v", err)
	}
	for _, other := range []string{"{aXbYc}:q", "{a*b?[c]x}:q", "{a*b?c}:q", "{a*b?[c]}", "a*b?[c]:q"} {
		if err := u.Set(ctx, other, "x", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
			t.Errorf("SET %s: %v; want NOPERM", other, err)
		}
	}
}
