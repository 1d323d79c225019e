// Package signatures is a chronosgen golden case: handler shapes that
// cannot be registered.
package signatures

import (
	"context"
	"time"

	chronos "github.com/chronos-go/chronos/runtime"
)

//chronos:schedule every=1h
func NoContext(n int) error { return nil }

//chronos:schedule every=1h
func NoError(ctx context.Context) {}

//chronos:schedule every=1h
func Variadic(ctx context.Context, more ...string) error { return nil }

//chronos:schedule every=1h
func Generic[T any](ctx context.Context) error { return nil }

// Box is generic.
type Box[T any] struct{}

//chronos:schedule every=1h
func (b *Box[T]) Run(ctx context.Context) error { return nil }

//chronos:schedule every=1h
func TooMany(ctx context.Context) (int, string, error) { return 0, "", nil }

// Tick is not a struct.
type Tick time.Duration

// Kind implements chronos.TaskArgs.
func (Tick) Kind() string { return "signatures.tick" }

//chronos:schedule every=1h
func NotStruct(ctx context.Context, t *chronos.Task[Tick]) error { return nil }

// SharedArgs are taken by two handlers.
type SharedArgs struct{}

// Kind implements chronos.TaskArgs.
func (SharedArgs) Kind() string { return "signatures.shared" }

//chronos:schedule every=1h
func SharedA(ctx context.Context, t *chronos.Task[SharedArgs]) error { return nil }

//chronos:schedule every=1h
func SharedB(ctx context.Context, t *chronos.Task[SharedArgs]) error { return nil }

// CollideArgs is declared by hand, but chronosgen wants the name.
type CollideArgs struct{}

//chronos:schedule every=1h
func Collide(ctx context.Context) error { return nil }

//chronos:schedule every=1h
func Broken(ctx context.Context, x Undefined) error { return nil }

//chronos:schedule every=1h
func ChanResult(ctx context.Context) (chan int, error) { return nil, nil }

// sched would be shadowed by the entry point's parameter of that name.
//
//chronos:schedule every=1h
func sched(ctx context.Context) error { return nil }
