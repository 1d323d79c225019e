// Package errtext turns the message of an error that went through chronos's
// layers into the words an operator reads, for the CLI and the web console.
//
// chronos wraps errors as "<package>: <operation>: <cause>", layer on
// layer: "chronos: list schedules: schedstore: list: dial tcp
// 10.0.0.5:6379: connect: connection refused". The package prefixes and the
// bare operation names (the call chain) say where in chronos it happened,
// which an operator cannot act on; the cause, and the context an operation
// names (which schedule, which task), is what they need. Clean keeps those.
package errtext

import (
	"slices"
	"strings"
)

// packages are the prefixes chronos's packages put on their errors.
var packages = []string{"chronos", "schedstore", "rdb", "leader", "keyspace", "console", "firing", "migrate"}

// maxChainWords is the most words an operation name has ("list",
// "list schedules", "read the layout"); a longer text that follows a
// package prefix is a message of its own ("schedule is still declared by a
// live instance") and is kept.
const maxChainWords = 3

// Clean returns msg without chronos's call chain: every package prefix
// ("schedstore: "), the operation names that follow one when they carry
// no context ("list schedules: "), and operation names that repeat the
// context of an earlier one (`pause "x": pause "x": nope` is
// `pause "x": nope`). What follows the last operation, the cause, is kept
// whole, including the ": " of errors from outside chronos ("dial tcp
// 10.0.0.5:6379: connect: connection refused"). A message of none of
// chronos's packages is returned as it is.
func Clean(msg string) string {
	segs := strings.Split(msg, ": ")
	out := make([]string, 0, len(segs))
	var seen []string // the quoted context of the operations kept
	for i := 0; i < len(segs); i++ {
		if !slices.Contains(packages, segs[i]) {
			out = append(out, segs[i])
			continue
		}
		if i+2 >= len(segs) { // "<package>: <cause>": the cause stays
			continue
		}
		i++
		op := segs[i]
		if isChain(op) {
			continue
		}
		ctx := quoted(op)
		if len(ctx) > 0 && allIn(ctx, seen) {
			continue
		}
		seen = append(seen, ctx...)
		out = append(out, op)
	}
	return strings.Join(out, ": ")
}

// isChain reports whether op, the text after a package prefix, is a bare
// operation name: a few lower-case words, no quoted name, number or ID.
func isChain(op string) bool {
	if op == "" || len(strings.Fields(op)) > maxChainWords {
		return false
	}
	for _, r := range op {
		if (r < 'a' || r > 'z') && r != ' ' {
			return false
		}
	}
	return true
}

// quoted returns the double-quoted parts of s.
func quoted(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i+1:], '"')
		if j < 0 {
			return out
		}
		out = append(out, s[i:i+j+2])
		s = s[i+j+2:]
	}
}

func allIn(xs, set []string) bool {
	for _, x := range xs {
		if !slices.Contains(set, x) {
			return false
		}
	}
	return true
}
