package chronos

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The storage packages own the Redis layout: each builds its key names in
// one file (keysFiles), from keyspace.Prefix, and holds its Lua scripts.
// Package chronos, tests included, spells neither: it asks the storage
// packages. This test fails when a key name, a key segment or Lua appears
// elsewhere, so that a layout change (partitioning, say) is one file per
// package.
var keysFiles = []string{
	"internal/rdb/keys.go",
	"internal/schedstore/keys.go",
	"internal/leader/keys.go",
}

// storageDirs are the packages whose keys files those are, and migrate,
// which moves their keys and has no keys file: within them, only keys.go
// spells a segment.
var storageDirs = []string{"internal/rdb", "internal/schedstore", "internal/leader", "internal/migrate"}

// keyspaceExceptions are the functions of package keyspace, which builds
// the prefixes the others start from, that may spell a key name, and why.
var keyspaceExceptions = map[string]string{
	"Meta":            "keyspace's own key, the namespace's layout record",
	"ControlMarkers":  "copies of the layout-1 names of schedstore, leader and rdb, which keyspace cannot import; schedstore's TestControlMarkersAreTheStoragePackagesLayout1Names checks them",
	"epochMark":       "the one of ControlMarkers a process joining layout 1 writes; checked with them",
	"ControlChannels": "copies of the layout-1 channels of leader and rdb, likewise checked by TestControlMarkersAreTheStoragePackagesLayout1Names",
}

// hashTagged matches a literal key name: a hash tag followed by a colon.
var hashTagged = regexp.MustCompile(`\{[A-Za-z0-9_.-]*\}:`)

// luaWords are what every script has and no other string of this project.
var luaWords = []string{"redis.call(", "redis.pcall(", "KEYS[", "ARGV["}

// prefixFuncs are the functions and methods that return a key prefix
// (keyspace.Prefix, rdb.Keys.Prefix, keyspace.Layout.Control and
// .Partition): whatever is appended to their result is a key name.
var prefixFuncs = []string{"Prefix", "Control", "Partition", "Prefixes"}

// segments are the key segments the keys files spell ("history:",
// "dead:index", "schedules", …), as spelled (full) and without their
// colons (words, "history", "dead:index", "schedules").
type segments struct{ full, words []string }

func keySegments(t *testing.T) segments {
	t.Helper()
	var s segments
	for _, f := range keysFiles {
		for _, lit := range stringLiterals(t, f) {
			v := lit.value
			if v == "" || strings.ContainsAny(v, " \t\n{}%") {
				continue
			}
			s.full = append(s.full, v)
			if w := strings.Trim(v, ":"); w != "" && !slices.Contains(s.words, w) {
				s.words = append(s.words, w)
			}
		}
	}
	return s
}

// isSegment reports whether v is, or starts with, one of the key segments
// that hold a colon or a dash (distinctive enough to find anywhere).
// Messages ("history: %d records") have spaces; key names do not.
func (s segments) isSegment(v string) bool {
	if strings.ContainsAny(v, " \t\n") {
		return false
	}
	for _, seg := range s.full {
		if !strings.ContainsAny(seg, ":-") {
			continue
		}
		if v == seg || (strings.HasSuffix(seg, ":") && strings.HasPrefix(v, seg)) {
			return true
		}
	}
	return false
}

// isWord reports whether v, stripped of colons, is a segment: in a
// concatenation, "schedules", ":epoch" and "sched" name keys.
func (s segments) isWord(v string) bool {
	w := strings.Trim(v, ":")
	if w == "" || strings.ContainsAny(w, " \t\n") {
		return false
	}
	for _, seg := range s.words {
		if w == seg || strings.HasPrefix(w, seg+":") {
			return true
		}
	}
	return false
}

// scope says which rules a file is checked under.
type scope int

const (
	scopeChronos  scope = iota // package chronos: no key names, no Lua
	scopeStorage               // rdb, schedstore, leader outside keys.go: no key names, Lua allowed
	scopeKeyspace              // keyspace: builds prefixes; key names only in keyspaceExceptions
)

