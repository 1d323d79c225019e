package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
)

// cronTimes returns the first n fire times of expr after from, read in loc.
// An invalid expression is printed with a caret under the bad column.
func cronTimes(expr string, loc *time.Location, from time.Time, n int, stderr io.Writer) ([]time.Time, int) {
	e, err := cron.Parse(expr)
	if err != nil {
		var se *cron.SyntaxError
		if !errors.As(err, &se) {
			fmt.Fprintf(stderr, "chronosgen next: %v\n", err)
			return nil, exitDrift
		}
		fmt.Fprintf(stderr, "chronosgen next: invalid cron expression at column %d: %s\n", se.Offset+1, se.Msg)
		fmt.Fprintf(stderr, "\t%s\n\t%s%s\n", expr, caretPad(expr, se.Offset), strings.Repeat("^", max(se.Len, 1)))
		return nil, exitDrift
	}
	s := cron.Schedule{Expr: e, Location: loc}
	var times []time.Time
	for t := s.Next(from); !t.IsZero() && len(times) < n; t = s.Next(t) {
		times = append(times, t)
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
