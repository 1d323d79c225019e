package gen

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// keyCase is how TestEveryKeyIsParsedDocumentedAndEmitted exercises one
// row of the key table.
type keyCase struct {
	args string // arguments of a //chronos:schedule on H; a group "nightly" exists
	want string // code the generated file must contain (comments stripped, gofmt'd)
}

// keyCases has one case per row of the key table.
var keyCases = map[string]keyCase{
	"id":            {`id=custom-id every=1m`, `chronos.WithScheduleID("custom-id")`},
	"group":         {`group=nightly`, `chronos.AddJob(g, "p.H", HArgs{})`},
	"cron":          {`cron="0 0 2 * * ?"`, `chronos.RegisterCron(sched, "0 0 2 * * ?", HArgs{}`},
	"every":         {`every=90s`, `chronos.RegisterInterval(sched, 90*time.Second, HArgs{}`},
	"start-delay":   {`every=1m start-delay=10s`, `StartDelay: 10 * time.Second`},
	"start":         {`every=1m start=2026-01-02T03:04:05+09:00`, `Start: time.Date(2026, time.January, 1, 18, 4, 5, 0, time.UTC)`},
	"end":           {`every=1m end=2099-12-31T00:00:00Z`, `End: time.Date(2099, time.December, 31, 0, 0, 0, 0, time.UTC)`},
	"repeat":        {`every=1m repeat=9`, `Repeat: 9}`},
	"forever":       {`every=1m start-delay=1s forever=true`, `Repeat: -1}`},
	"tz":            {`cron="@daily" tz=Asia/Tokyo`, `chronos.WithTimeZone("Asia/Tokyo")`},
	"dst":           {`cron="@daily" dst=shiftGap`, `chronos.WithDST(cron.DSTShiftGap)`},
	"misfire":       {`cron="@daily" misfire=doNothing`, `chronos.WithMisfire("doNothing")`},
	"isolated":      {`every=1m isolated=true`, `chronos.WithIsolated(true)`},
	"overlap":       {`every=1m overlap=bufferOne`, `chronos.WithOverlap(chronos.OverlapBufferOne)`},
	"late-after":    {`every=1m late-after=5m`, `chronos.WithLateAfter(5*time.Minute)`},
	"failing-after": {`every=1m failing-after=2`, `chronos.WithFailingAfter(2)`},
	"queue":         {`every=1m queue=critical`, `chronos.WithQueue("critical")`},
	"max-retry":     {`every=1m max-retry=3`, `chronos.WithMaxRetry(3)`},
	"timeout":       {`every=1m timeout=30s`, `chronos.WithTimeout(30*time.Second)`},
	"process-in":    {`every=1m process-in=5m`, `chronos.WithProcessIn(5*time.Minute)`},
}

// TestEveryKeyIsParsedDocumentedAndEmitted walks the key table: every row
// must be accepted in a directive and land in the model, appear in the
// documentation, and change the generated code. A row without a case here
// fails, so a new key cannot skip any of the three.
func TestEveryKeyIsParsedDocumentedAndEmitted(t *testing.T) {
	docs, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "directives.md"))
	if err != nil {
		t.Fatal(err)
	}
	help := HelpDirectives()
	for i := range keys {
		k := &keys[i]
		t.Run(k.name, func(t *testing.T) {
			c, ok := keyCases[k.name]
			if !ok {
				t.Fatalf("no case in keyCases for key %q: add a directive that uses it and the code it must generate", k.name)
			}
			if !slices.ContainsFunc(strings.Fields(c.args), func(a string) bool { return strings.HasPrefix(a, k.name+"=") }) {
				t.Fatalf("case %q does not use key %s", c.args, k.name)
			}

			// Parsed: accepted without diagnostics, and in the model.
			src := "package p\n\nimport \"context\"\n\n//chronos:group id=nightly every=1h\ntype G struct{}\n\n//chronos:schedule " + c.args + "\nfunc H(ctx context.Context) error { return nil }\n"
			m, diags := checkSource(t, src)
			if len(diags) > 0 || m == nil {
				t.Fatalf("//chronos:schedule %s: %v", c.args, diags)
			}
			if k.isOption() && !slices.ContainsFunc(modelOptions(m), func(o Option) bool { return o.Key == k.name }) {
				t.Errorf("the model has no option %s: %+v", k.name, m)
			}

			// Documented: the key table (docs/directives.md and -help-directives).
			row := "| `" + k.name + "` |"
			if !strings.Contains(KeyTable(), row) || !bytes.Contains(docs, []byte(row)) {
				t.Errorf("docs/directives.md has no row %q", row)
			}
			if !strings.Contains(help, "\n  "+k.name+" ") {
				t.Errorf("-help-directives does not list %s", k.name)
			}

			// Emitted: in the code, not just in the manifest comment.
			out, err := Emit(m)
			if err != nil {
				t.Fatal(err)
			}
			if code := stripComments(t, out); !strings.Contains(code, c.want) {
				t.Errorf("generated code lacks %s:\n%s", c.want, code)
			}
		})
	}
	for name := range keyCases {
		if lookupKey(name) == nil {
			t.Errorf("keyCases has a case for %q, which is not in the key table", name)
		}
	}
}

// TestEmitRejectsAnOptionNoKeyEmits holds Emit to an error, not a panic,
// for a hand-written model with an option the table cannot emit.
func TestEmitRejectsAnOptionNoKeyEmits(t *testing.T) {
	for _, key := range []string{"no-such-key", "cron"} {
		m := &Package{
			Path: "example.com/p", Name: "p",
			Handlers:  []Handler{{Kind: "p.H", Receiver: -1, Name: "H", Args: TypeExpr{Name: "HArgs"}, ArgsGen: true}},
			Schedules: []Schedule{{ID: "p.H", Trigger: Trigger{Cron: "@daily"}, Options: []Option{{Key: key}}}},
		}
		if _, err := Emit(m); err == nil || !strings.Contains(err.Error(), `option "`+key+`"`) {
			t.Errorf("option %s: Emit error %v", key, err)
		}
	}
}

func modelOptions(m *Package) []Option {
	var all []Option
	for _, s := range m.Schedules {
		all = append(all, s.Options...)
	}
	for _, g := range m.Groups {
		for _, j := range g.Jobs {
			all = append(all, j.Options...)
		}
	}
	return all
}

// checkSource type-checks a one-file package p (which may import context)
// and runs Check on it, without go/packages. Warnings are dropped.
func checkSource(t *testing.T, src string) (*Package, Diagnostics) {
	t.Helper()
	fset := token.NewFileSet()
	cf, err := parser.ParseFile(fset, "context.go", fakeContext, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctxPkg, err := new(types.Config).Check("context", fset, []*ast.File{cf}, nil)
	if err != nil {
		t.Fatal(err)
	}
	file, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{Importer: fuzzImporter{ctxPkg}}).Check("example.com/p", fset, []*ast.File{file}, info)
	if err != nil {
		t.Fatalf("fixture does not type-check: %v", err)
	}
	m, diags := Check(fset, []*ast.File{file}, pkg, info, nil)
	var errs Diagnostics
	for _, d := range diags {
		if d.Severity == Error {
			errs = append(errs, d)
		}
	}
	return m, errs
}

// stripComments reprints Go source without its comments.
func stripComments(t *testing.T, src []byte) string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "out.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
