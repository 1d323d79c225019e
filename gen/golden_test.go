package gen

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

var update = flag.Bool("update", false, "rewrite golden/ and the key table in docs/directives.md")

// repoRoot is the module root, two levels up from this package.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goldenCases lists the input packages under testdata/gen.
func goldenCases(t testing.TB, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "testdata", "gen"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() {
			cases = append(cases, e.Name())
		}
	}
	return cases
}

// generateCases runs the pipeline over every case in one load, keeping
// each package's output and diagnostics apart.
func generateCases(t *testing.T, root string, cases []string) map[string]pkgResult {
	t.Helper()
	var patterns []string
	for _, c := range cases {
		patterns = append(patterns, "./testdata/gen/"+c)
	}
	pkgs, _, err := generatePackages(context.Background(), Config{Dir: root, Patterns: patterns})
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	out := make(map[string]pkgResult)
	for _, p := range pkgs {
		out[filepath.Base(p.pkgPath)] = p
	}
	return out
}

// want renders what a case produced as its golden file: the generated
// source when there are no errors, else the diagnostics with paths relative
// to the module root.
func want(p pkgResult, root string) (name string, content []byte) {
	if p.diags.HasErrors() || p.file == nil {
		return "diagnostics.txt", []byte(p.diags.Format(root))
	}
	return DefaultOutput, p.file.Content
}

// TestGolden generates every package under testdata/gen twice and compares
// the bytes with golden/<case>/: chronos_gen.go for packages that generate,
// diagnostics.txt for packages with errors. Run go test ./gen -update to
// rewrite the goldens after an intended change.
func TestGolden(t *testing.T) {
	root := repoRoot(t)
	cases := goldenCases(t, root)
	first := generateCases(t, root, cases)
	second := generateCases(t, root, cases)
	for _, c := range cases {
		t.Run(c, func(t *testing.T) {
			p, ok := first[c]
			if !ok {
				t.Fatalf("package testdata/gen/%s was not loaded", c)
			}
			name, got := want(p, root)
			if _, again := want(second[c], root); !bytes.Equal(got, again) {
				t.Fatalf("two runs over the same input differ:\n--- first\n%s\n--- second\n%s", got, again)
			}
			dir := filepath.Join(root, "golden", c)
			path := filepath.Join(dir, name)
			if *update {
				os.RemoveAll(dir)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantBytes, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./gen -update to create it)\ngot:\n%s", err, got)
			}
			if !bytes.Equal(got, wantBytes) {
				t.Errorf("%s differs from golden/%s/%s (go test ./gen -update rewrites it):\n%s", c, c, name, lineDiff(string(wantBytes), string(got)))
			}
		})
	}
}

// lineDiff shows the first lines where want and got part.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl + "\n")
			shown++
		}
	}
	return b.String()
}


// contractSymbols are the runtime names generated code refers to
// (docs/api-contract.md).
var contractSymbols = []string{
	"GeneratedCodeVersion1", "Scheduler", "Mux", "Task", "AddHandler", "AddHandlerWithResult",
	"RegisterCron", "RegisterInterval", "RegisterSimple", "Simple",
	"NewGroup", "CronTrigger", "SimpleTrigger", "AddJob",
	"WithScheduleID", "WithMisfire", "WithTimeZone", "WithDST", "WithIsolated", "WithOverlap",
	"OverlapAllow", "OverlapSkip", "OverlapBufferOne", "WithSource",
	"WithQueue", "WithMaxRetry", "WithTimeout", "WithProcessIn", "WithDedupKey",
}

// TestGoldenCompiles builds every golden chronos_gen.go, beside the input
// package it was generated from, against the real runtime: one temporary
// module that replaces github.com/chronos-go/chronos with this checkout,
// built once, offline.
func TestGoldenCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root := repoRoot(t)
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedTypes, Dir: root}, RuntimePath)
	if err != nil || len(pkgs) != 1 || pkgs[0].Types == nil {
		t.Fatalf("load runtime: %v", err)
	}
	var missing []string
	for _, name := range contractSymbols {
		if pkgs[0].Types.Scope().Lookup(name) == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Skipf("runtime lacks %s (docs/api-contract.md); generated code cannot compile yet", strings.Join(missing, ", "))
	}

	mod := t.TempDir()
	gomod := "module example.com/golden\n\ngo 1.26.0\n\nrequire github.com/chronos-go/chronos v0.0.0\n\nreplace github.com/chronos-go/chronos => " + root + "\n"
	writeFile(t, filepath.Join(mod, "go.mod"), []byte(gomod))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mod, "go.sum"), sum)
	built := 0
	for _, c := range goldenCases(t, root) {
		gen := filepath.Join(root, "golden", c, DefaultOutput)
		src, err := os.ReadFile(gen)
		if err != nil {
			continue // an error case
		}
		files, _ := filepath.Glob(filepath.Join(root, "testdata", "gen", c, "*.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(mod, c, filepath.Base(f)), b)
		}
		writeFile(t, filepath.Join(mod, c, DefaultOutput), src)
		built++
	}
	if built == 0 {
		t.Fatal("no golden chronos_gen.go found")
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the golden outputs: %v\n%s", err, out)
	}
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
