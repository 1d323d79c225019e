package cron

// Field names one field of a cron expression. A SyntaxError carries it so
// that callers can say which part of an expression is wrong.
type Field int

// The fields of an expression, in Quartz order. NoField marks problems with
// the expression as a whole, such as a wrong number of fields.
const (
	NoField Field = iota
	Second
	Minute
	Hour
	DayOfMonth
	Month
	DayOfWeek
	Year
)

var fieldNames = [...]string{
	NoField:    "expression",
	Second:     "second",
	Minute:     "minute",
	Hour:       "hour",
	DayOfMonth: "day-of-month",
	Month:      "month",
	DayOfWeek:  "day-of-week",
	Year:       "year",
}

// String returns the field's name as error messages spell it, for example
// "day-of-week".
func (f Field) String() string {
	if f < 0 || int(f) >= len(fieldNames) {
		return "field(?)"
	}
	return fieldNames[f]
}

// Dialect says which cron language an expression was written in. Parse
// chooses it from the shape of the expression.
type Dialect int

const (
	// Quartz is the 6- or 7-field dialect of Quartz's CronExpression:
	// sec min hour day-of-month month day-of-week [year], with ? L W # and
	// day-of-week 1-7 = SUN-SAT.
	Quartz Dialect = iota
	// Standard is 5-field Vixie cron (min hour day-of-month month
	// day-of-week, day-of-week 0-7 with 0 and 7 = SUN) and the @daily-style
	// descriptors.
	Standard
)

// String returns "quartz" or "standard".
func (d Dialect) String() string {
	switch d {
	case Quartz:
		return "quartz"
	case Standard:
		return "standard"
	}
	return "dialect(?)"
}