func TestKeyNamesAndLuaLiveInTheStoragePackages(t *testing.T) {
	segs := keySegments(t)
	if len(segs.full) < 20 {
		t.Fatalf("found only %d key segments in %v: has the layout moved?", len(segs.full), keysFiles)
	}
	check := func(path string, sc scope) {
		for _, p := range layoutProblems(t, path, nil, sc, segs) {
			t.Error(p)
		}
	}
	chronosFiles, _ := filepath.Glob("*.go")
	for _, f := range chronosFiles {
		if f != "layout_test.go" {
			check(f, scopeChronos)
		}
	}
	for _, dir := range storageDirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if filepath.Base(f) != "keys.go" && !strings.HasSuffix(f, "_test.go") {
				check(f, scopeStorage)
			}
		}
	}
	files, _ := filepath.Glob("internal/keyspace/*.go")
	if len(files) == 0 {
		t.Fatal("no files in internal/keyspace: has it moved?")
	}
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			check(f, scopeKeyspace)
		}
	}
}

// The guard finds what an earlier version of it missed: segments without a
// colon or dash appended to a prefix, a hash tag built from pieces, a name
// built a piece at a time, and a prefix appended to in keyspace.
func TestTheLayoutGuardFindsKeyNamesBuiltByHand(t *testing.T) {
	segs := keySegments(t)
	for _, tc := range []struct {
		name string
		sc   scope
		src  string
		want int // problems
	}{
		{"segment after a prefix variable", scopeChronos, `
			func f() string { p := rdb.NewKeys("").Prefix(); return p + "schedules" }`, 1},
		{"hash tag from pieces", scopeChronos, `
			func f(ns string) string { return "{" + ns + "}:" + "leader" }`, 1},
		{"a name a piece at a time", scopeChronos, `
			func f(p, id string) string { return p + "sched" + ":" + id }`, 1},
		{"Sprintf", scopeChronos, `
			func f(ns string) string { return fmt.Sprintf("{%s}:schedules:version", ns) }`, 1},
		{"a field named prefix", scopeStorage, `
			func (k keys) f() string { return k.prefix + "changed" }`, 1},
		{"keyspace outside its exceptions", scopeKeyspace, `
			func Other(ns string) string { return Prefix(ns) + "instances" }`, 1},
		{"keyspace's exceptions", scopeKeyspace, `
			func Meta(ns string) string { return Prefix(ns) + "meta" }
			func ControlMarkers(ns string) []string { p := Prefix(ns); return []string{p + "schedules"} }`, 0},
		{"messages and words are fine", scopeChronos, `
			func f(n int) string { return "schedules: " + strconv.Itoa(n) + " paused" }
			var x = "dead"`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := layoutProblems(t, "probe.go", []byte("package probe\n"+tc.src), tc.sc, segs)
			if len(got) != tc.want {
				t.Errorf("%d problems, want %d:\n%s", len(got), tc.want, strings.Join(got, "\n"))
			}
		})
	}
}

