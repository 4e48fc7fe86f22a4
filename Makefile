# circuitgen's tasks. `make test` is what CI runs (through .ci/run).
GO ?= go

.PHONY: all generate check lint cross api test test-next rehearse demo bench fuzz soak nemesis nemesis-fleet fleet fleet-idle

all: check lint test

# Regenerates every guarded client in the repository (every module of go.work).
generate:
	$(GO) generate $$(bash .ci/packages)

# Fails on unformatted files, vet findings, untidy modules, a release
# shape internal/release check refuses (a zero pseudo-version, a replace
# line in a command module), stale generated files, and an exported API
# that is not what api/ records. Each phase prints its name and wall time
# (.ci/phase). make lint adds staticcheck and the other platforms.
check:
	@bash .ci/phase gofmt bash -c 'out=$$(gofmt -l $$(git ls-files "*.go" | grep -v "^testdata/golden/stale/")) || exit 1; \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi'
	@# Listing the packages loads the modules they import, downloading what
	@# the module cache lacks: on empty caches some 15 s that no phase
	@# counted, spent where the vet line below expanded the list.
	@bash .ci/phase modules bash -c 'bash .ci/packages >/dev/null'
	@# vet builds with -race so that the tests, which run with -race, reuse
	@# what it compiled: on empty caches the tests of runtime/circuit then
	@# build in 14 s instead of 52 s.
	@bash .ci/phase vet $(GO) vet -race $$(bash .ci/packages)
	@bash .ci/phase tidy bash .ci/tidy
	@# The phases after vet build with -race too, so that they reuse what it
	@# compiled: stale loads every package's export data (on empty caches
	@# 0.4 s instead of 19 s for runtime/circuit's), and release-check and
	@# api compiled their part of the standard library again without it
	@# (15 s of CPU).
	@GOWORK=off GOFLAGS=-race bash .ci/phase release-check $(GO) run -C internal/release . check
	@GOFLAGS=-race bash .ci/phase stale bash .ci/stale
	@GOFLAGS=-race GO=$(GO) bash .ci/phase api bash .ci/api

# staticcheck's findings, and packages that do not build or vet on darwin
# or windows. CI runs it after make test; on empty caches it takes as long
# as the tests (each platform compiles every dependency anew).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint: cross
	@bash .ci/phase staticcheck $(GO) run $(STATICCHECK) $$(bash .ci/packages)

# Rewrites api/, the record of every runtime package's and the generator's
# exported API, after a change made on purpose; review its diff.
api:
	GO=$(GO) bash .ci/api -w

# Vets every package, test files included, for darwin and windows (which
# type-checks it against its dependencies compiled for them).
cross:
	@GO=$(GO) bash .ci/phase cross bash .ci/cross

# The full test suite, with private redis-server and PostgreSQL instances
# when they are installed (bash .ci/run installs them).
test: check
	bash .ci/test

# The tests once more on the next Go release, fetched from the module proxy,
# without the race detector, then every benchmark once (CI runs it after
# make test).
GO_NEXT ?= go1.27.3
test-next:
	GOTOOLCHAIN=$(GO_NEXT) bash .ci/test -tests-only

# A release rehearsal of HEAD (not of uncommitted changes): every module
# tagged REHEARSE_VERSION (v0.1.0) in a scratch clone and served from a
# file-based module proxy, then the README's install commands, generate,
# build, vet and test in fresh modules outside the repository. CI runs it
# after make test, whose -race builds it reuses. It prints every command
# with its output, result and time.
rehearse:
	@bash .ci/phase rehearse bash .ci/rehearse

# The billing demo: a guarded client, a failing provider, several processes
# sharing one circuit.
demo:
	$(GO) run ./examples/billing/cmd/billing-demo

# Benchmarks against the peers, summarised with benchstat.
bench:
	bash bench/run.sh

# Runs every fuzz target for FUZZTIME each (default 30s).
FUZZTIME ?= 30s
fuzz:
	@for pkg in $$(bash .ci/packages); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# The crash soak (1,000 SIGKILLs of worker processes), 100,000 circuits under
# a 1,024-fd limit, and the linearizability
# check at full size (8 processes, 10,000 operations); minutes. SOAK_KILLS
# overrides the number of kills.
SOAK_KILLS ?= 1000
soak:
	CIRCUITGEN_SOAK_KILLS=$(SOAK_KILLS) $(GO) test -count=1 -v -timeout 60m \
	  -run '^(TestCrashSoak|TestLinearizability|TestManyCircuitsFewFDs)$$' ./runtime/filestore/ -soak

# The nemesis test at length: worker processes make guarded calls while
# faults are injected at random (fd exhaustion, a full tmpfs, a damaged
# index, removed records, permission flips, SIGKILL,
# SIGSTOP), then the history is checked. Needs root for every fault.
# NEMESIS sets how long the faults go on (CI runs 20s).
NEMESIS ?= 10m
NEMESIS_FAULTS ?= all
nemesis:
	CIRCUITGEN_NEMESIS=$(NEMESIS) CIRCUITGEN_NEMESIS_FAULTS=$(NEMESIS_FAULTS) $(GO) test -count=1 -v -timeout 60m \
	  -run '^TestNemesis$$' ./runtime/filestore/

# The fleet nemesis at length: cached worker processes on Redis and
# PostgreSQL behind a fault proxy (delay ramps, one-way blackholes, resets,
# pauses), server restarts with and without persistence, FLUSHALL, the
# notify trigger dropped and disabled, SIGSTOP of workers; NEMESIS a store
# (CI runs 20s). It starts a private PostgreSQL and redis-servers.
nemesis-fleet:
	bash -c '. .ci/services.sh && trap stop_services EXIT && start_postgres >/dev/null && \
	  CIRCUITGEN_FLEET_NEMESIS=$(NEMESIS) $(GO) test -count=1 -v -timeout 60m -run "^TestFleetNemesis$$" ./internal/fleetnemesis/'

# The fleet simulation at full size: FLEET_K processes ×
# FLEET_G goroutines on one hot circuit against a private redis-server,
# cache off and on; prints the Markdown report (BENCHMARKS.md) and writes
# bench/fleet.svg. Its short form is TestFleet in bench/fleet.
FLEET_K ?= 8
FLEET_G ?= 4
fleet:
	$(GO) build -o bench/out/fleet ./bench/fleet
	bench/out/fleet -k $(FLEET_K) -g $(FLEET_G) -steady 5s -openings 50 -svg bench/fleet.svg

# The idle fleet: FLEET_IDLE_N simulated processes (goroutines, each with its
# own store and connections) with copies on and no calls, against a private
# redis-server and PostgreSQL, for FLEET_IDLE each; prints the servers'
# commands or transactions a second, connections and CPU (BENCHMARKS.md).
FLEET_IDLE_N ?= 10,100,1000
FLEET_IDLE ?= 10s
FLEET_IDLE_STORES ?= redis,postgres
fleet-idle:
	$(GO) build -o bench/out/fleetidle ./bench/fleetidle
	bash -c 'ulimit -n 20000 2>/dev/null; . .ci/services.sh && trap stop_services EXIT && \
	  start_redis >/dev/null && CIRCUITGEN_PG_MAX_CONNECTIONS=2500 start_postgres >/dev/null && \
	  bench/out/fleetidle -n $(FLEET_IDLE_N) -idle $(FLEET_IDLE) -store $(FLEET_IDLE_STORES)'
