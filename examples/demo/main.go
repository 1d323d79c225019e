// Command demo runs the healthcheck example as a three-instance cluster in
// one process and shows what chronos promises: every trigger of a
// cluster-once schedule runs exactly once, on whichever instance is free,
// and when the leader stops another instance takes over without a gap.
//
//	go run ./examples/demo             # or: make demo
//	REDIS_URL=redis://localhost:6379/15 go run ./examples/demo
//
// Without REDIS_URL the three instances share an embedded, in-process
// Redis emulation (miniredis). That is for this demo only: it is not a
// Redis server, has no persistence and does not implement every command
// (see README.md in this directory). With REDIS_URL they share that Redis
// instead; the demo writes under its own namespace there and deletes
// nothing else.
//
// It prints every run of a check (the trigger, the leader that fired it and
// the instance that ran it) and every leadership change, stops the leader
// gracefully halfway through, and exits after -duration with a summary.
// The exit status is 1 if a trigger ran twice, was missed, or no handoff
// was seen.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	var cfg config
	flag.DurationVar(&cfg.Duration, "duration", 24*time.Second, "how long the demo runs; the leader is stopped halfway")
	flag.IntVar(&cfg.Instances, "instances", 3, "number of instances in the cluster")
	flag.BoolVar(&cfg.Quiet, "quiet", false, "print only the summary")
	flag.Parse()
	cfg.RedisURL = os.Getenv("REDIS_URL")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(2)
	}
	if !sum.OK() {
		os.Exit(1)
	}
}