// layoutProblems checks one Go file (src, or the file at path when src is
// nil) under the rules of sc.
func layoutProblems(t *testing.T, path string, src []byte, sc scope, segs segments) []string {
	t.Helper()
	var source any // nil: read path
	if src != nil {
		source = src
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, source, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	test := strings.HasSuffix(path, "_test.go")
	prefixes := prefixIdents(f)
	var out []string
	report := func(n ast.Node, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
	}
	for _, decl := range f.Decls {
		fn := ""
		if d, ok := decl.(*ast.FuncDecl); ok {
			fn = d.Name.Name
		}
		if sc == scopeKeyspace && keyspaceExceptions[fn] != "" {
			continue
		}
		concatenated := map[*ast.BasicLit]bool{} // reported with their concatenation
		inner := map[*ast.BinaryExpr]bool{}      // checked with the chain they are part of
		ast.Inspect(decl, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ImportSpec:
				return false
			case *ast.BinaryExpr:
				if n.Op != token.ADD || inner[n] {
					return true
				}
				parts := flattenAdd(n, inner)
				var lits []*ast.BasicLit
				prefixed, tagged, word := false, false, ""
				for k, p := range parts {
					if isPrefixExpr(p, prefixes) {
						prefixed = true
					}
					if b, ok := p.(*ast.BasicLit); ok && b.Kind == token.STRING {
						lits = append(lits, b)
						v, _ := strconv.Unquote(b.Value)
						switch {
						case v == "{" || strings.HasPrefix(v, "}:"):
							tagged = true
						case word == "" && k > 0 && segs.isWord(v):
							// Appended to something: "paused" + detail is a
							// message, p + "schedules" a key name.
							word = v
						}
					}
				}
				switch {
				case sc != scopeKeyspace && tagged:
					report(n, "hash tag built by hand: build key names with the storage package's keys")
				case prefixed:
					report(n, "key name built from a prefix: build it in %s", strings.Join(keysFiles, ", "))
				case word != "":
					report(n, "key segment %q in a concatenation: build the name in %s", word, strings.Join(keysFiles, ", "))
				default:
					return true
				}
				for _, b := range lits {
					concatenated[b] = true
				}
			case *ast.BasicLit:
				if n.Kind != token.STRING || concatenated[n] {
					return true
				}
				v, err := strconv.Unquote(n.Value)
				if err != nil {
					return true
				}
				switch {
				case sc != scopeKeyspace && (hashTagged.MatchString(v) || strings.Contains(v, "}:")):
					report(n, "key name %q: build it with the storage package's keys", v)
				case segs.isSegment(v):
					report(n, "key segment %q belongs in %s", v, strings.Join(keysFiles, ", "))
				case sc == scopeChronos && containsAny(v, luaWords):
					report(n, "Lua in package chronos: move the script to the storage package that owns its keys")
				case sc == scopeChronos && !test && v == "chronos":
					report(n, "literal namespace %q: use keyspace.DefaultNamespace", v)
				}
			}
			return true
		})
	}
	return out
}

// flattenAdd returns the operands of the chain of + that e is the root of,
// in order, and marks the chain's other + nodes in inner.
func flattenAdd(e *ast.BinaryExpr, inner map[*ast.BinaryExpr]bool) []ast.Expr {
	var out []ast.Expr
	var walk func(x ast.Expr)
	walk = func(x ast.Expr) {
		if p, ok := x.(*ast.ParenExpr); ok {
			x = p.X
		}
		if b, ok := x.(*ast.BinaryExpr); ok && b.Op == token.ADD {
			if b != e {
				inner[b] = true
			}
			walk(b.X)
			walk(b.Y)
			return
		}
		out = append(out, x)
	}
	walk(e)
	return out
}

// isPrefixExpr reports whether e is a key prefix: a call of one of
// prefixFuncs, a field or variable named prefix, or a variable assigned
// one of those (prefixes).
func isPrefixExpr(e ast.Expr, prefixes map[string]bool) bool {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return isPrefixExpr(e.X, prefixes)
	case *ast.CallExpr:
		return slices.Contains(prefixFuncs, funcName(e.Fun))
	case *ast.IndexExpr: // Prefixes()[i]
		return isPrefixExpr(e.X, prefixes)
	case *ast.SelectorExpr:
		return strings.EqualFold(e.Sel.Name, "prefix")
	case *ast.Ident:
		return strings.EqualFold(e.Name, "prefix") || prefixes[e.Name]
	}
	return false
}

func funcName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// prefixIdents returns the names of the variables of f assigned a key
// prefix (p := keyspace.Prefix(ns)).
func prefixIdents(f *ast.File) map[string]bool {
	names := map[string]bool{}
	add := func(lhs []ast.Expr, rhs []ast.Expr) {
		if len(lhs) != len(rhs) {
			return
		}
		for i, l := range lhs {
			if id, ok := l.(*ast.Ident); ok && isPrefixExpr(rhs[i], names) {
				names[id.Name] = true
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			add(n.Lhs, n.Rhs)
		case *ast.ValueSpec:
			lhs := make([]ast.Expr, len(n.Names))
			for i, id := range n.Names {
				lhs[i] = id
			}
			add(lhs, n.Values)
		}
		return true
	})
	return names
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
