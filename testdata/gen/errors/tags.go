package errors

import "context"

// Tagged holds schedules as struct tags; their errors point into the tag.
//
//chronos:schedules
type Tagged struct {
	BadCron func(context.Context) error `chronos:"cron='0 0 2 * * 9' tz=UTC"`
	NotFunc string                      `chronos:"every=1h"`
	A, B    func(context.Context) error `chronos:"every=1h"`
	Typo    func(context.Context) error `chronos:"evry=1h"`
	Escaped func(context.Context) error "chronos:\"every=1x\""
	Fine    func(context.Context) error `json:"fine" chronos:"every=1h id=fine"`
	Ignored func(context.Context) error
}

// NotAStruct cannot hold schedules.
//
//chronos:schedules
type NotAStruct int

// UnquotedTag leaves the quotes off a cron expression in a tag: the fix is
// shown single-quoted, as a tag writes it.
//
//chronos:schedules
type UnquotedTag struct {
	Report func(context.Context) error `chronos:"cron=0 0 2 * * ? tz=UTC"`
}
