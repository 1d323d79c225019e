// Command chronosgen generates typed registration code from //chronos:
// directives and chronos struct tags. Run it through go generate:
//
//	//go:generate go tool chronosgen
//
// or for a whole module from its root: go tool chronosgen ./...
//
// Usage:
//
//	chronosgen [flags] [packages]
//	chronosgen next [-tz ZONE] [-from TIME] [-n N] 'CRON EXPRESSION'
//	chronosgen next -every 30s [-start-delay 10s] [-repeat 9] [-from TIME] [-n N]
//
// next prints fire times computed by the runtime's engine. Its cron
// expression is checked as go generate checks it, so one generation
// refuses (say, '0 0 2 30 2 ?', which never fires) is an error here too.
// The expression must be a single quoted argument: given as several words,
// next prints the command quoted and fails, instead of joining them,
// because the shell has already expanded any unquoted * and ? against
// file names.
//
// Flags:
//
//	-o name           generated file name in each package (default chronos_gen.go)
//	-tags list        extra comma-separated build tags
//	-check            write nothing; exit 1 when a generated file is stale, missing or should be deleted
//	-diff             with -check: print a unified diff of each stale file
//	-v                print what was written, tolerated type errors and timings
//	-version          print the version and exit
//	-help-directives  print the table of directive keys and exit
//
// Exit status: 0 success, 1 drift (under -check) or an invalid expression
// (under next), 2 diagnostics or usage errors. Errors are printed as
// file:line:col: message, with paths relative to the current directory.
// When any error is found, no file is written or deleted.
package main

import (
	"os"
	"runtime/debug"
)

func main() {
	tuneGC()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// gcPercent is chronosgen's GOGC when the user has not set one.
const gcPercent = 400

// tuneGC trades memory for time, as the Go compiler does. A run is short
// and allocates a few tens of megabytes over a live heap of a few, so the
// default GOGC=100 collects every few megabytes: about a quarter of the
// time after loading, for 1,000 handlers. GOGC=400 keeps the peak heap
// under 100 MB for such a package. An explicit GOGC wins.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}
