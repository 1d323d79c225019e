package gen

import (
	"errors"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// cronError is a cron problem at a byte range of the expression.
type cronError struct {
	Offset, Len int
	Msg         string
	Never       bool // the expression is valid but has no fire time left
}

// parseCron validates a cron expression with runtime/cron, the parser the
// scheduler runs, and checks with runtime/trigger that it still fires from
// now on: the scheduler refuses, at registration, a trigger whose fire times
// all lie in the past (say, `0 0 12 1 1 ? 2020`), so the generator does too.
func parseCron(expr string) *cronError {
	e, err := cron.Parse(expr)
	if err != nil {
		var se *cron.SyntaxError
		if errors.As(err, &se) {
			return &cronError{Offset: se.Offset, Len: se.Len, Msg: se.Msg}
		}
		return &cronError{Msg: err.Error()}
	}
	if err := (trigger.Cron{Schedule: cron.Schedule{Expr: e}, Start: time.Now()}).Validate(); err != nil {
		if errors.Is(err, trigger.ErrNeverFires) {
			// The runtime's message names the start instant; keep the
			// clock out of diagnostics so they are reproducible.
			return &cronError{Msg: "it has no fire time from now on; the scheduler would refuse it (trigger will never fire)", Never: true}
		}
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
