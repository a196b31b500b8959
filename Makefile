# VantagePeers developer targets.
#
#   make run     build bin/vantagepeers and serve on 127.0.0.1:8787 (ARGS="--data-dir /tmp/vp" to pass flags)
#   make build   build bin/vantagepeers
#   make test    install test dependencies (scripts/test-deps.sh), then every package's tests:
#                with -race for all but ./tests/... (the end-to-end tests drive a separately built
#                server binary, so -race on them checks nothing; VP_E2E_RACE=1 builds that binary
#                with -race)
#   make bench   run the benchmark program (go run ./tests/bench)
#   make lint    gofmt check and go vet

GO ?= go
BIN := bin/vantagepeers
ARGS ?=
GOTESTFLAGS ?= -timeout 20m

.PHONY: run build test test-deps e2e bench lint

build:
	$(GO) build -o $(BIN) ./functions/vantagepeers

run: build
	./$(BIN) serve $(ARGS)

test-deps:
	bash scripts/test-deps.sh

# Both runs happen even when the first fails, so that CI reports everything.
test: test-deps
	@rc=0; \
	echo "$(GO) test -race $(GOTESTFLAGS) <every package but ./tests/...>"; \
	$(GO) test -race $(GOTESTFLAGS) $$($(GO) list ./... | grep -v -e '/tests$$' -e '/tests/') || rc=1; \
	echo "$(GO) test $(GOTESTFLAGS) ./tests/..."; \
	$(GO) test $(GOTESTFLAGS) ./tests/... || rc=1; \
	exit $$rc

# Only the end-to-end tests (real server, real MCP clients).
e2e: test-deps
	$(GO) test $(GOTESTFLAGS) -v ./tests/

bench:
	$(GO) run ./tests/bench $(ARGS)

lint:
	@out="$$(gofmt -l $$(git ls-files --cached --others --exclude-standard -- '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt: these files need formatting (gofmt -w):"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
