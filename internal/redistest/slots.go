package redistest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/chronos-go/chronos/internal/hashslot"
)

// Slots is the number of hash slots of a Redis Cluster.
const Slots = hashslot.Count

// KeySlot is the hash slot of key, as CLUSTER KEYSLOT computes it.
func KeySlot(key string) int { return hashslot.Of(key) }

// SlotRange is the slots Start through End, both included.
type SlotRange struct{ Start, End int }

// Contains reports whether slot is in the range.
func (r SlotRange) Contains(slot int) bool { return r.Start <= slot && slot <= r.End }

func (r SlotRange) String() string {
	if r.Start == r.End {
		return strconv.Itoa(r.Start)
	}
	return fmt.Sprintf("%d-%d", r.Start, r.End)
}

// nodeLine is one line of CLUSTER NODES:
//
//	<id> <ip:port@cport[,hostname]> <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot>...
type nodeLine struct {
	id     string
	addr   string // ip:port, without the bus port
	flags  []string
	master string // the master's ID for a replica, else ""
	link   string // "connected" or "disconnected"
	slots  []SlotRange
}

func (l nodeLine) has(flag string) bool { return slices.Contains(l.flags, flag) }

// failed reports whether the line's node is flagged as failing, for sure
// (fail) or in the writer's opinion only (fail?).
func (l nodeLine) failed() bool { return l.has("fail") || l.has("fail?") }

// parseClusterNodes reads the text of CLUSTER NODES. Slots being imported
// or migrated ("[slot->-id]") are left out: a test cluster never has any.
func parseClusterNodes(text string) ([]nodeLine, error) {
	var lines []nodeLine
	for raw := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		f := strings.Fields(raw)
		if len(f) < 8 {
			return nil, fmt.Errorf("CLUSTER NODES line %q: want at least 8 fields", raw)
		}
		addr, _, _ := strings.Cut(f[1], "@")
		l := nodeLine{id: f[0], addr: addr, flags: strings.Split(f[2], ","), link: f[7]}
		if f[3] != "-" {
			l.master = f[3]
		}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") {
				continue
			}
			lo, hi, isRange := strings.Cut(s, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || a > b || b >= Slots {
				return nil, fmt.Errorf("CLUSTER NODES line %q: bad slots %q", raw, s)
			}
			l.slots = append(l.slots, SlotRange{a, b})
		}
		lines = append(lines, l)
	}
	return lines, nil
}

// myself is the line the node wrote about itself.
func myself(lines []nodeLine) (nodeLine, bool) {
	for _, l := range lines {
		if l.has("myself") {
			return l, true
		}
	}
	return nodeLine{}, false
}

// slotOwners maps every slot to the ID of the master the lines say serves
// it, or "" when none does.
func slotOwners(lines []nodeLine) []string {
	owners := make([]string, Slots)
	for _, l := range lines {
		if !l.has("master") {
			continue
		}
		for _, r := range l.slots {
			for s := r.Start; s <= r.End; s++ {
				owners[s] = l.id
			}
		}
	}
	return owners
}
