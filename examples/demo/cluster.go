package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/chronos-go/chronos/examples/healthcheck"
	chronos "github.com/chronos-go/chronos/runtime"
)

// instance is one member of the demo cluster: what one replica of a
// service runs, with its own Redis client, scheduler and server.
type instance struct {
	id      string
	rdb     *redis.Client
	sched   *chronos.Scheduler
	srv     *chronos.Server
	stopped bool
}

// startInstance starts an instance named id in namespace ns, reporting the
// checks it runs to rec.
func startInstance(ctx context.Context, b *backend, ns, id string, rec *recorder, log *slog.Logger) (*instance, error) {
	in := &instance{id: id, rdb: b.newClient()}
	in.srv = chronos.NewServer(in.rdb, chronos.ServerConfig{Namespace: ns, Logger: log})
	in.sched = chronos.NewScheduler(in.rdb, chronos.SchedulerConfig{Namespace: ns, InstanceID: id, Logger: log, Server: in.srv})
	mux := chronos.NewMux()
	monitor := &healthcheck.Monitor{
		Instance: id,
		Ping:     func(ctx context.Context) error { return in.rdb.Ping(ctx).Err() },
		Report:   rec.record,
	}
	if err := healthcheck.RegisterChronosJobs(in.sched, mux, monitor); err != nil {
		in.rdb.Close()
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	if err := in.srv.Start(ctx, mux); err != nil {
		in.rdb.Close()
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	if err := in.sched.Start(ctx); err != nil {
		_ = in.srv.Shutdown(context.Background())
		in.rdb.Close()
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	return in, nil
}

// stop shuts the instance down as a replica does on SIGTERM: the scheduler
// first (a leader resigns, so another instance takes over at once), then
// the server, which finishes the checks it is running.
func (in *instance) stop(ctx context.Context) error {
	if in.stopped {
		return nil
	}
	in.stopped = true
	err := errors.Join(in.sched.Shutdown(ctx), in.srv.Shutdown(ctx))
	return errors.Join(err, in.rdb.Close())
}
