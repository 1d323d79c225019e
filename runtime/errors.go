package chronos

import (
	"errors"
	"fmt"

	"github.com/chronos-go/chronos/runtime/internal/keyspace"
	"github.com/chronos-go/chronos/runtime/internal/rdb"
)

// ErrSkipRetry, returned by a handler or wrapped in the error it returns,
// sends the task straight to the dead letters instead of retrying it. Use it
// for failures that no retry can fix.
var ErrSkipRetry = errors.New("chronos: skip retry")

// ErrLeaseLost is the cause of a handler's context cancellation when the
// server could not renew the task's lease in time and another worker has
// taken the task over. The handler should stop; its outcome is discarded.
var ErrLeaseLost = errors.New("chronos: task lease lost to another worker")

// ErrServerShutdown is the cause of a handler's context cancellation when
// Shutdown gave up waiting for it. When the handler returns, its task goes
// back to the queue for another worker, without counting as a failed
// attempt, whatever the handler returned.
var ErrServerShutdown = errors.New("chronos: server shut down")

// ErrServerStarted is returned by Start on a server that was already started.
var ErrServerStarted = errors.New("chronos: server already started")

// ErrServerNotStarted is returned by Shutdown on a server that was never started.
var ErrServerNotStarted = errors.New("chronos: server not started")

// ErrTaskNotFound is returned by Inspector methods when the task does not exist.
var ErrTaskNotFound = errors.New("chronos: task not found")

// ErrNoHandler is the dead-letter reason of a task whose kind has no
// handler on the server that took it.
var ErrNoHandler = errors.New("chronos: no handler for task kind")

// ErrBadPayload is the dead-letter reason of a task whose args do not
// decode into the handler's type.
var ErrBadPayload = errors.New("chronos: task args do not decode")

// ErrDeadlineExceeded is the dead-letter reason of a task whose deadline
// (WithDeadline) passed before it could succeed.
var ErrDeadlineExceeded = errors.New("chronos: task deadline exceeded")

// ErrTooManyDeliveries is the dead-letter reason of a task whose workers
// disappeared (crashed, or lost their leases) MaxDeliveries times in a row
// without finishing it: a poison task that must not loop forever.
var ErrTooManyDeliveries = errors.New("chronos: task delivered too many times without finishing")

// ErrLayoutMismatch is wrapped by the error of a Client, Server, Scheduler
// or Inspector configured with a partition count (WithPartitions,
// ServerConfig.Partitions, SchedulerConfig.Partitions) that differs from
// the one stored for the namespace: the count is fixed when a namespace is
// created. Leave the setting at 0 to use the stored count.
var ErrLayoutMismatch = keyspace.ErrLayoutMismatch

// ErrNotReplicated is wrapped by the error of an enqueue that fewer
// replicas than WithReplicas asks for acknowledged in time: the task is
// enqueued on the master, but a failover before it reaches a replica would
// lose it.
var ErrNotReplicated = rdb.ErrNotReplicated

// PanicError is the error a handler's panic is turned into. The task is
// retried like any failure.
type PanicError struct {
	Value any    // the value passed to panic
	Stack string // the goroutine's stack at the panic
}

func (e *PanicError) Error() string {
	return "chronos: handler panicked: " + anyString(e.Value)
}

func asPanic(err error, target **PanicError) bool { return errors.As(err, target) }

// anyString is the text of a panic value.
func anyString(v any) string {
	if err, ok := v.(error); ok {
		return err.Error()
	}
	return fmt.Sprint(v)
}
