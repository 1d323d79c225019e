// Package errors is a chronosgen golden case: every directive mistake
// chronosgen reports, all in one run.
package errors

import "context"

// BadCron has a day-of-week out of range; the error points at the 8.
//
//chronos:schedule id=bad-cron cron="0 0 2 * * 8"
func BadCron(ctx context.Context) error { return nil }

// Escaped cron: the column is still the bad field's, through the escape.
//
//chronos:schedule id=escaped cron="0\t0 2 * 13 ?"
func Escaped(ctx context.Context) error { return nil }

// SubSecond fires too often.
//
//chronos:schedule every=500ms
func SubSecond(ctx context.Context) error { return nil }

// WrongMisfire uses a simple-trigger policy on a cron trigger.
//
//chronos:schedule cron="0 0 * * * ?" misfire=fireNow
func WrongMisfire(ctx context.Context) error { return nil }

// Both sets cron and every.
//
//chronos:schedule cron="@daily" every=1h
func Both(ctx context.Context) error { return nil }

// Neither sets no trigger.
//
//chronos:schedule queue=q
func Neither(ctx context.Context) error { return nil }

// BadZone names no zone.
//
//chronos:schedule cron="@daily" tz=Mars/Olympus_Mons
func BadZone(ctx context.Context) error { return nil }

// DupA and DupB share an id.
//
//chronos:schedule id=dup cron="@daily"
func DupA(ctx context.Context) error { return nil }

// DupB is the second.
//
//chronos:schedule id=dup cron="@weekly"
func DupB(ctx context.Context) error { return nil }

// Typos has a misspelled key and an unknown group.
//
//chronos:schedule group=nightyl strat-delay=1s
func Typos(ctx context.Context) error { return nil }

// Conflicts sets keys that exclude each other or do not fit.
//
//chronos:schedule every=1m start-delay=1s start=2026-01-01T00:00:00Z repeat=3 forever=true tz=UTC
func Conflicts(ctx context.Context) error { return nil }

// Values has values of the wrong type.
//
//chronos:schedule cron="@daily" isolated=yes max-retry=-1 timeout=soon overlap=skipp
func Values(ctx context.Context) error { return nil }

// Twice has two schedules and no ids.
//
//chronos:schedule cron="@daily"
//chronos:schedule every=1h
func Twice(ctx context.Context) error { return nil }

// Nightly is a group.
//
//chronos:group id=nightly cron="@daily"
type Nightly struct{}

// Member sets trigger keys while joining a group.
//
//chronos:schedule group=nightly cron="@hourly" misfire=doNothing queue=ok
func Member(ctx context.Context) error { return nil }

// Syntax has an unterminated quote and a trailing comment.
//
//chronos:schedule cron="@daily" id=x // nightly
func Syntax(ctx context.Context) error { return nil }

// Unterminated never closes its quote.
//
//chronos:schedule cron="@daily
func Unterminated(ctx context.Context) error { return nil }

//chronos:schedule every=1h
var misplaced = 1

// Spaced is not scheduled: the directive has a space.
//
// chronos:schedule every=1h
func Spaced(ctx context.Context) error { return nil }

// Unknown uses a directive name that does not exist.
//
//chronos:shedule every=1h
func Unknown(ctx context.Context) error { return nil }

// GroupOnFunc puts a group on a function.
//
//chronos:group id=g2 every=1h
func GroupOnFunc(ctx context.Context) error { return nil }

// NoID is a group without an id, and Lonely one without jobs; the warning
// lands on Lonely.
//
//chronos:group every=1h
type NoID struct{}

// Lonely has no jobs.
//
//chronos:group id=lonely every=1h
type Lonely struct{}

// Backwards ends before it starts.
//
//chronos:schedule every=1h start=2026-06-01T00:00:00Z end=2026-01-01T00:00:00Z
func Backwards(ctx context.Context) error { return nil }

// IsolatedSkip asks for cluster-wide overlap control on a schedule that runs
// on every instance.
//
//chronos:schedule every=1m isolated=true overlap=skip
func IsolatedSkip(ctx context.Context) error { return nil }

// PastOnly names only a year that is over.
//
//chronos:schedule cron="0 0 12 1 1 ? 2020"
func PastOnly(ctx context.Context) error { return nil }

// WrongCase writes a key in upper case. It is read as every all the same,
// so the rest of the line is checked against it: tz does not fit an every=
// trigger, and the timeout is bad.
//
//chronos:schedule id=wrong-case Every=1m tz=UTC timeout=soon
func WrongCase(ctx context.Context) error { return nil }

// PolicyCase writes a misfire policy and an overlap mode in the wrong case.
//
//chronos:schedule id=policy-case cron="@daily" misfire=DoNothing overlap=BufferOne
func PolicyCase(ctx context.Context) error { return nil }

// Unquoted leaves the quotes off a cron expression: one error, not one per
// field.
//
//chronos:schedule id=unquoted cron=0 0 2 * * ? queue=q
func Unquoted(ctx context.Context) error { return nil }

// Overflow asks for more retries and repeats than an int32 holds.
//
//chronos:schedule id=overflow every=1m max-retry=99999999999999999999 repeat=2147483648
func Overflow(ctx context.Context) error { return nil }
