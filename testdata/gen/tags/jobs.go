// Package tags is a chronosgen golden case: schedules as struct tags.
package tags

import (
	"context"

	chronos "github.com/chronos-go/chronos/runtime"
)

// SyncArgs are the arguments of Sync.
type SyncArgs struct{ Full bool }

// Kind implements chronos.TaskArgs.
func (SyncArgs) Kind() string { return "tags.sync" }

// Handler is a named handler func type.
type Handler func(context.Context) error

// Schedules keeps the schedules as data beside the handlers, and declares
// a group its fields can join.
//
//chronos:schedules
//chronos:group id=tagged-nightly cron="0 0 4 * * ?" misfire=fireOnceNow
type Schedules struct {
	Archive func(context.Context) error                          `chronos:"group=tagged-nightly id=archive queue=slow"`
	Report  Handler                                              `chronos:"cron='0 0 2 * * ?' tz=Asia/Seoul misfire=doNothing"`
	Sync    func(context.Context, *chronos.Task[SyncArgs]) error `json:"-" chronos:"every=5m queue=sync id=sync"`
	Notes   string                                               // not a handler: no tag, ignored
	Helper  func(context.Context) error                          // no tag: not scheduled
}
