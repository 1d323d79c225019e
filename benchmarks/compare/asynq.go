package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// asynqSystem runs asynq v0.26 with its default configuration, except for
// the log level and, when checkInterval is set, Config.TaskCheckInterval:
// how long its processor sleeps after finding every queue empty (1 s by
// default; it sleeps a random time in [interval/2, 1.5×interval)).
type asynqSystem struct {
	rdb           redis.UniversalClient
	client        *asynq.Client
	checkInterval time.Duration // 0: asynq's default
}

func newAsynq(rdb redis.UniversalClient, checkInterval time.Duration) *asynqSystem {
	return &asynqSystem{rdb: rdb, client: asynq.NewClientFromRedisClient(rdb), checkInterval: checkInterval}
}

func (s *asynqSystem) name() string {
	if s.checkInterval > 0 {
		return fmt.Sprintf("asynq TaskCheckInterval=%v", s.checkInterval)
	}
	return "asynq"
}

// enqueue encodes a as JSON, as an asynq user with a struct payload does,
// so both systems carry identical bytes.
func (s *asynqSystem) enqueue(ctx context.Context, a benchArgs) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	_, err = s.client.EnqueueContext(ctx, asynq.NewTask(taskKind, b))
	return err
}

func (s *asynqSystem) serve(_ context.Context, concurrency int, handle func(benchArgs)) (func(context.Context) error, error) {
	mux := asynq.NewServeMux()
	mux.HandleFunc(taskKind, func(_ context.Context, t *asynq.Task) error {
		var a benchArgs
		if err := json.Unmarshal(t.Payload(), &a); err != nil {
			return fmt.Errorf("decode payload: %w: %w", err, asynq.SkipRetry)
		}
		handle(a)
		return nil
	})
	srv := asynq.NewServerFromRedisClient(s.rdb, asynq.Config{
		Concurrency:       concurrency,
		TaskCheckInterval: s.checkInterval,
		LogLevel:          asynq.ErrorLevel,
	})
	if err := srv.Start(mux); err != nil {
		return nil, err
	}
	return func(context.Context) error { srv.Shutdown(); return nil }, nil
}
