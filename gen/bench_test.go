package gen

import (
	"context"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testModule writes a module named path that requires this repository's
// runtime (through a replace), with the given files, and returns its
// directory. The go command runs offline on it.
func testModule(tb testing.TB, path string, files map[string]string) string {
	tb.Helper()
	root := repoRoot(tb)
	dir := tb.TempDir()
	writeFile(tb, filepath.Join(dir, "go.mod"), []byte("module "+path+"\n\ngo 1.26.0\n\nrequire github.com/chronos-go/chronos v0.0.0\n\nreplace github.com/chronos-go/chronos => "+root+"\n"))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		tb.Fatal(err)
	}
	writeFile(tb, filepath.Join(dir, "go.sum"), sum)
	for name, src := range files {
		writeFile(tb, filepath.Join(dir, name), []byte(src))
	}
	tb.Setenv("GOFLAGS", "-mod=mod")
	tb.Setenv("GOPROXY", "off")
	tb.Setenv("GOWORK", "off")
	return dir
}

// bigModule writes a module with one package of n annotated handlers
// (methods on ten receiver types, half cron, half simple triggers, some
// taking typed args) and returns its directory.
func bigModule(tb testing.TB, n int) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("package big\n\nimport (\n\t\"context\"\n\n\tchronos \"github.com/chronos-go/chronos/runtime\"\n)\n\n")
	for r := range 10 {
		fmt.Fprintf(&b, "// Svc%d holds handlers.\ntype Svc%d struct{}\n\n", r, r)
	}
	for i := range n {
		recv := fmt.Sprintf("Svc%d", i%10)
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "// Job%d runs.\n//\n//chronos:schedule cron=\"0 %d %d * * ?\" tz=Asia/Seoul misfire=doNothing\nfunc (s *%s) Job%d(ctx context.Context) error { return nil }\n\n", i, i%60, i%24, recv, i)
		case 1:
			fmt.Fprintf(&b, "// Job%d runs.\n//\n//chronos:schedule every=%ds queue=q%d max-retry=3\nfunc (s *%s) Job%d(ctx context.Context) error { return nil }\n\n", i, 1+i%300, i%7, recv, i)
		case 2:
			fmt.Fprintf(&b, "// Args%d are arguments.\ntype Args%d struct{ N int }\n\n// Kind implements chronos.TaskArgs.\nfunc (Args%d) Kind() string { return \"big.args%d\" }\n\n", i, i, i, i)
			fmt.Fprintf(&b, "// Job%d runs.\n//\n//chronos:schedule id=job-%d-a every=1m start-delay=10s repeat=9\n//chronos:schedule id=job-%d-b cron=\"@hourly\"\nfunc (s *%s) Job%d(ctx context.Context, t *chronos.Task[Args%d]) error { return nil }\n\n", i, i, i, recv, i, i)
		case 3:
			fmt.Fprintf(&b, "// Job%d runs.\n//\n//chronos:schedule cron=\"0 0/5 * * * ?\" overlap=skip timeout=1m\nfunc (s *%s) Job%d(ctx context.Context) (int, error) { return 0, nil }\n\n", i, recv, i)
		}
	}
	return testModule(tb, "example.com/big", map[string]string{"big/big.go": b.String()})
}

// BenchmarkGenerate1000 generates for a package of 1,000 annotated
// handlers. load-ms is go/packages (go list and type-checking); gen-ms is
// everything chronosgen does after loading: scan, validate with the time
// engine, build the model, emit and gofmt.
//
// gogc=100 is a library caller with Go's default; gogc=400 is the
// chronosgen command, which sets it (see tuneGC in cmd/chronosgen).
func BenchmarkGenerate1000(b *testing.B) {
	dir := bigModule(b, 1000)
	for _, gogc := range []int{100, 400} {
		b.Run(fmt.Sprintf("gogc=%d", gogc), func(b *testing.B) {
			defer debug.SetGCPercent(debug.SetGCPercent(gogc))
			var load, gen float64
			for b.Loop() {
				res, err := Generate(context.Background(), Config{Dir: dir, Patterns: []string{"./big"}})
				if err != nil {
					b.Fatal(err)
				}
				if res.Diagnostics.HasErrors() || len(res.Files) != 1 {
					b.Fatalf("diagnostics:\n%s", res.Diagnostics.Format(dir))
				}
				load += float64(res.LoadTime.Microseconds()) / 1000
				gen += float64(res.GenTime.Microseconds()) / 1000
			}
			b.ReportMetric(load/float64(b.N), "load-ms/op")
			b.ReportMetric(gen/float64(b.N), "gen-ms/op")
		})
	}
}

// BenchmarkCheckEmit1000 is the generator's own work on a package of 1,000
// handlers, loaded once: scan, validate, model, emit and gofmt.
func BenchmarkCheckEmit1000(b *testing.B) {
	dir := bigModule(b, 1000)
	fset := token.NewFileSet()
	pkgs, err := load(context.Background(), Config{Dir: dir, Patterns: []string{"./big"}}, fset)
	if err != nil || len(pkgs) != 1 {
		b.Fatal(err)
	}
	pkg := pkgs[0]
	cpu0 := cpuTime()
	for b.Loop() {
		p, err := generatePackage(pkg, fset, DefaultOutput)
		if err != nil || p.diags.HasErrors() || p.file == nil {
			b.Fatalf("%v %v", err, p.diags)
		}
	}
	// CPU time is less disturbed than wall time on a shared machine.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the user+system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
