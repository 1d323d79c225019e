package gen

import (
	"errors"
	"time"

	"github.com/chronos-go/chronos/runtime/cron"
	"github.com/chronos-go/chronos/runtime/trigger"
)

// CronError is a cron expression the scheduler would refuse, as chronosgen
// reports it.
type CronError struct {
	Offset, Len int    // byte range of the bad field in the expression (Len 0: a point, or the whole)
	Msg         string // what is wrong, without the position
	Err         error  // the runtime's error: a *cron.SyntaxError, or one wrapping trigger.ErrNeverFires, …
}

// Error is the message generation prints after the directive's position.
func (e *CronError) Error() string { return "bad cron expression: " + e.Msg }

// Unwrap returns the runtime's error, so errors.As finds a
// *cron.SyntaxError and errors.Is finds trigger.ErrNeverFires.
func (e *CronError) Unwrap() error { return e.Err }

// CheckCron validates a cron expression as generation does: with
// runtime/cron, the parser the scheduler runs, and with runtime/trigger
// that it still fires from now on, since the scheduler refuses, at
// registration, a trigger whose fire times all lie in the past (say,
// `0 0 12 1 1 ? 2020`) or that has none at all (`0 0 2 30 2 ?`). The error
// is a *CronError. chronosgen next calls it too, so the command and
// generation agree on what is valid.
func CheckCron(expr string) error {
	if e := checkCron(expr); e != nil {
		return e
	}
	return nil
}

func checkCron(expr string) *CronError {
	e, err := cron.Parse(expr)
	if err != nil {
		var se *cron.SyntaxError
		if errors.As(err, &se) {
			return &CronError{Offset: se.Offset, Len: se.Len, Msg: se.Msg, Err: err}
		}
		return &CronError{Msg: err.Error(), Err: err}
	}
	if err := (trigger.Cron{Schedule: cron.Schedule{Expr: e}, Start: time.Now()}).Validate(); err != nil {
		if errors.Is(err, trigger.ErrNeverFires) {
			// The runtime's message names the start instant; keep the
			// clock out of diagnostics so they are reproducible.
			return &CronError{Msg: "it has no fire time from now on; the scheduler would refuse it (trigger will never fire)", Err: err}
		}
		return &CronError{Msg: err.Error(), Err: err}
	}
	return nil
}

// loadZone validates an IANA time zone name with runtime/cron, which
// embeds the tz database, so generate time and run time agree.
func loadZone(name string) error {
	_, err := cron.LoadLocation(name)
	return err
}
