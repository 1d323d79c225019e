package gen

import (
	"bytes"
	"context"
	"go/format"
	"go/token"
	"testing"

	"github.com/dave/jennifer/jen"
)

// emitWhole is the reference for Emit: the same code in one jennifer file,
// formatted at once.
func emitWhole(m *Package) ([]byte, error) {
	e := newEmitter(m)
	f := e.file()
	f.HeaderComment("//go:build !chronosgen")
	f.HeaderComment(header)
	f.Comment("Compile only against a runtime that supports this generator's output.")
	f.Const().Id("_").Op("=").Qual(RuntimePath, "GeneratedCodeVersion1")
	for _, h := range m.Handlers {
		if h.ArgsGen {
			f.Add(e.argsDecl(h))
		}
	}
	var body []jen.Code
	for _, st := range e.entryBody() {
		body = append(body, st())
	}
	f.Add(e.entrySignature().Block(body...))
	var buf bytes.Buffer
	err := f.Render(&buf)
	return buf.Bytes(), err
}

// TestEmitEqualsWholeFileFormatting holds the piecewise, parallel
// formatting of Emit to the plain one: same bytes, and gofmt-clean.
func TestEmitEqualsWholeFileFormatting(t *testing.T) {
	root := repoRoot(t)
	models := loadModels(t, root, "./testdata/gen/basic", "./testdata/gen/group", "./testdata/gen/shapes", "./testdata/gen/tags", "./testdata/gen/typeerror")
	models = append(models, loadModels(t, bigModule(t, 64), "./big")...) // several statement batches
	for _, m := range models {
		got, err := Emit(m)
		if err != nil {
			t.Fatalf("Emit(%s): %v", m.Path, err)
		}
		want, err := emitWhole(m)
		if err != nil {
			t.Fatalf("emitWhole(%s): %v", m.Path, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: piecewise formatting differs from whole-file formatting:\n%s", m.Path, lineDiff(string(want), string(got)))
		}
		if gofmt, err := format.Source(got); err != nil || !bytes.Equal(gofmt, got) {
			t.Errorf("%s: output is not gofmt-clean (%v)", m.Path, err)
		}
	}
}

func loadModels(t *testing.T, dir string, patterns ...string) []*Package {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := load(context.Background(), Config{Dir: dir, Patterns: patterns}, fset)
	if err != nil || len(pkgs) != len(patterns) {
		t.Fatalf("load %s: %v", patterns, err)
	}
	var models []*Package
	for _, p := range pkgs {
		m, diags := Check(fset, p.Syntax, p.Types, p.TypesInfo, p.TypeErrors)
		if diags.HasErrors() || m == nil {
			t.Fatalf("%s: %v", p.PkgPath, diags)
		}
		models = append(models, m)
	}
	return models
}

// A package whose output needs only the runtime gets jennifer's lone-import
// form, as whole-file rendering would.
func TestEmitWithALoneImport(t *testing.T) {
	m := &Package{
		Path: "example.com/lone", Name: "lone",
		Handlers:  []Handler{{Kind: "lone.Tick", Receiver: -1, Name: "Tick", Args: TypeExpr{Name: "TickArgs"}, ArgsGen: true}},
		Schedules: []Schedule{{ID: "lone.Tick", Trigger: Trigger{Cron: "0 0 * * * ?"}, Source: Source{File: "lone.go", Line: 3}}},
	}
	got, err := Emit(m)
	if err != nil {
		t.Fatal(err)
	}
	want, err := emitWhole(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("piecewise formatting differs from whole-file formatting:\n%s", lineDiff(string(want), string(got)))
	}
	if !bytes.Contains(got, []byte("\nimport chronos \"github.com/chronos-go/chronos/runtime\"\n")) {
		t.Fatalf("no lone import in:\n%s", got)
	}
}
