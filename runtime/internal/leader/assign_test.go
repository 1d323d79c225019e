package leader

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// counts returns how many partitions each instance owns.
func counts(owner []string) map[string]int {
	c := map[string]int{}
	for _, o := range owner {
		c[o]++
	}
	return c
}

func checkBalanced(t *testing.T, what string, owner, live []string) {
	t.Helper()
	p, n := len(owner), len(live)
	c := counts(owner)
	if c[""] != 0 {
		t.Fatalf("%s: %d partitions without an owner: %v", what, c[""], owner)
	}
	for _, id := range live {
		if c[id] != p/n && c[id] != (p+n-1)/n {
			t.Fatalf("%s: %s owns %d of %d partitions among %d instances: %v", what, id, c[id], p, n, c)
		}
	}
	if len(c) > n {
		t.Fatalf("%s: owners %v outside the live %v", what, c, live)
	}
}

// Every instance owns ⌊P/N⌋ or ⌈P/N⌉ partitions, for 1 to 6 instances and
// 12 partitions, whether the assignment starts from nothing or from the one
// before; a join moves exactly the new instance's share, all of it to the
// new instance, and a leave moves exactly the partitions the instance that
// left owned. Random instance IDs, many rounds.
func TestAssignmentIsBalancedAndMovesTheMinimum(t *testing.T) {
	const p = 12
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var live []string
		holders := make([]string, p) // the assignment in force: each owner holds its lease
		for n := 1; n <= 6; n++ {
			x := fmt.Sprintf("host-%d-%x", round, rng.Uint32())
			live = append(live, x)
			fresh := Assign(make([]string, p), live)
			checkBalanced(t, fmt.Sprintf("round %d, %d instances from nothing", round, n), fresh, live)
			next := Assign(holders, live)
			checkBalanced(t, fmt.Sprintf("round %d, join of the %dth", round, n), next, live)
			moved := 0
			for q := range next {
				if next[q] != holders[q] {
					moved++
					if n > 1 && next[q] != x {
						t.Fatalf("round %d: join of %s moved partition %d from %s to %s", round, x, q, holders[q], next[q])
					}
				}
			}
			if n > 1 && moved != counts(next)[x] {
				t.Fatalf("round %d: join moved %d partitions, the new instance owns %d", round, moved, counts(next)[x])
			}
			holders = next
			if !slices.Equal(Assign(holders, live), holders) {
				t.Fatalf("round %d: the assignment is not stable once in force", round)
			}
		}
		// Leaves, in random order, down to one instance.
		for len(live) > 1 {
			k := rng.IntN(len(live))
			gone := live[k]
			live = slices.Delete(slices.Clone(live), k, k+1)
			next := Assign(holders, live)
			checkBalanced(t, fmt.Sprintf("round %d, leave of %s", round, gone), next, live)
			for q := range next {
				if next[q] != holders[q] && holders[q] != gone {
					t.Fatalf("round %d: leave of %s moved partition %d from %s to %s", round, gone, q, holders[q], next[q])
				}
			}
			holders = next
		}
	}
}

// The standby of a partition is the instance that owns it once its server
// is gone: when a crashed instance's heartbeat expires, the partitions its
// standbys took over do not move again.
func TestAStandbyIsTheOwnerOnceTheServerIsGone(t *testing.T) {
	const p = 12
	live := []string{"a", "b", "c", "d"}
	holders := Assign(make([]string, p), live)
	stand := Standbys(holders, live, holders)
	for q, s := range stand {
		if s == "" || s == holders[q] {
			t.Fatalf("partition %d held by %s has standby %q", q, holders[q], s)
		}
		rest := slices.DeleteFunc(slices.Clone(live), func(id string) bool { return id == holders[q] })
		if after := Assign(holders, rest); after[q] != s {
			t.Fatalf("partition %d: standby %s, owner once %s is gone %s", q, s, holders[q], after[q])
		}
	}
	if got := Standbys(holders, []string{"a"}, Assign(holders, []string{"a"})); slices.ContainsFunc(got, func(s string) bool { return s != "" }) {
		t.Fatalf("a lone instance has standbys: %v", got)
	}
}
