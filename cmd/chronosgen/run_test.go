package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chronos-go/chronos/gen"
)

// chronosgen runs the command in-process and returns its exit code and
// output.
func chronosgen(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestNextCron(t *testing.T) {
	// 2026-03-08 has no 02:30 in New York (spring forward): Quartz skips it.
	code, out, errOut := chronosgen(t, "next", "-from", "2026-03-07T00:00:00Z", "-tz", "America/New_York", "-n", "3", "0 30 2 * * ?")
	want := "2026-03-07T02:30:00-05:00\n2026-03-09T02:30:00-04:00\n2026-03-10T02:30:00-04:00\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s\nwant stdout:\n%s", code, out, errOut, want)
	}
}

func TestNextInvalidExpressionShowsColumn(t *testing.T) {
	code, out, errOut := chronosgen(t, "next", "0 0 2 * * 8")
	if code != exitDrift || out != "" {
		t.Fatalf("exit %d (want %d), stdout %q", code, exitDrift, out)
	}
	lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "column 11") {
		t.Fatalf("stderr:\n%s", errOut)
	}
	if caret := strings.Index(lines[2], "^") - 1; caret != strings.Index(lines[1], "8")-1 {
		t.Errorf("caret not under the bad field:\n%s\n%s", lines[1], lines[2])
	}
}

