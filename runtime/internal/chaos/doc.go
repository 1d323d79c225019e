// Package chaos holds the scheduler's chaos test: several scheduler
// instances as separate OS processes (the test binary re-executing itself)
// fire per-second schedules into one private redis-server while the test
// SIGKILLs the leader, SIGTERMs instances and restarts them, SIGSTOPs the
// leader past its lease and resumes it, and restarts Redis. Afterwards it
// reads every enqueued task and checks that no trigger was enqueued twice,
// none went missing that the misfire policy does not allow, and crashed
// leaders were replaced within LeaderTTL + 1s.
//
// The bounded run (about 25 s) is part of go test; the long one is
//
//	go test -race -run TestChaos -timeout 30m ./runtime/internal/chaos -chaos.duration=10m
//
// or make chaos (CHAOS_DURATION=10m). The package has no API.
package chaos
