package gen

import (
	"errors"

	"github.com/chronos-go/chronos/runtime/cron"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// cronError is a cron problem at a byte range of the expression.
type cronError struct {
	Offset, Len int
	Msg         string
}

// parseCron validates a cron expression with runtime/cron, the parser the
// scheduler runs, and checks with runtime/trigger that it fires at all.
func parseCron(expr string) *cronError {
	e, err := cron.Parse(expr)
	if err != nil {
		var se *cron.SyntaxError
		if errors.As(err, &se) {
			return &cronError{Offset: se.Offset, Len: se.Len, Msg: se.Msg}
		}
		return &cronError{Msg: err.Error()}
	}
	if err := (trigger.Cron{Schedule: cron.Schedule{Expr: e}}).Validate(); err != nil {
		return &cronError{Msg: err.Error()}
	}
	return nil
}

// loadZone validates an IANA time zone name with runtime/cron, which
// embeds the tz database, so generate time and run time agree.
func loadZone(name string) error {
	_, err := cron.LoadLocation(name)
	return err
}
