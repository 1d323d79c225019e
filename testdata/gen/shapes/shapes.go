// Package shapes is a chronosgen golden case: every accepted handler shape
// and the names generated code must not shadow.
package shapes

import (
	"context"

	chronos "github.com/chronos-go/chronos/runtime"
	v2args "github.com/chronos-go/chronos/testdata/gen/shapes/argspkg"
)

// Ctx is an alias of context.Context; handlers may use it.
type Ctx = context.Context

// mailer is unexported: the generated code lives in this package, so it
// can still take one.
type mailer struct{}

// Send uses the alias and a value receiver.
//
//chronos:schedule every=1h
func (m mailer) Send(ctx Ctx) error { return nil }

// HTTPPoller's parameter name is httpPoller.
type HTTPPoller struct{}

// Poll takes args from another package and returns one of its types.
//
//chronos:schedule cron="*/5 * * * *"
func (p *HTTPPoller) Poll(ctx context.Context, t *chronos.Task[v2args.Import]) (v2args.Summary, error) {
	return v2args.Summary{}, nil
}

// Poll2 returns a slice of another package's type from a context-only
// handler, so the generated adapter has to name it.
//
//chronos:schedule every=2h
func (p *HTTPPoller) Poll2(ctx context.Context) ([]*v2args.Summary, error) { return nil, nil }

// jobs is a package-level name, so the Jobs receiver cannot be "jobs".
var jobs = 0

// Jobs is a receiver type.
type Jobs struct{}

// Run is an ordinary method.
//
//chronos:schedule every=3h
func (j *Jobs) Run(ctx context.Context) error { _ = jobs; return nil }

// Base has a method that Derived promotes; the directive stays on Base.
type Base struct{}

// Tick is declared on Base.
//
//chronos:schedule every=4h
func (Base) Tick(ctx context.Context) error { return nil }

// Derived embeds Base.
type Derived struct{ Base }

// fmt is a package-level name; the generated file must import package fmt
// under another name.
var fmt = "shadowed"
