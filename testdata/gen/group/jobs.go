package group

import (
	"context"
	"errors"
)

// Exports holds the export handlers.
//
//chronos:group id=warm every=10m start-delay=1m
type Exports struct{}

// Users exports users.
//
//chronos:schedule group=nightly id=export-users max-retry=1
func (e *Exports) Users(ctx context.Context) error { return nil }

// Orders exports orders.
//
//chronos:schedule group=nightly id=export-orders
//chronos:schedule group=warm id=warm-orders
func (e *Exports) Orders(ctx context.Context) error { return errors.New("todo") }

// Cleanup runs last, alone.
//
//chronos:schedule cron="0 30 3 * * ?" tz=Europe/Paris
func Cleanup(ctx context.Context) error { return nil }
