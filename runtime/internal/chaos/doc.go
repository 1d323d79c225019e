// Package chaos holds the scheduler's chaos test: several scheduler
// instances as separate OS processes (the test binary re-executing itself)
// fire per-second schedules, spread over the namespace's partitions, into
// one private redis-server while the test SIGKILLs the leader of a
// schedule's partition, SIGTERMs instances and restarts them, SIGSTOPs a
// leader past its lease and resumes it, and restarts Redis. Afterwards it
// reads every enqueued task and checks that no trigger was enqueued twice,
// none went missing that the misfire policy does not allow, and the
// partitions of a crashed leader were taken over within LeaderTTL + 1s.
// With CHRONOS_TEST_LAYOUT=1 it runs in layout 1, the single partition of
// versions before partitions. With CHRONOS_TEST_CLUSTER=1 (make
// test-cluster) Redis is a cluster of three masters with a replica each,
// with AOF: the Redis restart kills the master of a partition and starts
// it again within the node timeout, and a graceful CLUSTER FAILOVER of
// another partition's master is added at three quarters of the run.
//
// The same processes show that a SIGKILLed instance's partitions, and only
// those, move within LeaderTTL + 1s, and that a SIGTERMed one hands its
// partitions over within milliseconds with no trigger missed or doubled
// (partitions_test.go).
//
// The bounded run (about 25 s) is part of go test; the long one is
//
//	go test -race -run TestChaos -timeout 30m ./runtime/internal/chaos -chaos.duration=10m
//
// or make chaos (CHAOS_DURATION=10m). The package has no API.
package chaos
