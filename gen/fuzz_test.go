package gen

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
)

// fakeContext stands in for package context: Check finds context.Context
// by path and identity, so a one-line package is enough and keeps the fuzz
// target free of go/packages.
const fakeContext = "package context\n\ntype Context interface{ Done() <-chan struct{} }\n"

type fuzzImporter struct{ ctx *types.Package }

func (i fuzzImporter) Import(path string) (*types.Package, error) {
	if path == "context" {
		return i.ctx, nil
	}
	return importer.Default().Import(path)
}

// FuzzCheckDirective feeds arbitrary argument text to a //chronos:schedule
// line and requires that Check never panics, that every diagnostic lies on
// a line of the file, and that whatever passes generates source that
// parses.
func FuzzCheckDirective(f *testing.F) {
	for _, s := range []string{
		`cron="0 0 2 * * ?" tz="Asia/Seoul" misfire=doNothing isolated=false`,
		`every=30s queue=critical max-retry=3`,
		`every=30s start-delay=10s repeat=9 misfire=rescheduleNextWithRemainingCount`,
		`cron='0 0 * * *' dst=shiftGap overlap=bufferOne timeout=1m process-in=1s`,
		`every=1h start=2026-01-01T00:00:00Z end=2027-01-01T00:00:00+09:00 forever=true`,
		`group=nightly id=x`,
		`cron="0\t0 2 * 13 ?"`,
		`every=500ms`,
		`Every=1m tz=UTC`,
		`cron=0 0 2 * * ? queue=q`,
		`every=1m max-retry=99999999999999999999`,
	} {
		f.Add(s)
	}
	fset0 := token.NewFileSet()
	cf, err := parser.ParseFile(fset0, "context.go", fakeContext, 0)
	if err != nil {
		f.Fatal(err)
	}
	ctxPkg, err := new(types.Config).Check("context", fset0, []*ast.File{cf}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args string) {
		args = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, args)
		src := fmt.Sprintf("package p\n\nimport \"context\"\n\n//chronos:group id=nightly every=1h\ntype G struct{}\n\n//chronos:schedule %s\nfunc H(ctx context.Context) error { return nil }\n", args)
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
		if err != nil {
			return // e.g. "*/" closes nothing, but the input broke the file
		}
		info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: fuzzImporter{ctxPkg}}
		pkg, err := conf.Check("example.com/p", fset, []*ast.File{file}, info)
		if err != nil {
			t.Fatalf("fixture does not type-check: %v", err)
		}
		m, diags := Check(fset, []*ast.File{file}, pkg, info, nil)
		lines := strings.Count(src, "\n")
		for _, d := range diags {
			if d.Pos.Line < 1 || d.Pos.Line > lines || d.Pos.Column < 1 {
				t.Fatalf("diagnostic outside the file: %s", d)
			}
		}
		if diags.HasErrors() || m == nil {
			return
		}
		out, err := Emit(m)
		if err != nil {
			t.Fatalf("Emit: %v", err)
		}
		if _, err := format.Source(out); err != nil {
			t.Fatalf("generated source does not parse: %v\n%s", err, out)
		}
	})
}
