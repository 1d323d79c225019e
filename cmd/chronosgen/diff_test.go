package main

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestUnifiedDiffShowsChangedLinesWithContext(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n"
	new := "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\nl\nm\nn\nadded\n"
	want := `--- x.go
+++ x.go (generated)
@@ -2,7 +2,7 @@
 b
 c
 d
-e
+E
 f
 g
 h
@@ -12,3 +12,4 @@
 l
 m
 n
+added
`
	if got := unifiedDiff("x.go", old, new); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := unifiedDiff("x.go", old, old); got != "" {
		t.Fatalf("no change, got:\n%s", got)
	}
}

// Applying the edits to a must give b, and random inputs of a small
// alphabet exercise every kind of step.
func TestDiffLinesEditsTurnAIntoB(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lines := func() []string {
		n := r.IntN(12)
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a' + r.IntN(4)))
		}
		return out
	}
	for range 2000 {
		a, b := lines(), lines()
		var got []string
		at := 0
		for _, e := range diffLines(a, b) {
			got = append(got, a[at:e.a]...)
			if e.b != len(got) {
				t.Fatalf("a=%v b=%v: edit %+v says b position %d, output is at %d", a, b, e, e.b, len(got))
			}
			got = append(got, b[e.b:e.b+e.ins]...)
			at = e.a + e.del
		}
		got = append(got, a[at:]...)
		if strings.Join(got, ",") != strings.Join(b, ",") {
			t.Fatalf("a=%v b=%v: edits %v give %v", a, b, diffLines(a, b), got)
		}
	}
}
