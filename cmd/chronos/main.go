// Command chronos is the operator CLI of chronos: it lists and inspects the
// schedules of a namespace, pauses, resumes, triggers and backfills them,
// retires and deletes the schedules the code no longer declares, names the
// scheduler leader and the live instances, shows and pauses the
// queues, lists, requeues and deletes dead tasks, lists run records,
// migrates a namespace of versions before partitions to partitions, and
// serves the web console. Everything it reads and changes is stored in
// Redis, so it acts on the whole cluster from any machine that reaches it.
//
// Usage:
//
//	chronos [-redis URL] [-cluster | -sentinel-master NAME] [-tls-ca FILE] [-tls-cert FILE -tls-key FILE]
//	        [-ns NAMESPACE] [-json] [-timeout D] COMMAND [ARGS]
//
// Commands:
//
//	schedules [-all]             list every schedule in force (-all: retired ones too)
//	schedule ID                  one schedule, its pending requests, next 5 fire times and last 10 firings
//	health [-o text|json]        late and failing schedules; exit status 1 if any
//	pause ID [-job NAME] [-note TEXT] [-until RFC3339|DURATION] [-who NAME]
//	resume ID [-job NAME]
//	trigger ID [-who NAME]       fire once now, outside the trigger
//	backfill ID -from RFC3339 -to RFC3339 [-max N] [-dry-run] [-who NAME]
//	clear-overlap ID [-job NAME] forget the runs the overlap policy counts, once known gone
//	retire ID [-who NAME]        stop a schedule no live instance declares, keeping its state
//	delete-schedule ID -yes      delete a schedule no live instance declares, with its state and history
//	leader                       the scheduler leader and its fencing epoch
//	instances                    the live scheduler instances
//	queues                       every queue: ready, running, delayed, dead, paused, recent runs
//	queue pause|resume QUEUE     stop or restart the servers' taking of a queue's tasks
//	dead [-n N]                  dead tasks, most recent first
//	requeue TASK_ID              move a dead task back to its queue
//	delete TASK_ID -yes          delete a dead task for good
//	runs ID|KIND [-n N]          run records of a schedule's tasks or of a task kind, most recent first
//	migrate [-partitions N] [-force] [-dry-run]
//	                             move a namespace of versions before partitions to N partitions (default 12)
//	web [-addr HOST:PORT] ...    serve the web console (docs/console.md)
//
// The Redis URL defaults to $REDIS_URL, then redis://localhost:6379/0. The
// URL forms are go-redis's: redis://HOST:PORT for one server (rediss://
// for TLS); with ?addr=HOST:PORT (more nodes) or -cluster, the nodes of a
// Redis Cluster; with ?master_name=NAME or -sentinel-master NAME, the
// sentinels of a Sentinel deployment. -tls-ca trusts a private CA and
// -tls-cert/-tls-key present a client certificate. Passwords are never
// printed.
//
// The namespace defaults to "chronos"; a namespace that holds nothing is
// an error, not an empty listing. Global flags may also follow the
// command. Output is an aligned table (times in UTC, RFC 3339) or, with
// -json, JSON. Errors are one line naming the Redis and, where one
// applies, the fix.
//
// Exit status: 0 success, 1 the operation failed (not found, Redis error),
// 2 usage error. See docs/cli.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"
)

func main() {
	// The Redis client logs dial failures on its own; the same failure
	// reaches run as an error, and stderr is kept to one line per error.
	redis.SetLogger(silent{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// silent is a Redis client logger that drops everything.
type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}