// An expression generation refuses is refused by next too, with
// generation's message; before, '0 0 2 30 2 ?' printed nothing and exited 0.
func TestNextRefusesWhatGenerationRefuses(t *testing.T) {
	for _, expr := range []string{"0 0 2 30 2 ?", "0 0 12 1 1 ? 2020"} {
		code, out, errOut := chronosgen(t, "next", expr)
		want := "chronosgen next: bad cron expression: it has no fire time from now on; the scheduler would refuse it (trigger will never fire)\n"
		if code != exitDrift || out != "" || errOut != want {
			t.Errorf("next %q: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", expr, code, out, errOut, exitDrift, want)
		}
		if genErr := gen.CheckCron(expr); genErr == nil || errOut != "chronosgen next: "+genErr.Error()+"\n" {
			t.Errorf("next %q and generation disagree: %q vs %v", expr, errOut, genErr)
		}
	}
	// Valid from now on but not after -from: an error, not an empty list.
	code, out, errOut := chronosgen(t, "next", "-from", "2100-01-01T00:00:00Z", "0 0 12 1 1 ? 2027-2099")
	if code != exitDrift || out != "" || errOut != "chronosgen next: \"0 0 12 1 1 ? 2027-2099\" has no fire time after 2100-01-01T00:00:00Z\n" {
		t.Errorf("no fire time after -from: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// An expression given as several words is a usage error that shows the
// command quoted; joining the words would run whatever the shell made of
// an unquoted * or ?.
func TestNextWantsTheExpressionAsOneArgument(t *testing.T) {
	code, out, errOut := chronosgen(t, "next", "-tz", "Asia/Seoul", "0", "0", "2", "30", "2", "?")
	want := "chronosgen next: the cron expression must be one argument, quoted; the shell splits it and expands * and ? against file names:\n\tchronosgen next -tz Asia/Seoul '0 0 2 30 2 ?'\n"
	if code != exitError || out != "" || errOut != want {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stderr:\n%s", code, out, errOut, exitError, want)
	}
}

func TestNextSimple(t *testing.T) {
	code, out, errOut := chronosgen(t, "next", "-from", "2026-01-01T00:00:00Z", "-every", "30s", "-start-delay", "10s", "-repeat", "2", "-n", "5")
	// repeat=2 is three fires in all, however many were asked for.
	want := "2026-01-01T00:00:10Z\n2026-01-01T00:00:40Z\n2026-01-01T00:01:10Z\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if code, _, errOut := chronosgen(t, "next", "-every", "500ms"); code != exitDrift || !strings.Contains(errOut, "below the 1s minimum") {
		t.Errorf("sub-second interval: exit %d, stderr %q", code, errOut)
	}
}

func TestHelpDirectivesListsEveryKey(t *testing.T) {
	code, out, _ := chronosgen(t, "-help-directives")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, k := range []string{"cron", "every", "start-delay", "repeat", "forever", "start", "end", "tz", "dst", "misfire", "isolated", "overlap", "id", "group", "queue", "max-retry", "timeout", "process-in"} {
		if !strings.Contains(out, "\n  "+k+" ") {
			t.Errorf("-help-directives does not list %s", k)
		}
	}
}

// tempModule makes a module that uses this checkout's runtime, with one
// package jobs, and changes into it.
func tempModule(t *testing.T, src string) (dir, genFile string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/app\n\ngo 1.26.0\n\nrequire github.com/chronos-go/chronos v0.0.0\n\nreplace github.com/chronos-go/chronos => "+root+"\n")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "go.sum"), string(sum))
	write(t, filepath.Join(dir, "jobs", "jobs.go"), src)
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	t.Chdir(dir)
	return dir, filepath.Join(dir, "jobs", "chronos_gen.go")
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const pingSrc = `package jobs

import "context"

//chronos:schedule every=%s
func Ping(ctx context.Context) error { return nil }
`

func TestGenerateCheckAndDelete(t *testing.T) {
	dir, genFile := tempModule(t, strings.Replace(pingSrc, "%s", "1m", 1))
	src := filepath.Join(dir, "jobs", "jobs.go")

	// A missing file is drift; -check writes nothing.
	if code, _, errOut := chronosgen(t, "-check", "./..."); code != exitDrift || !strings.Contains(errOut, "jobs/chronos_gen.go: would be created") {
		t.Fatalf("-check before generating: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(genFile); err == nil {
		t.Fatal("-check wrote a file")
	}

	if code, _, errOut := chronosgen(t, "./..."); code != 0 {
		t.Fatalf("generate: exit %d, stderr %q", code, errOut)
	}
	first := read(t, genFile)
	if code, _, errOut := chronosgen(t, "-check", "./..."); code != 0 {
		t.Fatalf("-check after generating: exit %d, stderr %q", code, errOut)
	}

	// Unchanged output is not rewritten: the mtime stays.
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(genFile, old, old); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := chronosgen(t, "./..."); code != 0 {
		t.Fatalf("second generate: exit %d", code)
	}
	if st, err := os.Stat(genFile); err != nil || !st.ModTime().Equal(old) {
		t.Errorf("an unchanged file was rewritten (mtime %v)", st.ModTime())
	}

	// A changed directive is drift; generating updates the file.
	write(t, src, strings.Replace(pingSrc, "%s", "2m", 1))
	if code, _, errOut := chronosgen(t, "-check", "./..."); code != exitDrift || !strings.Contains(errOut, "would be updated (line ") || !strings.Contains(errOut, `every 2m`) {
		t.Fatalf("-check after an edit: exit %d, stderr %q", code, errOut)
	}
	if code, out, _ := chronosgen(t, "-check", "-diff", "./..."); code != exitDrift ||
		!strings.Contains(out, "--- jobs/chronos_gen.go\n+++ jobs/chronos_gen.go (generated)\n@@ ") ||
		!strings.Contains(out, "\n-\tif err := chronos.RegisterInterval(sched, time.Minute,") ||
		!strings.Contains(out, "\n+\tif err := chronos.RegisterInterval(sched, 2*time.Minute,") {
		t.Fatalf("-check -diff after an edit: exit %d, stdout:\n%s", code, out)
	}
	if code, _, _ := chronosgen(t, "./..."); code != 0 {
		t.Fatal("generate after an edit failed")
	}
	second := read(t, genFile)
	if second == first || !strings.Contains(second, "2*time.Minute") {
		t.Fatalf("file not updated:\n%s", second)
	}

	// An error writes nothing and leaves the previous output alone.
	write(t, src, strings.Replace(pingSrc, "%s", "500ms", 1))
	code, _, errOut := chronosgen(t, "./...")
	if code != exitError || !strings.HasPrefix(errOut, "jobs/jobs.go:5:26: interval 500ms is below the 1s minimum") {
		t.Fatalf("bad interval: exit %d, stderr %q", code, errOut)
	}
	if read(t, genFile) != second {
		t.Fatal("a failed run changed the generated file")
	}

	// With no directives left, the file is stale and gets deleted.
	write(t, src, "package jobs\n")
	if code, _, errOut := chronosgen(t, "-check", "./..."); code != exitDrift || !strings.Contains(errOut, "would be deleted") {
		t.Fatalf("-check with no directives: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := chronosgen(t, "./..."); code != 0 {
		t.Fatal("generate with no directives failed")
	}
	if _, err := os.Stat(genFile); !os.IsNotExist(err) {
		t.Fatalf("stale generated file not deleted: %v", err)
	}

	// A hand-written file of the same name is never deleted.
	write(t, genFile, "package jobs\n")
	if code, _, _ := chronosgen(t, "./..."); code != 0 {
		t.Fatal("generate next to a hand-written file failed")
	}
	if _, err := os.Stat(genFile); err != nil {
		t.Fatal("a hand-written chronos_gen.go was deleted")
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNeverOverwritesAHandWrittenFile(t *testing.T) {
	_, genFile := tempModule(t, strings.Replace(pingSrc, "%s", "1m", 1))
	write(t, genFile, "package jobs\n\n// Mine.\n")
	code, _, errOut := chronosgen(t, "./...")
	if code != exitError || !strings.Contains(errOut, "jobs/chronos_gen.go: exists and was not written by chronosgen") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if read(t, genFile) != "package jobs\n\n// Mine.\n" {
		t.Fatal("a hand-written file was overwritten")
	}
}

func TestBrokenOutputDoesNotBreakItsOwnLoad(t *testing.T) {
	_, genFile := tempModule(t, strings.Replace(pingSrc, "%s", "1m", 1))
	// A half-edited generated file that does not even parse: the
	// chronosgen build tag keeps it out of the load.
	write(t, genFile, "//go:build !chronosgen\n\n// Code generated by chronosgen. DO NOT EDIT.\n\npackage jobs\n\nfunc RegisterChronosJobs( {\n")
	if code, _, errOut := chronosgen(t, "./..."); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if got := read(t, genFile); !strings.Contains(got, "func RegisterChronosJobs(sched *chronos.Scheduler") {
		t.Fatalf("broken output not replaced:\n%s", got)
	}
}

func TestTagsSelectFiles(t *testing.T) {
	dir, genFile := tempModule(t, strings.Replace(pingSrc, "%s", "1m", 1))
	write(t, filepath.Join(dir, "jobs", "extra.go"), "//go:build extra\n\npackage jobs\n\nimport \"context\"\n\n//chronos:schedule every=1h\nfunc Extra(ctx context.Context) error { return nil }\n")

	// Without the tag the file is excluded, and a directive there is an error.
	code, _, errOut := chronosgen(t, "./...")
	if code != exitError || !strings.Contains(errOut, "jobs/extra.go:7:1: //chronos:schedule in a file excluded from this build") {
		t.Fatalf("without -tags: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := chronosgen(t, "-tags", "extra", "./..."); code != 0 {
		t.Fatalf("with -tags extra: exit %d, stderr %q", code, errOut)
	}
	if got := read(t, genFile); !strings.Contains(got, "chronos.AddFunc[ExtraArgs](mux, Extra)") {
		t.Fatalf("handler from the tagged file missing:\n%s", got)
	}
}

func TestSyntaxErrorIsReportedWithPosition(t *testing.T) {
	_, genFile := tempModule(t, "package jobs\n\nfunc broken( {\n")
	code, _, errOut := chronosgen(t, "./...")
	if code != exitError || !strings.HasPrefix(errOut, "jobs/jobs.go:3:") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(genFile); err == nil {
		t.Fatal("a file was written despite the error")
	}
}
