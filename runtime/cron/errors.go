package cron

import (
	"errors"
	"fmt"
)

// SyntaxError reports an expression that Parse rejects. Offset and Len
// locate the offending token as bytes of Expr, so a caller that knows where
// Expr came from (a code generator reading a directive, for example) can
// point at the exact column.
type SyntaxError struct {
	Expr   string // the expression as given to Parse
	Field  Field  // the field the problem is in, or NoField
	Offset int    // 0-based byte offset of the bad token in Expr
	Len    int    // length of the bad token in bytes (0 at the end of Expr)
	Msg    string // what is wrong, in words, without the expression

	quirk quirk // set when Quartz 2.3.2 would accept the expression
}

// Error returns the message with the expression and the 1-based column,
// for example
//
//	cron "0 0 2 * * 8": day-of-week 8 is out of range 1-7 (SUN-SAT) (column 13)
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("cron %q: %s (column %d)", e.Expr, e.Msg, e.Offset+1)
}

// ErrInvalidZone is wrapped by the errors LoadLocation returns, so callers
// can tell a bad time zone name from other failures.
var ErrInvalidZone = errors.New("invalid time zone")
