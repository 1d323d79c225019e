package a

import "context"

// Good is fine.
//
//chronos:schedule cron="0 0 2 * * ?" tz=Asia/Seoul
func Good(ctx context.Context) error { return nil }

// BadCron has a day-of-week out of range.
//
// want +2 "bad cron expression: day-of-week 8 is out of range"
//
//chronos:schedule id=bad cron="0 0 2 * * 8"
func BadCron(ctx context.Context) error { return nil }

// Typo misspells a key.
//
// want +2 `unknown key "evry"; did you mean "every"\?`
//
//chronos:schedule evry=1h
func Typo(ctx context.Context) error { return nil }

// want +3 "handler NoContext has type func\\(n int\\) error"
//
//chronos:schedule every=1h
func NoContext(n int) error { return nil }
