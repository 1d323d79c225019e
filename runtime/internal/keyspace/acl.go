package keyspace

import "strings"

// ACLKeyPatterns returns the glob patterns, in Redis's pattern syntax, that
// match every key of namespace ns ("" is DefaultNamespace) and no key of
// another namespace: "{<ns>}:*", with the glob characters of ns escaped. A
// Redis ACL grants them as "~" + pattern (chronos.ACLRules).
//
// They follow Prefix: every key of a namespace starts with it. When the
// keys of a namespace are partitioned, the partitioned keys
// "{<ns>:p<i>.<salt>}:..." need a second pattern here, "{<ns>:p*" (ns
// escaped). Note when adding it that it also matches the keys of a
// namespace named "<ns>:p<anything>", so such namespace names should be
// refused or the pattern made tighter.
func ACLKeyPatterns(ns string) []string {
	return []string{"{" + globEscape(Namespace(ns)) + "}:*"}
}

// ACLChannelPatterns returns the glob patterns that match every pub/sub
// channel of namespace ns and no channel of another namespace, for "&" +
// pattern in a Redis ACL. Channels are named like keys, under Prefix (the
// queue's wake channel "{<ns>}:wake", the leader's resign channel
// "{<ns>}:leader:resign"), so the patterns are those of the keys.
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
