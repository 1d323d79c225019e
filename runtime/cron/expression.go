package cron

import "time"

// Expression is a parsed cron expression. It is immutable and safe for
// concurrent use. Create one with Parse or MustParse.
type Expression struct {
	text    string
	dialect Dialect
	spec    spec
}

// String returns the expression in canonical form: fields separated by
// single spaces and letters upper-cased (descriptors such as @daily are
// lower-cased). Parsing the result yields an Equal expression.
func (e *Expression) String() string { return e.text }

// Dialect reports whether e was written as a Quartz (6 or 7 fields) or a
// standard (5 fields or @descriptor) expression.
func (e *Expression) Dialect() Dialect { return e.dialect }

// Equal reports whether e and o compiled to the same schedule: the same
// dialect, the same values in every field and the same day rules. Two
// spellings of one schedule, such as "0 0 12 ? * MON-FRI" and
// "0 0 12 ? * 2-6", are Equal.
func (e *Expression) Equal(o *Expression) bool {
	if e == nil || o == nil {
		return e == o
	}
	return e.dialect == o.dialect && e.spec == o.spec
}

// Next returns the first fire time strictly after after in loc (nil means
// UTC), under the default DST policy. It is shorthand for
// Schedule{Expr: e, Location: loc}.Next(after); see Schedule.Next.
func (e *Expression) Next(after time.Time, loc *time.Location) time.Time {
	return Schedule{Expr: e, Location: loc}.Next(after)
}
