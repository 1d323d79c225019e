package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	beginTable = "<!-- BEGIN KEY TABLE (generated) -->\n"
	endTable   = "<!-- END KEY TABLE -->"
)

// TestDocsKeyTable keeps the key table in docs/directives.md equal to the
// table the parser uses; go test ./gen -update rewrites it.
func TestDocsKeyTable(t *testing.T) {
	path := filepath.Join(repoRoot(t), "docs", "directives.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, beginTable), strings.Index(doc, endTable)
	if i < 0 || j < i {
		t.Fatalf("%s: key table markers not found", path)
	}
	got := doc[i+len(beginTable) : j]
	if got == KeyTable() {
		return
	}
	if *update {
		doc = doc[:i+len(beginTable)] + KeyTable() + doc[j:]
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/directives.md key table is stale; run go test ./gen -update\nwant:\n%s", KeyTable())
}
