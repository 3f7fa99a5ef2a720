# Couchette: `make run` starts the gateway with the Todo config; `make test` runs every test.
# Both install the Debian packages the build needs first, so they work on a fresh machine.

SWIFT ?= swift
CONFIG ?= examples/todo/sync-gateway-config.json
DEBIAN_PACKAGES := libsqlite3-dev libicu-dev libedit-dev libjavascriptcoregtk-4.1-dev libssl-dev libcrypt-dev zlib1g-dev pkg-config python3-venv curl \
	postgresql nginx openssl chromium chromium-driver firefox-esr tmux
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test test-postgres test-postgres-all bench bench-scale fanout-floor build deps oracles fuzz soak todo clean

## Install any missing Debian packages the build needs.
deps:
	@missing=""; \
	for package in $(DEBIAN_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "Installing:$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

## Install the test oracles from PyPI: a real SQLCipher 4 (`sqlcipher3-binary`) in .build/sqlcipher-oracle and a
## third-party BLIP client (`pythonblip`) in .build/pythonblip-oracle. The interop tests make them themselves when
## they can; in CI (CI=true) they fail without them.
oracles: deps
	@[ -x .build/sqlcipher-oracle/bin/python ] || python3 -m venv .build/sqlcipher-oracle
	@.build/sqlcipher-oracle/bin/python -c "import sqlcipher3" 2>/dev/null || \
		.build/sqlcipher-oracle/bin/python -m pip install --quiet sqlcipher3-binary
	@.build/sqlcipher-oracle/bin/python -c "import sqlcipher3; print('SQLCipher oracle:', sqlcipher3.sqlite_version)"
	@[ -x .build/pythonblip-oracle/bin/python ] || python3 -m venv .build/pythonblip-oracle
	@.build/pythonblip-oracle/bin/python -c "import pythonblip.replicator, websockets; assert int(websockets.__version__.split('.')[0]) < 14" 2>/dev/null || \
		.build/pythonblip-oracle/bin/python -m pip install --quiet pythonblip "websockets<14"
	@.build/pythonblip-oracle/bin/python -c "import pythonblip.replicator; print('BLIP oracle: pythonblip')"

## Build everything in release.
build: deps
	$(SWIFT) build -c release

## Build the Todo tutorial's app and bot (examples/todo): .build/release/todo and .build/release/todo-bot.
todo: deps
	$(SWIFT) build -c release --product todo
	$(SWIFT) build -c release --product todo-bot

## Start the gateway (public :4984, admin 127.0.0.1:4985) with the Todo example config.
run: deps
	$(SWIFT) build -c release --product couchette-gateway
	.build/release/couchette-gateway $(CONFIG)

## At most this many tests run at once. Swift has as many cooperative threads as cores (two here); with no bound,
## every test's task is queued at once and a gateway test waiting to be resumed waits behind hundreds of
## synchronous tests (30 s and more measured at the start of a run), so its deadline passes while it does nothing.
## 24 keeps both cores busy (the whole run takes as long) and resumptions within a second or two.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH ?= 24

## Run every test (every suite must carry a time limit: scripts/check-tests.py; handlers reach databases through
## their facade: scripts/check-layers.py), the Admin UI in headless Chromium (scripts/browser-run.sh), the gateway's
## end-to-end tests
## again with their databases in PostgreSQL (test-postgres), then check the gateway against its OpenAPI descriptions
## with schemathesis (a short run: a few examples per operation, a fixed seed so that a run repeats; `make fuzz`
## draws new cases each time).
test: deps
	python3 scripts/check-tests.py
	python3 scripts/check-layers.py
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) --no-print-directory test-postgres
	scripts/browser-run.sh
	SCHEMATHESIS_SEED=$${SCHEMATHESIS_SEED:-2026} scripts/schemathesis-run.sh --examples 8

## The gateway's REST, _changes, sync function and replicator tests with every database their servers start in a new
## PostgreSQL database (on the tests' private server) instead of in memory. `make test-postgres-all` runs every
## gateway test so, one at a time: storage calls wait on PostgreSQL on Swift's cooperative threads, so the whole
## suite at once starves the timing-sensitive tests (docs/decisions.md).
POSTGRES_SUITES := AttachmentHTTPTests|BadInputTests|BulkEndpointsTests|BulkGetTests|ChangesHTTPTests
POSTGRES_SUITES := $(POSTGRES_SUITES)|ConcurrentWriteTests|CouchDBFeedFidelityTests|CouchDBFidelityTests|DocumentHTTPTests
POSTGRES_SUITES := $(POSTGRES_SUITES)|MaintenanceEndpointsTests|PrincipalEndpointsTests|SessionEndpointsTests|ReadmeTourTests
POSTGRES_SUITES := $(POSTGRES_SUITES)|ReplicatorGatewayTests|ReplicatorAttachmentTests|RevocationFeedTests
POSTGRES_SUITES := $(POSTGRES_SUITES)|SyncFunctionSeedsValidationTests
test-postgres: deps
	COUCHETTE_TEST_STORAGE=postgres $(SWIFT) test --skip-build --filter '$(POSTGRES_SUITES)'

test-postgres-all: deps
	COUCHETTE_TEST_STORAGE=postgres $(SWIFT) test --skip-build --no-parallel --filter CouchetteGatewayTests

## Long runs kept out of `make test`: the CLI's cp of 100,000 documents to and from JSON lines, a folder and a gateway;
## a detached `_changes` answer of 4 MB to a client with a 4 KB window.
soak: deps
	$(SWIFT) build --build-tests
	COUCHETTE_CLI_DOCS=100000 $(SWIFT) test --skip-build --filter 'CLITests/copy'
	COUCHETTE_SOAK=1 $(SWIFT) test --skip-build --filter 'largeAnswerArrivesWhole'

## The long schemathesis run: many examples per operation.
fuzz: deps
	$(SWIFT) build --product couchette-gateway
	scripts/schemathesis-run.sh --examples 300

## Run the benchmarks in release; each figure prints as `BENCH <figure> <value> <goal>`.
bench: deps
	$(SWIFT) build -c release --product couchette-bench
	$(SWIFT) build -c release --product couchette
	.build/release/couchette-bench

## The scale figures (issue 50): requests on a database of 1,000,000 documents against one of 10,000. The databases
## are built once in .build/bench-scale (BENCH_SCALE_DIR), which takes a few minutes; BENCH_SCALE_DOCUMENTS sets the
## large size.
bench-scale: deps
	$(SWIFT) build -c release --product couchette-bench
	BENCH_ONLY=scale .build/release/couchette-bench

## The kernel's floor under `changes.p99-ms.10000`: one line to each of 9,000 loopback connections, in C.
fanout-floor:
	mkdir -p .build
	cc -O2 -Wall -pthread -o .build/fanout-floor scripts/loopback-fanout-floor.c
	.build/fanout-floor 9000 1
	.build/fanout-floor 9000 2

clean:
	rm -rf .build
