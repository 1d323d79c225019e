package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/trigger"
)

// runNext prints the next fire times of a cron expression or a simple
// trigger, computed by the runtime's own time engine: what you see is what
// the scheduler will do. An expression generation would refuse is an
// error here too, never an empty list.
//
// The expression must be one argument. Several arguments are an error
// that shows the command quoted, rather than joined into an expression:
// unquoted, the shell has already replaced * and ? by the names of files
// that match them, so the joined words need not be what was typed.
func runNext(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chronosgen next", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		tz         = fs.String("tz", "UTC", "IANA time `zone` the expression is read in and times are printed in")
		from       = fs.String("from", "", "print fire times after this RFC 3339 `time` (default now)")
		n          = fs.Int("n", 5, "how many fire times to print")
		every      = fs.Duration("every", 0, "simple trigger `interval` instead of a cron expression")
		startDelay = fs.Duration("start-delay", 0, "simple trigger: first fire this long after -from")
		repeat     = fs.Int("repeat", trigger.RepeatForever, "simple trigger: repeats after the first fire (-1 forever)")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: chronosgen next [-tz ZONE] [-from TIME] [-n N] 'EXPR'\n       chronosgen next -every D [-start-delay D] [-repeat N] [-from TIME] [-n N]\n\nEXPR is one argument: quote it, or the shell splits it and expands * and ?.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitError
	}
	start := time.Now()
	if *from != "" {
		t, err := time.Parse(time.RFC3339, *from)
		if err != nil {
			fmt.Fprintf(stderr, "chronosgen next: -from %q: want an RFC 3339 time such as 2026-03-08T00:00:00-05:00\n", *from)
			return exitError
		}
		start = t
	}
	if *n < 1 {
		fmt.Fprintf(stderr, "chronosgen next: -n must be at least 1\n")
		return exitError
	}
	loc, err := loadLocation(*tz)
	if err != nil {
		fmt.Fprintf(stderr, "chronosgen next: -tz %q: %v\n", *tz, err)
		return exitError
	}

	var times []time.Time
	switch {
	case *every != 0 && fs.NArg() > 0:
		fmt.Fprintf(stderr, "chronosgen next: give a cron expression or -every, not both\n")
		return exitError
	case *every != 0:
		t := trigger.Simple{Start: start.Add(*startDelay), Interval: *every, RepeatCount: *repeat}
		if err := t.Validate(); err != nil {
			fmt.Fprintf(stderr, "chronosgen next: %v\n", err)
			return exitDrift
		}
		next, ok := t.First()
		for ok && len(times) < *n {
			times = append(times, next)
			next, ok = t.FireTimeAfter(next)
		}
	case fs.NArg() > 1:
		flags := args[:len(args)-fs.NArg()]
		fmt.Fprintf(stderr, "chronosgen next: the cron expression must be one argument, quoted; the shell splits it and expands * and ? against file names:\n\tchronosgen next %s\n",
			strings.Join(append(slices.Clone(flags), "'"+strings.Join(fs.Args(), " ")+"'"), " "))
		return exitError
	case fs.NArg() == 1:
		var code int
		times, code = cronTimes(fs.Arg(0), loc, start, *n, stderr)
		if code != exitOK {
			return code
		}
	default:
		fs.Usage()
		return exitError
	}
	for _, t := range times {
		fmt.Fprintln(stdout, t.In(loc).Format(time.RFC3339))
	}
	return exitOK
}
