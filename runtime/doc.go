// Package chronos runs recurring jobs in services with many replicas: a task
// queue on Redis, a worker server, and a scheduler that enqueues each trigger
// exactly once across the cluster.
//
// Import it as
//
//	import chronos "github.com/chronos-go/chronos/runtime"
//
// The time engine (cron expressions, simple triggers and Quartz misfire
// policies) lives in the Redis-free packages [github.com/chronos-go/chronos/runtime/cron]
// and [github.com/chronos-go/chronos/runtime/trigger], which the generator
// uses at go generate time and the scheduler at run time.
package chronos
