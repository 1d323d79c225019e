package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/redis/go-redis/v9"

	chronos "github.com/chronos-go/chronos/runtime"
)

// chronosSystem runs the chronos queue with its default configuration, apart
// from the logger: it logs errors only, as the asynq server does at
// asynq.ErrorLevel, so the server's own Info records (start, stop) stay out
// of the output. (Task success records are at Debug by default anyway.)
//
// With perProducer, every producer goroutine gets a Client of its own, so
// no two enqueues share a round trip.
type chronosSystem struct {
	rdb         redis.UniversalClient
	client      *chronos.Client
	perProducer bool
}

func newChronos(rdb redis.UniversalClient, perProducer bool) *chronosSystem {
	return &chronosSystem{rdb: rdb, client: chronos.NewClient(rdb), perProducer: perProducer}
}

func (s *chronosSystem) name() string { return "chronos" }

// producer returns the system a producer goroutine enqueues through.
func (s *chronosSystem) producer() system {
	if !s.perProducer {
		return s
	}
	return &chronosSystem{rdb: s.rdb, client: chronos.NewClient(s.rdb)}
}

func (s *chronosSystem) enqueue(ctx context.Context, a benchArgs) error {
	_, err := s.client.Enqueue(ctx, a)
	return err
}

func (s *chronosSystem) serve(ctx context.Context, concurrency int, handle func(benchArgs)) (func(context.Context) error, error) {
	mux := chronos.NewMux()
	chronos.AddHandler(mux, func(_ context.Context, t *chronos.Task[benchArgs]) error {
		handle(t.Args)
		return nil
	})
	srv := chronos.NewServer(s.rdb, chronos.ServerConfig{
		Concurrency: concurrency,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err := srv.Start(ctx, mux); err != nil {
		return nil, err
	}
	return srv.Shutdown, nil
}
