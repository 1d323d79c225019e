package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/chronos-go/chronos/gen"
	"github.com/chronos-go/chronos/runtime/cron"
)

// cronTimes returns the first n fire times of expr after from, read in loc.
// expr is checked as generation checks it (gen.CheckCron), so an expression
// go generate refuses is refused here too, with the same message; a
// syntax error is printed with a caret under the bad field.
func cronTimes(expr string, loc *time.Location, from time.Time, n int, stderr io.Writer) ([]time.Time, int) {
	if err := gen.CheckCron(expr); err != nil {
		var se *cron.SyntaxError
		if errors.As(err, &se) {
			fmt.Fprintf(stderr, "chronosgen next: invalid cron expression at column %d: %s\n", se.Offset+1, se.Msg)
			fmt.Fprintf(stderr, "\t%s\n\t%s%s\n", expr, caretPad(expr, se.Offset), strings.Repeat("^", max(se.Len, 1)))
			return nil, exitDrift
		}
		fmt.Fprintf(stderr, "chronosgen next: %v\n", err)
		return nil, exitDrift
	}
	e, err := cron.Parse(expr)
	if err != nil { // CheckCron has parsed it already
		fmt.Fprintf(stderr, "chronosgen next: %v\n", err)
		return nil, exitDrift
	}
	s := cron.Schedule{Expr: e, Location: loc}
	var times []time.Time
	for t := s.Next(from); !t.IsZero() && len(times) < n; t = s.Next(t) {
		times = append(times, t)
	}
	if len(times) == 0 {
		// Valid from now on, but not after -from (a year-limited
		// expression asked about a later year).
		fmt.Fprintf(stderr, "chronosgen next: %q has no fire time after %s\n", expr, from.In(loc).Format(time.RFC3339))
		return nil, exitDrift
	}
	return times, exitOK
}

// caretPad is the indentation that puts a caret under expr[off], keeping
// tabs so the caret lines up in any terminal.
func caretPad(expr string, off int) string {
	off = min(off, len(expr))
	var b strings.Builder
	for _, r := range expr[:off] {
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// loadLocation loads an IANA zone from the runtime's embedded tz database.
func loadLocation(name string) (*time.Location, error) { return cron.LoadLocation(name) }
