package leader

import (
	"cmp"
	"hash/fnv"
	"slices"
	"strconv"
)

// Assign computes which live instance owns each of a namespace's
// partitions: the partitions whose elections each instance contends for.
// Every instance computes it from the same inputs, the live instances (from
// the registry's heartbeats) and the current holder of each partition's
// lease (holders[p]; "" for a free lease), so they agree on it, and it
// needs no coordination.
//
// The result is balanced: each instance owns ⌊P/N⌋ or ⌈P/N⌉ of the P
// partitions, the ⌈P/N⌉ going to the instances that hold the most now
// (ties broken by a hash of their IDs). It is sticky: an instance keeps
// the partitions it holds up to its share (those it ranks highest when it
// holds more), so from a balanced assignment a join moves to the new
// instance exactly its share and nothing else, and a leave moves only the
// partitions the instance that left held. The rest, free partitions or
// partitions held by an instance that is not live, go to the instances
// under their share by rendezvous hashing: each to the instance that ranks
// it highest (Weight), highest weights first.
//
// An instance in holders that is not in live counts as no holder. With no
// live instance every partition's owner is "".
func Assign(holders []string, live []string) []string {
	n := len(holders)
	owner := make([]string, n)
	if len(live) == 0 || n == 0 {
		return owner
	}
	ids := slices.Clone(live)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	held := make(map[string][]int, len(ids))
	for _, id := range ids {
		held[id] = nil
	}
	for p, h := range holders {
		if _, ok := held[h]; ok {
			held[h] = append(held[h], p)
		}
	}
	// Shares: ⌈P/N⌉ for the r instances holding the most, ⌊P/N⌋ for the rest.
	lo, r := n/len(ids), n%len(ids)
	byHoldings := slices.Clone(ids)
	slices.SortFunc(byHoldings, func(a, b string) int {
		if c := cmp.Compare(len(held[b]), len(held[a])); c != 0 {
			return c
		}
		if c := cmp.Compare(rank(b), rank(a)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	share := make(map[string]int, len(ids))
	for k, id := range byHoldings {
		share[id] = lo
		if k < r {
			share[id]++
		}
	}
	// Keep what each holds, up to its share, those it ranks highest first.
	count := make(map[string]int, len(ids))
	for _, id := range ids {
		ps := held[id]
		slices.SortFunc(ps, func(a, b int) int { return cmp.Compare(Weight(id, b), Weight(id, a)) })
		for _, p := range ps[:min(len(ps), share[id])] {
			owner[p] = id
			count[id]++
		}
	}
	// The rest by rendezvous: highest weight first, among instances under
	// their share.
	type pair struct {
		w  uint64
		p  int
		id string
	}
	var pairs []pair
	for p := range owner {
		if owner[p] != "" {
			continue
		}
		for _, id := range ids {
			if count[id] < share[id] {
				pairs = append(pairs, pair{Weight(id, p), p, id})
			}
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if c := cmp.Compare(b.w, a.w); c != 0 {
			return c
		}
		if c := cmp.Compare(a.p, b.p); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	for _, x := range pairs {
		if owner[x.p] == "" && count[x.id] < share[x.id] {
			owner[x.p] = x.id
			count[x.id]++
		}
	}
	return owner
}

// Standbys returns, for each partition, the instance that takes it over if
// the instance now serving it goes: its holder if live, else its owner in
// owners (Assign's result). That is its owner in the assignment without
// that instance, so when the instance's heartbeat expires the partition
// does not move again. A partition whose server is the only live instance
// has no standby ("").
func Standbys(holders, live, owners []string) []string {
	out := make([]string, len(holders))
	isLive := make(map[string]bool, len(live))
	for _, id := range live {
		isLive[id] = true
	}
	without := map[string][]string{}
	for p := range holders {
		serving := owners[p]
		if h := holders[p]; isLive[h] {
			serving = h
		}
		if serving == "" {
			continue
		}
		a, ok := without[serving]
		if !ok {
			rest := make([]string, 0, len(live))
			for _, id := range live {
				if id != serving {
					rest = append(rest, id)
				}
			}
			a = Assign(holders, rest)
			without[serving] = a
		}
		out[p] = a[p]
	}
	return out
}

// Weight is the rendezvous weight of partition p for instance id: the
// instance that weighs a partition highest is first in line for it.
// FNV-1a 64 of "<id>/<p>", mixed by the SplitMix64 finalizer.
func Weight(id string, p int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	_, _ = h.Write([]byte{'/'})
	_, _ = h.Write(strconv.AppendInt(nil, int64(p), 10))
	return mix(h.Sum64())
}

// rank orders instances of equal holdings for the larger shares.
func rank(id string) uint64 { return Weight(id, -1) }

func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
