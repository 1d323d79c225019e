// Command chronos is the operator CLI of chronos: it lists and inspects the
// schedules of a namespace, pauses, resumes, triggers and backfills them,
// names the scheduler leader and the live instances, and lists and requeues
// dead tasks and run records. Everything it reads and changes is stored in
// Redis, so it acts on the whole cluster from any machine that reaches it.
//
// Usage:
//
//	chronos [-redis URL] [-ns NAMESPACE] [-json] [-timeout D] COMMAND [ARGS]
//
// Commands:
//
//	schedules                    list every schedule
//	schedule ID                  one schedule, its next 5 fire times and last 10 firings
//	health [-o text|json]        late and failing schedules; exit status 1 if any
//	pause ID [-job NAME] [-note TEXT] [-until RFC3339|DURATION] [-who NAME]
//	resume ID [-job NAME]
//	trigger ID [-who NAME]       fire once now, outside the trigger
//	backfill ID -from RFC3339 -to RFC3339 [-who NAME]
//	leader                       the scheduler leader and its fencing epoch
//	instances                    the live scheduler instances
//	dead [-n N]                  dead tasks, most recent first
//	requeue TASK_ID              move a dead task back to its queue
//	runs KIND [-n N]             run records of a task kind, most recent first
//
// The Redis URL defaults to $REDIS_URL, then redis://localhost:6379/0; the
// namespace to "chronos". Global flags may also follow the command. Output
// is an aligned table (times in UTC, RFC 3339) or, with -json, JSON.
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
