package rdb

import "strings"

// This file derives the SCAN patterns that find a partition's queues and
// run kinds, for the read side (the Inspector's listings and the console;
// Store.QueueNames and RunKinds build the patterns of every partition the
// same way). It spells no key segment: every pattern is a name of keys.go
// with its variable part replaced by a wildcard, so a layout change there
// carries over.

// StreamPattern matches the stream key of every queue of the partition.
func (k Keys) StreamPattern() string { return globEscape(k.Stream("")) + "*" }

// DelayedPattern matches the delayed-set key of every queue of the partition.
func (k Keys) DelayedPattern() string { return globEscape(k.Delayed("")) + "*" }

// RunsPattern matches the run-record stream key of every kind of the partition.
func (k Keys) RunsPattern() string { return globEscape(k.Runs("")) + "*" }

// AllPattern matches every key under the partition's prefix: in layout 1,
// where it is the control prefix too, every key of the namespace but its
// partitions'.
func (k Keys) AllPattern() string { return globEscape(k.prefix) + "*" }

// StreamQueue returns the queue whose stream key is key.
func (k Keys) StreamQueue(key string) (string, bool) { return cutNonEmpty(key, k.Stream("")) }

// DelayedQueue returns the queue whose delayed-set key is key.
func (k Keys) DelayedQueue(key string) (string, bool) { return cutNonEmpty(key, k.Delayed("")) }

// RunsKind returns the kind whose run-record stream key is key.
func (k Keys) RunsKind(key string) (string, bool) { return cutNonEmpty(key, k.Runs("")) }

// OverlapActiveMarker, OverlapBufferMarker and OverlapWhereMarker return
// the overlap marker whose active set, buffered firing or records key is
// key.
func (k Keys) OverlapActiveMarker(key string) (string, bool) {
	return cutNonEmpty(key, k.OverlapActive(""))
}

// OverlapBufferMarker: see OverlapActiveMarker.
func (k Keys) OverlapBufferMarker(key string) (string, bool) {
	return cutNonEmpty(key, k.OverlapBuffer(""))
}

// OverlapWhereMarker: see OverlapActiveMarker.
func (k Keys) OverlapWhereMarker(key string) (string, bool) {
	return cutNonEmpty(key, k.OverlapWhere(""))
}

// MigratedQueue returns the queue whose migration record (Migrated) is key.
func (k Keys) MigratedQueue(key string) (string, bool) { return cutNonEmpty(key, k.Migrated("")) }

func cutNonEmpty(s, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(s, prefix)
	return rest, ok && rest != ""
}

// GlobEscape quotes the characters that Redis glob patterns (SCAN MATCH,
// ZSCAN MATCH) treat specially, so that s matches only itself.
func GlobEscape(s string) string { return globEscape(s) }

func globEscape(s string) string {
	if !strings.ContainsAny(s, `*?[]\^-`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\', '^', '-':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
