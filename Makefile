# agentshelf: the two commands that work on a fresh clone are `make run` and `make test`.
#
# Every recipe runs on a supported Node through scripts/node.sh: RUNTIME=default (the machine's
# node if it is 24 or later, else Node 26, fetched once into .runtime/), 24, 26, or system (the
# machine's node as it is: only the benchmark's Node 20 baseline wants that).
SHELL := /bin/bash
RUNTIME ?= default
NODE := scripts/node.sh $(RUNTIME)
NODE_MODULES := node_modules/.package-lock.json

.PHONY: run test install build typecheck lint fmt feeds bench openapi dist clean

# --ignore-scripts: no dependency needs an install script (better-sqlite3 13 carries prebuilt
# binaries), and tap's plugin build is run here instead of as a postinstall.
$(NODE_MODULES): package.json package-lock.json
	$(NODE) npm ci --ignore-scripts
	$(NODE) npx tap build
	@touch $@

install: $(NODE_MODULES)

build: install
	$(NODE) npx tsc -p tsconfig.json

## Set up and serve: install, migrate, seed the demo catalogue on an empty store, serve.
run: build
	$(NODE) node build/src/main.js migrate
	$(NODE) node build/src/main.js seed --demo --if-empty
	$(NODE) node build/src/main.js serve

# The Node 24 pass of `make test` runs these files only: the ones whose behaviour depends on the
# runtime itself (CLI child processes and how they exit, SQLite through the native addon, the
# audit log's worker thread, servers starting and stopping on signals, timers): 42% of the
# suite's per-file time. The rest is the same JavaScript on both runtimes, and CI has about 15
# minutes: on this 2-core machine one full pass took 4 min 57 s on Node 24 (load 2-10) and
# 15 min 43 s on Node 26 with other builds keeping the load at 12-16 (about 3.5 min of CPU each).
TESTS_NODE24 := test/cli/cli.test.ts test/cli/keys.test.ts test/db/category-page.test.ts \
  test/db/transactions.test.ts test/domain/audit/log.test.ts test/http/discovery/server.test.ts \
  test/pipeline/lock.test.ts test/pipeline/scheduler.test.ts test/webhooks/crash.test.ts \
  test/db/store.test.ts test/http/idempotency-crash.test.ts test/pipeline/stale-temporaries.test.ts \
  test/cli/settings.test.ts
# The PostgreSQL pass of `make test` (AGENTSHELF_TEST_STORE=postgres, Node 26) runs every
# store-bound test file, found from the files themselves (`@store-bound`, test/support/stores.ts):
# each file whose imports reach test/support/store.ts, the switch between the stores, each test
# on a fresh database of a cluster its process starts (test/support/postgres.ts). A file opts
# out with a reason on its first lines (`// stores: sqlite-only — a browser test: ...`);
# test/lint/stores.test.ts fails on a file that opens a store some other way without one.
comma := ,
empty :=
space := $(empty) $(empty)

## Install from scratch, typecheck, lint, run every test on Node 26, the runtime-bound ones on 24, the store-bound ones on PostgreSQL.
test:
	$(NODE) npm ci --ignore-scripts
	$(NODE) npx tap build
	rm -rf build
	$(NODE) npx tsc -p tsconfig.json
	$(NODE) npx eslint .
	$(NODE) npx prettier --check .
	$(NODE) node build/test/support/run-tests.js --node=26 \
	  --node=24:$(subst $(space),$(comma),$(strip $(TESTS_NODE24))) \
	  --node=26+AGENTSHELF_TEST_STORE=postgres:@store-bound

typecheck: install
	$(NODE) npx tsc -p tsconfig.json --noEmit

lint: install
	$(NODE) npx eslint . && $(NODE) npx prettier --check .

fmt: install
	$(NODE) npx prettier --write . && $(NODE) npx eslint --fix .

## One pipeline run.
feeds: build
	$(NODE) node build/src/main.js migrate
	$(NODE) node build/src/main.js build

## Benchmarks on RUNTIME: `make bench RUNTIME=24`, `make bench RUNTIME=system`.
bench: build
	$(NODE) node build/bench/run.js

openapi: build
	$(NODE) node build/src/main.js openapi --out docs/openapi.json

clean:
	rm -rf build .tap dist

## One executable: dist/agentshelf-linux-x64 (+ .sha256), built on Node 26 (scripts/dist.mjs).
dist: install
	scripts/node.sh 26 node scripts/dist.mjs
