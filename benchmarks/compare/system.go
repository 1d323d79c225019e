package main

import (
	"context"
	"strings"
)

// system is one task queue under test. Both implementations get the same
// Redis, the same payload and the same kind of handler: one that decodes
// the payload into benchArgs and reports it, so that each side pays for the
// typed handler a real user writes.
type system interface {
	// name labels the system in the report.
	name() string
	// enqueue adds one task carrying a, to be run as soon as possible.
	enqueue(ctx context.Context, a benchArgs) error
	// serve starts a worker server with concurrency handlers that call
	// handle for each task they run. The returned function stops it and
	// waits for it to finish.
	serve(ctx context.Context, concurrency int, handle func(benchArgs)) (stop func(context.Context) error, err error)
}

// benchArgs is the payload of every benchmark task. Seq identifies the task
// within a phase; Pad brings the encoded payload to the configured size.
type benchArgs struct {
	Seq int    `json:"seq"`
	Pad string `json:"pad"`
}

// Kind names the task kind for chronos; asynq uses the same string as its
// task type.
func (benchArgs) Kind() string { return taskKind }

const taskKind = "bench"

// padFor returns a Pad that makes the JSON encoding of benchArgs about size
// bytes for a six-digit Seq.
func padFor(size int) string {
	const overhead = len(`{"seq":123456,"pad":""}`)
	return strings.Repeat("x", max(size-overhead, 0))
}
