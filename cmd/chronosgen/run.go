package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/chronos-go/chronos/gen"
)

// Exit codes.
const (
	exitOK    = 0
	exitDrift = 1 // -check found stale output; next: invalid expression
	exitError = 2 // diagnostics, usage or I/O errors
)

// run is the whole command, for tests: it never calls os.Exit.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "next" {
		return runNext(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("chronosgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		output   = fs.String("o", gen.DefaultOutput, "generated file `name` in each package")
		tags     = fs.String("tags", "", "extra comma-separated build `tags`")
		check    = fs.Bool("check", false, "write nothing; exit 1 when a generated file is stale, missing or should be deleted")
		diff     = fs.Bool("diff", false, "with -check: print a unified diff of each stale file")
		verbose  = fs.Bool("v", false, "print written files, tolerated type errors and timings")
		version  = fs.Bool("version", false, "print the version and exit")
		helpKeys = fs.Bool("help-directives", false, "print the table of directive keys and exit")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: chronosgen [flags] [packages]\n       chronosgen next [-tz ZONE] [-from TIME] [-n N] 'EXPR'\n       chronosgen next -every D [-start-delay D] [-repeat N] [-from TIME] [-n N]\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitError
	}
	if *version {
		fmt.Fprintln(stdout, "chronosgen", versionString())
		return exitOK
	}
	if *helpKeys {
		io.WriteString(stdout, gen.HelpDirectives())
		return exitOK
	}
	if strings.ContainsAny(*output, `/\`) || !strings.HasSuffix(*output, ".go") || strings.HasSuffix(*output, "_test.go") {
		fmt.Fprintf(stderr, "chronosgen: -o %q: want a plain .go file name (not a path, not a _test.go file)\n", *output)
		return exitError
	}
	cfg := gen.Config{Patterns: fs.Args(), Output: *output}
	if *tags != "" {
		cfg.Tags = strings.Split(*tags, ",")
	}
	cwd, _ := os.Getwd()
	res, err := gen.Generate(context.Background(), cfg)
	if err != nil {
		fmt.Fprintf(stderr, "chronosgen: %v\n", err)
		return exitError
	}
	if *verbose {
		for _, e := range res.TypeErrors {
			fmt.Fprintf(stderr, "chronosgen: tolerated type error: %s\n", e)
		}
	}
	io.WriteString(stderr, res.Diagnostics.Format(cwd))
	if res.Diagnostics.HasErrors() {
		return exitError
	}
	code := exitOK
	for _, f := range res.Files {
		rel := relPath(cwd, f.Path)
		if *check {
			ch, err := f.Diff()
			if err != nil {
				fmt.Fprintf(stderr, "chronosgen: %v\n", err)
				return exitError
			}
			if ch != gen.Unchanged {
				fmt.Fprintf(stderr, "%s: would be %s%s; run go generate\n", rel, ch, firstDiff(f))
				if *diff {
					old, _ := os.ReadFile(f.Path) // absent: a file to create
					io.WriteString(stdout, unifiedDiff(rel, string(old), string(f.Content)))
				}
				code = exitDrift
			}
			continue
		}
		ch, err := f.Write()
		if err != nil {
			fmt.Fprintf(stderr, "chronosgen: %v\n", err)
			return exitError
		}
		if *verbose && ch != gen.Unchanged {
			fmt.Fprintf(stderr, "chronosgen: %s %s\n", ch, rel)
		}
	}
	if *verbose {
		fmt.Fprintf(stderr, "chronosgen: load %v, generate %v\n", res.LoadTime.Round(1e5), res.GenTime.Round(1e5))
	}
	return code
}

func relPath(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// versionString is the module version chronosgen was built at: under
// go tool it is the runtime's version too, as both live in one module.
func versionString() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// firstDiff names the first line where an existing file differs from what
// would be written, so a -check failure in CI says what drifted.
func firstDiff(f gen.File) string {
	old, err := os.ReadFile(f.Path)
	if err != nil || f.Content == nil {
		return ""
	}
	a, b := strings.Split(string(old), "\n"), strings.Split(string(f.Content), "\n")
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf(" (line %d: have %q, want %q)", i+1, x, y)
		}
	}
	return ""
}
