package schedstore_test

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/chronos-go/chronos/runtime/internal/schedstore"
	"github.com/redis/go-redis/v9"
)

// Every instance heartbeats and registers what its code declares; the
// leader sweeps the registry and fires from it.
func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	store := schedstore.New(rdb, schedstore.Config{})

	host, _ := os.Hostname()
	me := schedstore.Instance{ID: "api-7f9c", Host: host, PID: os.Getpid(), Version: "v1.4.2", Started: time.Now()}
	if _, err := store.Heartbeat(ctx, me); err != nil { // then every InstanceTTL/3
		log.Fatal(err)
	}
	res, err := store.Register(ctx, me.Declarer(), []schedstore.Definition{{
		ID: "billing.Invoices.Nightly", Kind: "cron", Spec: "0 0 2 * * ?", Zone: "Europe/Paris",
		Jobs:   []schedstore.Job{{Name: "main", Kind: "invoices.generate", Payload: []byte(`{}`)}},
		Source: "billing/invoices.go:41",
	}})
	if err != nil {
		log.Fatal(err)
	}
	for _, id := range res.Conflicts {
		log.Printf("schedule %s: a newer version's definition is in force", id)
	}

	// On the leader, about once per InstanceTTL:
	if _, err := store.Sweep(ctx); err != nil {
		log.Print(err)
	}
	all, _ := store.List(ctx)
	for _, s := range all {
		if !s.Paused(time.Now()) {
			log.Printf("%s fires next at %v", s.ID, s.State.Next)
		}
	}
}
