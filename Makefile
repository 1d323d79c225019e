# chronos: the two commands a new machine needs are `make demo` and `make test`.
GO      ?= go
PKGS    ?= ./...
# Race-enabled tests on two cores stay well under ten minutes.
TESTFLAGS ?= -race -timeout 9m

.PHONY: all demo test test-cluster lint generate bench bench-compare bench-sched vectors fuzz ensure-redis ensure-chromium help chaos

all: lint test

help:
	@echo "make demo      run the example (embedded demo-only Redis unless REDIS_URL is set)"
	@echo "make test      go test -race ./... against private redis-server processes"
	@echo "make test-cluster  the queue, scheduler and chaos tests on a 3-master Redis Cluster (docs/cluster.md)"
	@echo "make lint      gofmt check + go vet + chronosgen -check on examples/"
	@echo "make generate  go generate ./..."
	@echo "make bench     benchmarks (ours side by side with the incumbents)"
	@echo "make bench-compare  chronos vs asynq v0.26 on one private Redis (BENCHFLAGS=-rounds 5 ...)"
	@echo "make bench-sched    chronos vs asynq Scheduler, 10k schedules at 1,000 triggers/s (SCHEDFLAGS=-full ...)"
	@echo "make vectors   regenerate Quartz test vectors (needs Java + libquartz2-java)"
	@echo "make fuzz      run each fuzz target for FUZZTIME (default 30s)"
	@echo "make chaos     scheduler chaos test as processes for CHAOS_DURATION (default 10m)"

# DEMOFLAGS: -duration 24s, -instances 3, -quiet (see examples/demo).
DEMOFLAGS ?=
demo:
	$(GO) run ./examples/demo $(DEMOFLAGS)

ensure-redis:
	@./scripts/ensure-redis.sh

# Headless Chromium for the console's browser test (it skips without one, except in CI).
ensure-chromium:
	@./scripts/ensure-chromium.sh

# The console's browser test saves its screenshots, with an index.html, in
# $CHRONOS_ARTIFACTS: for make test, artifacts/console (gitignored) unless
# the environment says otherwise.
ARTIFACTS := $(or $(CHRONOS_ARTIFACTS),$(CURDIR)/artifacts/console)

test: ensure-redis ensure-chromium
	@rm -f "$(ARTIFACTS)/index.html"
	CHRONOS_ARTIFACTS="$(ARTIFACTS)" $(GO) test $(TESTFLAGS) $(PKGS)
	cd benchmarks && $(GO) vet ./... && $(GO) test -short ./...
	cd metrics/prometheus && $(GO) vet ./... && $(GO) test ./...
	@if [ -f "$(ARTIFACTS)/index.html" ]; then echo "console screenshots: $(ARTIFACTS)/index.html"; fi

# The queue and scheduler suites (./runtime), the bounded chaos test and
# the cluster-only tests (failovers, per-master spread) on Redis Clusters of
# three masters with a replica each: CHRONOS_TEST_CLUSTER=1 makes the test
# environments lend clusters from a pool instead of starting a server per
# test. Tests a cluster cannot run (one redis-server to kill, Sentinel)
# skip with their reason. See docs/cluster.md.
test-cluster: ensure-redis
	CHRONOS_TEST_CLUSTER=1 $(GO) test $(TESTFLAGS) ./runtime/ ./runtime/internal/chaos

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run ./cmd/chronosgen -check -diff ./examples/...

generate:
	$(GO) generate $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./runtime/...

# The side-by-side program is a nested module (benchmarks/go.mod), so the
# library never depends on asynq. See benchmarks/README.md.
BENCHFLAGS ?=
bench-compare: ensure-redis
	cd benchmarks && $(GO) run ./compare $(BENCHFLAGS)

# SCHEDFLAGS: -schedules 10000, -rate 1000, -window 30s, -rounds 1 (medians
# over rounds), -full (adds 100k), -only chronos|asynq, -fire-ahead 250ms.
# See benchmarks/README.md, "Scheduler comparison".
SCHEDFLAGS ?=
bench-sched: ensure-redis
	cd benchmarks && $(GO) run ./schedcompare $(SCHEDFLAGS)

vectors:
	./tools/quartzoracle/run.sh

# Each fuzz target runs for FUZZTIME; go test -fuzz takes one target at a time.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./runtime/cron
	$(GO) test -run '^$$' -fuzz '^FuzzDue$$' -fuzztime $(FUZZTIME) ./runtime/trigger
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./gen/directive
	$(GO) test -run '^$$' -fuzz '^FuzzCheckDirective$$' -fuzztime $(FUZZTIME) ./gen
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeMatchesEncodingJSON$$' -fuzztime $(FUZZTIME) ./runtime/internal/rdb
	$(GO) test -run '^$$' -fuzz '^FuzzEncodeMatchesEncodingJSON$$' -fuzztime $(FUZZTIME) ./runtime/internal/rdb

# The scheduler's chaos test, long version (the 25 s version runs in make test).
CHAOS_DURATION ?= 10m
chaos: ensure-redis
	$(GO) test -race -count=1 -v -run '^TestChaos$$' -timeout 60m ./runtime/internal/chaos -chaos.duration=$(CHAOS_DURATION)
