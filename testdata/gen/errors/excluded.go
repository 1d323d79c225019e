//go:build never

package errors

import "context"

// Excluded is in a file no build includes.
//
//chronos:schedule every=1h
func Excluded(ctx context.Context) error { return nil }
