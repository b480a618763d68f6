# agentshelf: the two commands that work on a fresh clone are `make run` and `make test`.
SHELL := /bin/bash
NODE_MODULES := node_modules/.package-lock.json

.PHONY: run test install build typecheck lint fmt feeds bench openapi dist clean

$(NODE_MODULES): package.json package-lock.json
	npm ci
	@touch $@

install: $(NODE_MODULES)

build: install
	npx tsc -p tsconfig.json

## Set up and serve: install, migrate, seed the demo catalogue on an empty store, serve.
run: build
	node build/src/main.js migrate
	node build/src/main.js seed --demo --if-empty
	node build/src/main.js serve

## Install from scratch, typecheck, lint, run every test.
test:
	npm ci
	npx tsc -p tsconfig.json
	npx eslint .
	npx prettier --check .
	node build/test/support/run-tests.js

typecheck: install
	npx tsc -p tsconfig.json --noEmit

lint: install
	npx eslint . && npx prettier --check .

fmt: install
	npx prettier --write . && npx eslint --fix .

## One pipeline run.
feeds: build
	node build/src/main.js migrate
	node build/src/main.js build

bench: build
	node build/bench/run.js

openapi: build
	node build/src/main.js openapi --out docs/openapi.json

clean:
	rm -rf build .tap dist

## One executable: dist/agentshelf-linux-x64 (+ .sha256), built on Node 26 (scripts/dist.mjs).
dist: install
	scripts/node.sh 26 node scripts/dist.mjs
