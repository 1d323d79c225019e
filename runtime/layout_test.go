package chronos

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The storage packages own the Redis layout: each builds its key names in
// one file (keysFiles), from keyspace.Prefix, and holds its Lua scripts.
// Package chronos, tests included, spells neither: it asks the storage
// packages. This test fails when a key-name literal or Lua appears
// elsewhere, so that a layout change (partitioning, say) is one file per
// package.
var keysFiles = []string{
	"internal/rdb/keys.go",
	"internal/schedstore/keys.go",
	"internal/leader/keys.go",
}

// hashTagged matches a literal key name: a hash tag followed by a colon.
var hashTagged = regexp.MustCompile(`\{[A-Za-z0-9_.-]*\}:`)

// luaWords are what every script has and no other string of this project.
var luaWords = []string{"redis.call(", "redis.pcall(", "KEYS[", "ARGV["}

func TestKeyNamesAndLuaLiveInTheStoragePackages(t *testing.T) {
	// The segments the keys files spell ("history:", "dead:index", …):
	// those with a colon or a dash are distinctive enough to find anywhere.
	var segments []string
	for _, f := range keysFiles {
		for _, lit := range stringLiterals(t, f) {
			if strings.ContainsAny(lit.value, ":-") {
				segments = append(segments, lit.value)
			}
		}
	}
	if len(segments) < 10 {
		t.Fatalf("found only %d key segments in %v: has the layout moved?", len(segments), keysFiles)
	}
	check := func(path string, lua bool) {
		test := strings.HasSuffix(path, "_test.go")
		for _, lit := range stringLiterals(t, path) {
			v := lit.value
			switch {
			case hashTagged.MatchString(v):
				t.Errorf("%s: key name %q: build it with the storage package's keys", lit.pos, v)
			case isSegment(v, segments):
				t.Errorf("%s: key segment %q belongs in %s", lit.pos, v, strings.Join(keysFiles, ", "))
			case lua && containsAny(v, luaWords):
				t.Errorf("%s: Lua in package chronos: move the script to the storage package that owns its keys", lit.pos)
			case !test && v == "chronos":
				t.Errorf("%s: literal namespace %q: use keyspace.DefaultNamespace", lit.pos, v)
			}
		}
	}
	chronosFiles, _ := filepath.Glob("*.go")
	for _, f := range chronosFiles {
		if f != "layout_test.go" {
			check(f, true)
		}
	}
	// Within the storage packages, only their keys.go spells a segment.
	for _, dir := range []string{"internal/rdb", "internal/schedstore", "internal/leader"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if filepath.Base(f) != "keys.go" && !strings.HasSuffix(f, "_test.go") {
				check(f, false)
			}
		}
	}
}

// isSegment reports whether v is, or starts with, one of the key segments.
// Messages ("history: %d records") have spaces; key names do not.
func isSegment(v string, segments []string) bool {
	if strings.ContainsAny(v, " \t\n") {
		return false
	}
	for _, s := range segments {
		if v == s || (strings.HasSuffix(s, ":") && strings.HasPrefix(v, s)) {
			return true
		}
	}
	return false
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

type literal struct {
	pos   token.Position
	value string
}

// stringLiterals returns the string literals of a Go file, comments and
// import paths aside.
func stringLiterals(t *testing.T, path string) []literal {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []literal
	ast.Inspect(f, func(n ast.Node) bool {
		if _, ok := n.(*ast.ImportSpec); ok {
			return false
		}
		if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
			if v, err := strconv.Unquote(b.Value); err == nil {
				out = append(out, literal{fset.Position(b.Pos()), v})
			}
		}
		return true
	})
	return out
}
