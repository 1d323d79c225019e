package keyspace

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"

	"github.com/chronos-go/chronos/internal/hashslot"
)

// DefaultPartitions is the number of partitions of a namespace created
// without a configured count. Twelve splits exactly over 1, 2, 3, 4, 6 and
// 12 masters.
const DefaultPartitions = 12

// MaxPartitions bounds the partitions of a namespace: at least 16 slots
// per partition, so every partition's tag can be placed in its own range.
const MaxPartitions = 1024

// ErrBadPartitions is returned (wrapped) for a partition count outside
// [1, MaxPartitions].
var ErrBadPartitions = errors.New("keyspace: partitions must be between 1 and 1024")

// Layout is how the keys of one namespace are spread over hash tags: the
// control tag "{ns}", for what spans partitions, and one tag per
// partition (docs/scheduler.md, "Partitions"). The zero Layout is not
// valid; use Single or Partitioned.
type Layout struct {
	ns       string
	single   bool     // layout 1: one partition, tagged like the control keys
	prefixes []string // per partition: "{<tag>}:"
}

// Single returns layout 1 of namespace ns: one partition whose keys carry
// the control tag "{ns}", exactly as versions before partitions named them.
func Single(ns string) Layout {
	ns = Namespace(ns)
	return Layout{ns: ns, single: true, prefixes: []string{Prefix(ns)}}
}

// Partitioned returns the layout of namespace ns split into n partitions
// (layout 2).
func Partitioned(ns string, n int) (Layout, error) {
	if n < 1 || n > MaxPartitions {
		return Layout{}, fmt.Errorf("%w: %d", ErrBadPartitions, n)
	}
	ns = Namespace(ns)
	return Layout{ns: ns, prefixes: partitionPrefixes(ns, n)}, nil
}

// Namespace is the layout's namespace.
func (l Layout) Namespace() string { return l.ns }

// Partitions is the number of partitions (1 for layout 1).
func (l Layout) Partitions() int { return len(l.prefixes) }

// IsSingle reports whether l is layout 1, the single-tag layout.
func (l Layout) IsSingle() bool { return l.single }

// Version is the layout's number as stored in the namespace's meta key: 1
// for the single tag, 2 for partitions.
func (l Layout) Version() int {
	if l.single {
		return 1
	}
	return 2
}

// Control is the prefix of the namespace's control keys: "{ns}:".
func (l Layout) Control() string { return Prefix(l.ns) }

// Partition is the prefix of the keys of partition p, hash tag included:
// "{ns:p<p>.<salt>}:", or "{ns}:" in layout 1.
func (l Layout) Partition(p int) string { return l.prefixes[p] }

// Prefixes returns the prefix of every partition, in order.
func (l Layout) Prefixes() []string { return l.prefixes }

// ForSchedule is the partition of schedule id: FNV-1a 32 of the ID modulo
// the partition count. Part of the stored format: never change it.
func (l Layout) ForSchedule(id string) int { return l.of(id) }

// ForDedup is the partition of a task enqueued with dedup key key: that of
// the text before its last ':' (the whole key if it has none), so a
// trigger's key "<schedule>:<trigger-unix>" lands in its schedule's
// partition. Part of the stored format: never change it.
func (l Layout) ForDedup(key string) int {
	if i := strings.LastIndexByte(key, ':'); i >= 0 {
		key = key[:i]
	}
	return l.of(key)
}

func (l Layout) of(s string) int {
	if len(l.prefixes) == 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return int(h.Sum32() % uint32(len(l.prefixes)))
}

// String describes the layout for logs and errors.
func (l Layout) String() string {
	if l.single {
		return "namespace " + strconv.Quote(l.ns) + " (single tag, layout 1)"
	}
	return fmt.Sprintf("namespace %q (%d partitions)", l.ns, len(l.prefixes))
}

// PartitionTag is the hash tag of partition p of n in namespace ns, for a
// given salt: "<ns>:p<p>.<salt>".
func PartitionTag(ns string, p, salt int) string {
	return ns + ":p" + strconv.Itoa(p) + "." + strconv.Itoa(salt)
}

var prefixCache sync.Map // "<n>/<ns>" → []string

// partitionPrefixes places each partition's tag: partition p takes the
// smallest salt whose tag hashes into the middle quarter of the p-th of n
// equal slot ranges, so a cluster whose masters own equal contiguous slot
// ranges holds ⌈n/M⌉ or ⌊n/M⌋ partitions each, whatever the namespace is
// called. The result is a pure function of (ns, n), cached.
func partitionPrefixes(ns string, n int) []string {
	key := strconv.Itoa(n) + "/" + ns
	if v, ok := prefixCache.Load(key); ok {
		return v.([]string)
	}
	out := make([]string, n)
	for p := range n {
		lo, hi := p*hashslot.Count/n, (p+1)*hashslot.Count/n // [lo, hi)
		mid, slack := (lo+hi)/2, max((hi-lo)/8, 1)
		for salt := 0; ; salt++ {
			tag := PartitionTag(ns, p, salt)
			if s := hashslot.Of("{" + tag + "}"); s >= mid-slack && s < mid+slack {
				out[p] = "{" + tag + "}:"
				break
			}
		}
	}
	v, _ := prefixCache.LoadOrStore(key, out)
	return v.([]string)
}
