package main

import (
	"fmt"
	"strings"
)

// unifiedDiff renders the change from old to new as a unified diff with
// three lines of context, as gofmt -d and git diff do, so that a CI log
// under -check -diff shows exactly what go generate would change.
func unifiedDiff(name string, old, new string) string {
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)
	if len(ops) == 0 {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s (generated)\n", name, name)
	const context = 3
	for i := 0; i < len(ops); {
		// A hunk: the changes from ops[i] on, merged while the unchanged
		// runs between them are short enough to keep as context.
		j := i
		for j+1 < len(ops) && ops[j+1].a-(ops[j].a+ops[j].del) <= 2*context {
			j++
		}
		aStart := max(ops[i].a-context, 0)
		aEnd := min(ops[j].a+ops[j].del+context, len(a))
		bStart := ops[i].b - (ops[i].a - aStart)
		bEnd := bStart + (aEnd - aStart)
		for k := i; k <= j; k++ {
			bEnd += ops[k].ins - ops[k].del
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aEnd-aStart), hunkRange(bStart, bEnd-bStart))
		at := aStart
		for k := i; k <= j; k++ {
			op := ops[k]
			for ; at < op.a; at++ {
				out.WriteString(" " + a[at] + "\n")
			}
			for _, l := range a[op.a : op.a+op.del] {
				out.WriteString("-" + l + "\n")
			}
			for _, l := range b[op.b : op.b+op.ins] {
				out.WriteString("+" + l + "\n")
			}
			at = op.a + op.del
		}
		for ; at < aEnd; at++ {
			out.WriteString(" " + a[at] + "\n")
		}
		i = j + 1
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// edit replaces a[a:a+del] by b[b:b+ins].
type edit struct{ a, del, b, ins int }

// maxEdits bounds the search: past it the changed middle is shown as one
// replacement, which is what a rewrite of most of the file is anyway.
const maxEdits = 1000

// diffLines returns the edits that turn a into b, in order: Myers' O(ND)
// shortest edit script over the lines between the common prefix and
// suffix. Generated files change in a few places, so D is small.
func diffLines(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	x, y := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(x) == 0 && len(y) == 0 {
		return nil
	}
	edits, ok := myers(x, y)
	if !ok {
		edits = []edit{{0, len(x), 0, len(y)}}
	}
	for i := range edits {
		edits[i].a += pre
		edits[i].b += pre
	}
	return edits
}

// myers computes the edits, or reports false when they exceed maxEdits.
func myers(a, b []string) ([]edit, bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxEdits)
	v := map[int]int{1: 0}
	var trace []map[int]int // trace[d]: the furthest x on each diagonal after d edits
	for d := 0; d <= limit; d++ {
		next := make(map[int]int, d+1)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[k-1] < v[k+1]) {
				x = v[k+1] // down: insert b[y]
			} else {
				x = v[k-1] + 1 // right: delete a[x-1]
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			next[k] = x
			if x >= n && y >= m {
				trace = append(trace, next)
				return backtrack(trace, n, m), true
			}
		}
		trace = append(trace, next)
		v = next
	}
	return nil, false
}

// backtrack walks the trace from (n, m) to (0, 0) and merges the single-line
// steps into edits.
func backtrack(trace []map[int]int, n, m int) []edit {
	var rev []edit // one line each, last first
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		k := x - y
		prev := trace[d-1]
		var prevK int
		if k == -d || (k != d && prev[k-1] < prev[k+1]) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := prev[prevK]
		prevY := prevX - prevK
		if prevK == k+1 { // down: b[prevY] inserted before a[prevX]
			rev = append(rev, edit{a: prevX, b: prevY, ins: 1})
		} else { // right: a[prevX] deleted
			rev = append(rev, edit{a: prevX, del: 1, b: prevY})
		}
		x, y = prevX, prevY
	}
	var edits []edit
	for i := len(rev) - 1; i >= 0; i-- {
		e := rev[i]
		if len(edits) > 0 {
			last := &edits[len(edits)-1]
			if last.a+last.del == e.a && last.b+last.ins == e.b {
				last.del += e.del
				last.ins += e.ins
				continue
			}
		}
		edits = append(edits, e)
	}
	return edits
}
