package gen

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two packages named jobs, each with a Cleanup job: both get the ID and the
// kind jobs.Cleanup. Generation goes ahead (the packages may well be
// separate services) but says so, pointing at both declarations.
func TestSameIDInTwoPackagesIsAWarning(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), []byte("module example.com/two\n\ngo 1.26.0\n\nrequire github.com/chronos-go/chronos v0.0.0\n\nreplace github.com/chronos-go/chronos => "+root+"\n"))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "go.sum"), sum)
	src := "package jobs\n\nimport \"context\"\n\n//chronos:schedule every=1m\nfunc Cleanup(ctx context.Context) error { return nil }\n"
	writeFile(t, filepath.Join(dir, "a", "jobs", "jobs.go"), []byte(src))
	writeFile(t, filepath.Join(dir, "b", "jobs", "jobs.go"), []byte(src))
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")

	res, err := Generate(context.Background(), Config{Dir: dir, Patterns: []string{"./..."}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Diagnostics.HasErrors() || len(res.Files) != 2 {
		t.Fatalf("want two files and no errors; got %d files:\n%s", len(res.Files), res.Diagnostics.Format(dir))
	}
	want := `b/jobs/jobs.go:5: warning: schedule ID "jobs.Cleanup" is also declared in package example.com/two/a/jobs; if both run against one namespace, give one of them another id=
	a/jobs/jobs.go:5: declared here
b/jobs/jobs.go:5: warning: task kind "jobs.Cleanup" is also declared in package example.com/two/a/jobs; if both register on one Mux, the second AddHandler panics; rename the package, type or method, or use an args type of your own
	a/jobs/jobs.go:5: declared here`
	if got := strings.TrimSpace(res.Diagnostics.Format(dir)); got != want {
		t.Fatalf("diagnostics:\n%s\nwant:\n%s", got, want)
	}
}
