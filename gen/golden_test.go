package gen

import (
	"bytes"
	"context"
	"flag"
	"fmt"
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

// missingSymbols returns the contract symbols the runtime in this checkout
// does not declare yet.
func missingSymbols(t *testing.T, root string) []string {
	t.Helper()
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
	return missing
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
	if missing := missingSymbols(t, root); len(missing) > 0 {
		t.Skipf("runtime lacks %s (docs/api-contract.md); generated code cannot compile yet", strings.Join(missing, ", "))
	}
	vetGoldens(t, root, nil, true)
}

// registerTest is a test, built once for all cases in TestGoldenCompiles,
// that calls every golden entry point against the real runtime, which
// validates each schedule as it is declared (locally: nothing reaches Redis
// before Start). The generator and the runtime must agree on what is valid.
const registerTest = `package registertest

import (
	"reflect"
	"testing"

	chronos "github.com/chronos-go/chronos/runtime"
	"github.com/redis/go-redis/v9"
%s)

var entryPoints = map[string]any{
%s}

func TestRegister(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for name, ep := range entryPoints {
		fn := reflect.ValueOf(ep)
		args := []reflect.Value{
			reflect.ValueOf(chronos.NewScheduler(rdb, chronos.SchedulerConfig{})),
			reflect.ValueOf(chronos.NewMux()),
		}
		for i := 2; i < fn.Type().NumIn(); i++ {
			args = append(args, receiver(fn.Type().In(i)))
		}
		if err, _ := fn.Call(args)[0].Interface().(error); err != nil {
			t.Errorf("%%s.RegisterChronosJobs: %%v", name, err)
		}
	}
}

// receiver makes a receiver, with no-op funcs in its func fields.
func receiver(t reflect.Type) reflect.Value {
	ptr := t.Kind() == reflect.Pointer
	if ptr {
		t = t.Elem()
	}
	v := reflect.New(t)
	if t.Kind() == reflect.Struct {
		for i := 0; i < t.NumField(); i++ {
			f := v.Elem().Field(i)
			if f.Kind() == reflect.Func && f.CanSet() {
				ft := f.Type()
				f.Set(reflect.MakeFunc(ft, func([]reflect.Value) []reflect.Value {
					out := make([]reflect.Value, ft.NumOut())
					for j := range out {
						out[j] = reflect.Zero(ft.Out(j))
					}
					return out
				}))
			}
		}
	}
	if ptr {
		return v
	}
	return v.Elem()
}
`

// contractShim declares, as in docs/api-contract.md, each runtime symbol
// generated code uses; bodies do nothing.
var contractShim = map[string]string{
	"GeneratedCodeVersion1": "const GeneratedCodeVersion1 = 1",
	"Scheduler":             "type Scheduler struct{}",
	"RegisterCron":          "func RegisterCron[A TaskArgs](s *Scheduler, expr string, args A, opts ...ScheduleOption) error { return nil }",
	"RegisterInterval":      "func RegisterInterval[A TaskArgs](s *Scheduler, every time.Duration, args A, opts ...ScheduleOption) error { return nil }",
	"RegisterSimple":        "func RegisterSimple[A TaskArgs](s *Scheduler, t Simple, args A, opts ...ScheduleOption) error { return nil }",
	"Simple":                "type Simple struct {\n\tEvery, StartDelay time.Duration\n\tStart, End time.Time\n\tRepeat int\n}",
	"NewGroup":              "type Group struct{}\n\ntype GroupTrigger interface{}\n\nfunc NewGroup(s *Scheduler, id string, trig GroupTrigger, opts ...ScheduleOption) *Group { return nil }",
	"CronTrigger":           "func CronTrigger(expr string) GroupTrigger { return nil }",
	"SimpleTrigger":         "func SimpleTrigger(t Simple) GroupTrigger { return nil }",
	"AddJob":                "func AddJob[A TaskArgs](g *Group, name string, args A, opts ...EnqueueOption) error { return nil }",
	"WithScheduleID":        "func WithScheduleID(id string) ScheduleOption { return nil }",
	"WithMisfire":           "func WithMisfire(name string) ScheduleOption { return nil }",
	"WithTimeZone":          "func WithTimeZone(name string) ScheduleOption { return nil }",
	"WithDST":               "func WithDST(p cron.DSTPolicy) ScheduleOption { return nil }",
	"WithIsolated":          "func WithIsolated(b bool) ScheduleOption { return nil }",
	"WithOverlap":           "type Overlap int\n\nfunc WithOverlap(o Overlap) ScheduleOption { return nil }",
	"OverlapAllow":          "const OverlapAllow Overlap = 0",
	"OverlapSkip":           "const OverlapSkip Overlap = 1",
	"OverlapBufferOne":      "const OverlapBufferOne Overlap = 2",
	"WithSource":            "func WithSource(file string, line int) ScheduleOption { return nil }",
}

// TestGoldenCompilesAgainstContract builds the golden outputs against the
// runtime plus, for each contract symbol it still lacks, the declaration
// the contract promises (added with go build -overlay; nothing on disk
// changes). It checks that generated code calls the contract correctly
// before the scheduler exists; TestGoldenCompiles is the real thing.
func TestGoldenCompilesAgainstContract(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root := repoRoot(t)
	missing := missingSymbols(t, root)
	if len(missing) == 0 {
		t.Skip("the runtime has every contract symbol; TestGoldenCompiles covers this")
	}
	var b strings.Builder
	b.WriteString("package chronos\n\nimport (\n\t\"time\"\n\n\t\"github.com/chronos-go/chronos/runtime/cron\"\n)\n\nvar _ = time.Second\nvar _ cron.DSTPolicy\n")
	for _, name := range missing {
		decl, ok := contractShim[name]
		if !ok {
			t.Fatalf("no contract shim for %s", name)
		}
		b.WriteString("\n" + decl + "\n")
	}
	dir := t.TempDir()
	shim := filepath.Join(dir, "shim.go")
	writeFile(t, shim, []byte(b.String()))
	overlay := fmt.Sprintf(`{"Replace":{%q:%q}}`, filepath.Join(root, "runtime", "zz_contract_shim.go"), shim)
	writeFile(t, filepath.Join(dir, "overlay.json"), []byte(overlay))
	t.Logf("shimmed: %s", strings.Join(missing, ", "))
	vetGoldens(t, root, []string{"-overlay=" + filepath.Join(dir, "overlay.json")}, false)
}

// vetGoldens copies every case that generates, with its golden output,
// into one temporary module and runs go vet on it, and with register set
// also go test with registerTest in every case.
func vetGoldens(t *testing.T, root string, flags []string, register bool) {
	t.Helper()
	mod := testModule(t, "example.com/golden", nil)
	built := 0
	var imports, entries string
	for _, c := range goldenCases(t, root) {
		src, err := os.ReadFile(filepath.Join(root, "golden", c, DefaultOutput))
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
		imports += fmt.Sprintf("\t%s \"example.com/golden/%s\"\n", c, c)
		entries += fmt.Sprintf("\t%q: %s.RegisterChronosJobs,\n", c, c)
		built++
	}
	if built == 0 {
		t.Fatal("no golden chronos_gen.go found")
	}
	if register {
		writeFile(t, filepath.Join(mod, "registertest", "register_test.go"), []byte(fmt.Sprintf(registerTest, imports, entries)))
	}
	cmd := exec.Command("go", append(append([]string{"vet"}, flags...), "./...")...)
	cmd.Dir = mod
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the golden outputs: %v\n%s", err, out)
	}
	t.Logf("go vet passed on %d golden outputs", built)
	if !register {
		return
	}
	cmd = exec.Command("go", "test", "./registertest")
	cmd.Dir = mod
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("registering the golden outputs with the real runtime: %v\n%s", err, out)
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
