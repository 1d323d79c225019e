package gen

import (
	"context"
	"strings"
	"testing"
)

// Two packages named jobs, each with a Cleanup job: both get the ID and the
// kind jobs.Cleanup. Generation goes ahead (the packages may well be
// separate services) but says so, pointing at both declarations.
func TestSameIDInTwoPackagesIsAWarning(t *testing.T) {
	src := "package jobs\n\nimport \"context\"\n\n//chronos:schedule every=1m\nfunc Cleanup(ctx context.Context) error { return nil }\n"
	dir := testModule(t, "example.com/two", map[string]string{"a/jobs/jobs.go": src, "b/jobs/jobs.go": src})

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
