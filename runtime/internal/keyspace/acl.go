package keyspace

import "strings"

// ACLKeyPatterns returns the glob patterns, in Redis's pattern syntax, that
// match every key of namespace ns ("" is DefaultNamespace) and no key of
// another valid namespace (ValidateNamespace): "{<ns>}:*" for the control
// keys and those of layout 1, and "{<ns>:p[0-9]*}:*" for the keys of its
// partitions, with the glob characters of ns escaped. A Redis ACL grants
// them as "~" + pattern (chronos.ACLRules).
//
// The second pattern would also match the keys of a namespace named
// "<ns>:p<digit>…", which is why ValidateNamespace refuses such names.
func ACLKeyPatterns(ns string) []string {
	e := globEscape(Namespace(ns))
	return []string{"{" + e + "}:*", "{" + e + ":p[0-9]*}:*"}
}

// ACLChannelPatterns returns the glob patterns that match every pub/sub
// channel of namespace ns and no channel of another namespace, for "&" +
// pattern in a Redis ACL. Channels are named like keys, under the prefix
// of the namespace or of a partition (the queue's wake channel, the
// leaders' resign channels), so the patterns are those of the keys.
func ACLChannelPatterns(ns string) []string { return ACLKeyPatterns(ns) }

// globEscape escapes the characters Redis's glob matching (stringmatchlen,
// used for ACL key and channel patterns) treats specially outside a
// bracket expression, so that a namespace named "a*" matches only itself.
func globEscape(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
