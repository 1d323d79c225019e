// Package basic is a chronosgen golden case: methods and functions, cron
// and simple triggers, every task option.
package basic

//go:generate go run github.com/chronos-go/chronos/cmd/chronosgen

import (
	"context"

	chronos "github.com/chronos-go/chronos/runtime"
)

// Jobs holds the handlers and what they need.
type Jobs struct{}

// DailyReport mails yesterday's report.
//
//chronos:schedule cron="0 0 2 * * ?" tz="Asia/Seoul" misfire=doNothing isolated=false
func (j *Jobs) DailyReport(ctx context.Context) error { return nil }

// HealthCheckArgs are the arguments of HealthCheck tasks.
type HealthCheckArgs struct{ Target string }

// Kind implements chronos.TaskArgs.
func (HealthCheckArgs) Kind() string { return "basic.health-check" }

// HealthCheck probes a dependency.
//
//chronos:schedule every=30s queue=critical max-retry=3 late-after=2m failing-after=5
func (j *Jobs) HealthCheck(ctx context.Context, t *chronos.Task[HealthCheckArgs]) error { return nil }

// Warmup runs twice: ten warm-up passes after start, and hourly.
//
//chronos:schedule id=warmup-burst every=30s start-delay=10s repeat=9 misfire=rescheduleNextWithRemainingCount
//chronos:schedule id=warmup-hourly cron=`0 0 * * * ?` dst=shiftGap overlap=skip timeout=90s process-in=1m
func (j Jobs) Warmup(ctx context.Context) error { return nil }

// Stats are what CountUsers reports.
type Stats struct{ Users int }

// CountUsers returns a result, stored with the run record.
//
//chronos:schedule cron="@hourly" id=count-users
func CountUsers(ctx context.Context) (Stats, error) { return Stats{}, nil }

// PurgeArgs select what to purge.
type PurgeArgs struct{ Days int }

// Kind implements chronos.TaskArgs.
func (*PurgeArgs) Kind() string { return "basic.purge" }

// Purge takes pointer args and returns a result.
//
//chronos:schedule every=1h start=2026-01-01T00:00:00+09:00 end="2027-01-01T00:00:00Z" forever=true
func Purge(ctx context.Context, t *chronos.Task[*PurgeArgs]) (map[string]int, error) { return nil, nil }
