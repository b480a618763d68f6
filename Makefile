# agentshelf: the two commands that work on a fresh clone are `make run` and `make test`.
#
# Every recipe runs on a supported Node through scripts/node.sh: RUNTIME=default (the machine's
# node if it is 24 or later, else Node 26, fetched once into .runtime/), 24, 26, or system (the
# machine's node as it is: only the benchmark's Node 20 baseline wants that).
SHELL := /bin/bash
RUNTIME ?= default
NODE := scripts/node.sh $(RUNTIME)
NODE_MODULES := node_modules/.package-lock.json

.PHONY: run test coverage install build typecheck lint fmt feeds bench openapi dist clean

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

# Two runtimes, two stores, without running every file four times: the first pass runs the
# whole suite on Node 26 and SQLite; the PostgreSQL pass runs every store-bound
# test file (`@store-bound`, test/support/stores.ts: each file whose imports reach
# test/support/store.ts, the switch between the stores) on Node 24, so each of them meets both
# runtimes and both stores. A file opts out of PostgreSQL with a reason on its first lines
# (`// stores: sqlite-only — a browser test: ...`); test/lint/stores.test.ts fails on a file
# that opens a store some other way without one. Each PostgreSQL test runs on a fresh database
# of one cluster, with the migrated template, that run-tests.ts starts before the pass and
# every test process shares (no initdb, no migrations, no cluster start per file).
# Both big passes run two files at a time (TAP_JOBS=2: tap's default on 2 cores is one, all
# cores but one), and the three passes run at once (--together): each file has its own
# directory, store, ports and, on PostgreSQL, databases, and a file waits on its server, its
# children and the store much of the time, so one pass alone left the cores idle a fifth of
# the run. Waits in tests are on events, with deadlines of a minute where a busy machine
# needs it. No pass collects coverage (a quarter of the CPU time) or lets tap's process
# recorder read every module each process loads (run-tests.ts); nor loads tap's plugins that
# no test uses (@tapjs/mock hooked every import): together a sixth of the CPU time. Every
# process and thread the tests start loads Kysely and zod from one-file bundles of themselves
# (test/support/bundled-deps.ts: Kysely alone is 255 modules each loaded again): about a
# seventh of what was left. `make coverage` gives the report.
#
# TESTS_NODE24_SQLITE run on Node 24 and SQLite as well: runtime-bound files the PostgreSQL pass
# does not run (SQLite's write lock, settings, a build killed mid-run) and the SQLite store's own
# test (the native addon on Node 24). The other runtime-bound files (CLI children and how they
# exit, the audit log's worker thread, servers stopping on signals, timers) are store-bound:
# the PostgreSQL pass runs them on Node 24. Before, a Node 24 pass ran 13 runtime-bound files
# on SQLite and a PostgreSQL pass 38 hand-listed files on Node 26.
TESTS_NODE24_SQLITE := test/db/store.test.ts test/db/transactions.test.ts \
  test/pipeline/stale-temporaries.test.ts test/cli/settings.test.ts
comma := ,
empty :=
space := $(empty) $(empty)

## Install from scratch, typecheck, lint, run every test on Node 26 and SQLite, the store-bound ones on Node 24 and PostgreSQL.
test:
	$(NODE) npm ci --ignore-scripts
	$(NODE) npx tap build
	rm -rf build
	@# The type check and the two linters at once (they read the sources, not build/).
	$(NODE) npx eslint . & eslint=$$!; $(NODE) npx prettier --check . & prettier=$$!; \
	  $(NODE) npx tsc -p tsconfig.json; tsc=$$?; wait $$eslint; e=$$?; wait $$prettier; p=$$?; \
	  test $$tsc -eq 0 -a $$e -eq 0 -a $$p -eq 0
	$(NODE) node build/test/support/run-tests.js --together --node=26+TAP_JOBS=2 \
	  --node=24:$(subst $(space),$(comma),$(strip $(TESTS_NODE24_SQLITE))) \
	  --node=24+AGENTSHELF_TEST_STORE=postgres+TAP_JOBS=2:@store-bound

## The whole suite once on Node 26 and SQLite with tap's coverage report.
coverage: build
	$(NODE) node build/test/support/run-tests.js --coverage --node=26

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
