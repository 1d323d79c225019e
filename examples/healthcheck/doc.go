// Package healthcheck is a chronos example: the health checks of a service
// with many replicas, declared with //chronos: directives.
//
// Local checks this replica (goroutines, heap) every 5 seconds on every
// instance (isolated=true): each replica fires it for itself and runs it
// itself, whether or not it is the scheduler's leader.
//
// Cluster checks what all replicas share (here, Redis) every 2 seconds,
// once across the whole cluster: only the leader fires it, each trigger is
// enqueued exactly once, and when the leader goes away another instance
// takes over without a gap or a double. `make demo` watches this schedule.
//
// Run `go generate` in this directory after changing a directive; the
// generated chronos_gen.go is committed.
package healthcheck

//go:generate go tool chronosgen
