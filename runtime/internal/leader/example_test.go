package leader_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/leader"
	"github.com/redis/go-redis/v9"
)

// An instance takes part in the election for as long as its context lives,
// and checks its term twice before acting: locally with Trusted, and inside
// Redis with the fence in the same script as the write.
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	e := leader.New(rdb, leader.Config{
		TTL: 5 * time.Second,
		OnChange: func(c leader.Change) {
			log.Printf("leader=%v epoch=%d err=%v", c.Leader, c.Term.Epoch, c.Err)
		},
	})
	go func() { _ = e.Run(ctx) }() // resigns when ctx ends

	fire := leader.FenceScript(`redis.call('HSET', KEYS[2], 'last_fired', ARGV[2]) return 1`)
	term, ok := e.Current()
	if !ok || !term.Trusted(time.Now()) {
		return // not leader: do nothing
	}
	err := leader.CheckFence(fire.Run(ctx, rdb,
		leader.FenceKeys(e.Keys(), "{chronos}:sched:report"),
		leader.FenceArgs(term, time.Now().Unix())).Err())
	if errors.Is(err, leader.ErrFenced) {
		return // the term ended between the two checks; nothing was written
	}
}
