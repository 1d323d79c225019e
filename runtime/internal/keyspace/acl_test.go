package keyspace_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/chronos-go/chronos/internal/redistest"
	"github.com/chronos-go/chronos/runtime/internal/keyspace"
)

func TestACLPatternsAreThePrefixWithItsGlobCharactersEscaped(t *testing.T) {
	for ns, want := range map[string]string{
		"":          "{chronos}",
		"chronos":   "{chronos}",
		"orders-eu": "{orders-eu}",
		`a*b?[c]\d`: `{a\*b\?\[c\]\\d}`,
	} {
		control, parts := want+":*", want[:len(want)-1]+":p[0-9]*}:*"
		if got := keyspace.ACLKeyPatterns(ns); len(got) != 2 || got[0] != control || got[1] != parts {
			t.Errorf("ACLKeyPatterns(%q) = %q; want [%q %q]", ns, got, control, parts)
		}
		if got := keyspace.ACLChannelPatterns(ns); len(got) != 2 || got[0] != control || got[1] != parts {
			t.Errorf("ACLChannelPatterns(%q) = %q; want [%q %q]", ns, got, control, parts)
		}
		if !strings.ContainsAny(ns, `*?[]\`) && control != keyspace.Prefix(ns)+"*" {
			t.Errorf("pattern %q is not Prefix %q and *", control, keyspace.Prefix(ns))
		}
	}
}

func TestNamespacesThatLookLikePartitionsAreRefused(t *testing.T) {
	for _, ns := range []string{"", "chronos", "orders:eu", "a:p", "a:px", "p1", ":q1"} {
		if err := keyspace.ValidateNamespace(ns); err != nil {
			t.Errorf("ValidateNamespace(%q) = %v; want nil", ns, err)
		}
	}
	for _, ns := range []string{"orders:p1", "a:p0.5", ":p9", "x:p12:y"} {
		if err := keyspace.ValidateNamespace(ns); !errors.Is(err, keyspace.ErrBadNamespace) {
			t.Errorf("ValidateNamespace(%q) = %v; want ErrBadNamespace", ns, err)
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
	pats := keyspace.ACLKeyPatterns(ns)
	s.AddUser("u", "p", "+set", "~"+pats[0], "~"+pats[1])
	u := s.UserClient("u", "p")
	ctx := context.Background()
	l, err := keyspace.Partitioned(ns, 12)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range append([]string{keyspace.Prefix(ns)}, l.Prefixes()...) {
		if err := u.Set(ctx, k+"q:default", "x", 0).Err(); err != nil {
			t.Fatalf("SET %s in the namespace: %v", k, err)
		}
	}
	for _, other := range []string{"{aXbYc}:q", "{a*b?[c]x}:q", "{a*b?c}:q", "{a*b?[c]}", "a*b?[c]:q",
		"{a*b?[c]:px}:q", "{a*b?[c]:p}:q", "{a*b?[c]x:p1.2}:q", "{aXbYc:p1.2}:q"} {
		if err := u.Set(ctx, other, "x", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
			t.Errorf("SET %s: %v; want NOPERM", other, err)
		}
	}
}
