// Package typeerror is a chronosgen golden case: the package calls the
// generated code, so it does not type-check without it; generation must
// still work (the error lies outside every handler signature).
package typeerror

import (
	"context"

	chronos "github.com/chronos-go/chronos/runtime"
)

// Ping pings.
//
//chronos:schedule every=1m
func Ping(ctx context.Context) error { return nil }

// Setup wires the package's schedules.
func Setup(s *chronos.Scheduler, m *chronos.Mux) error { return RegisterChronosJobs(s, m) }
