# VantagePeers developer targets.
#
#   make run     build bin/vantagepeers and serve on 127.0.0.1:8787 (ARGS="--data-dir /tmp/vp" to pass flags)
#   make build   build bin/vantagepeers
#   make test    install test dependencies (scripts/test-deps.sh), then every test (both store
#                backends, end-to-end with real clients), the race detector over shared/ and
#                functions/ in -short mode (SQLite backend), the CDK tests and an offline synth
#   make bench   tool-call latency over HTTP and stdio with the Go and TypeScript MCP clients
#                (go run ./tests/bench; ARGS=-checkout for checkout contention)
#   make bench-retrieval  recall@k, MRR and latency of text/vector/hybrid search on LoCoMo
#   make lint    gofmt check and go vet
#   make lambdas build every Lambda function for linux/arm64 into dist/lambda/<name>.zip
#   make synth   synthesize the CDK app offline into cdk.out/ (CUSTOMER=example unless given)
#   make deploy CUSTOMER=acme [REGION=eu-west-1] [SEARCH_TIER=...] [EMBEDDING=...] [CDK_ARGS="-c domain=..."]
#                deploy one customer's stack with your AWS credentials (see README, Deploy on AWS)

GO ?= go
BIN := bin/vantagepeers
ARGS ?=
GOTESTFLAGS ?= -timeout 20m

.PHONY: run build test test-deps e2e bench bench-retrieval lint lambdas lambda-sizes synth deploy infra-test

build:
	$(GO) build -o $(BIN) ./functions/vantagepeers

run: build
	./$(BIN) serve $(ARGS)

test-deps:
	bash scripts/test-deps.sh

# Every stage runs even when another fails, so that CI reports everything.
# Three streams share the machine, because each spends much of its time
# waiting (on emulators, browsers, clients, child processes): the CDK tests
# and the offline synth, the race pass (shared/ and functions/ with -race
# -short, SQLite) and every test (both store backends, end to end). The
# background streams' output is printed after the foreground one's.
# The slowest packages are named first so that they start first rather than
# last; -ldflags=-w links test binaries without DWARF (a third less CPU per
# link; stack traces keep their file and line); the race pass skips vet,
# which the main pass runs on the same packages. GOFLAGS=-trimpath (for the
# tests' own go builds too) keeps the checkout's path out of every build:
# without it Go's build cache misses for every package of a clone in a new
# folder (shared/task's test binary: 30 s of CPU in a new clone, 2.7 s with
# -trimpath and a warm cache), so a fresh CI clone compiled everything twice.
SLOW_TESTS := ./tests ./tests/lambda ./functions/pacerelle ./shared/errormon ./functions/vantagepeers \
	./shared/keyword ./shared/queue/sqs ./shared/activity ./shared/message ./shared/task ./shared/httpapi ./shared/oauth
SLOW_RACE_TESTS := ./shared/errormon ./shared/issue ./shared/httpapi ./shared/okfsvc ./shared/message \
	./shared/mcpserver ./shared/activity ./shared/keyword ./shared/store/dynamo ./functions/vantagepeers
test: test-deps
	@export GOFLAGS="-trimpath $${GOFLAGS:-}"; \
	rc=0; cdklog="$$(mktemp)"; racelog="$$(mktemp)"; \
	echo "== $$(date +%T) in the background: make infra-test, then make synth lambda-sizes   (CDK tests; offline synth; zip sizes)"; \
	( r=0; $(MAKE) --no-print-directory infra-test || r=1; $(MAKE) --no-print-directory synth lambda-sizes || r=1; exit $$r ) >"$$cdklog" 2>&1 & cdk=$$!; \
	echo "== $$(date +%T) in the background: $(GO) test -race -short ./shared/... ./functions/...   (race detector; SQLite backend)"; \
	$(GO) test -race -short -vet=off -ldflags=-w $(GOTESTFLAGS) $(SLOW_RACE_TESTS) ./shared/... ./functions/... >"$$racelog" 2>&1 & race=$$!; \
	echo "== $$(date +%T) $(GO) test ./...   (every test; SQLite and DynamoDB Local)"; \
	bash scripts/with-dynamodb-local.sh $(GO) test -ldflags=-w $(GOTESTFLAGS) $(SLOW_TESTS) ./... || rc=1; \
	wait $$race || rc=1; \
	echo "== $$(date +%T) $(GO) test -race -short ./shared/... ./functions/...   (ran in the background)"; \
	cat "$$racelog"; rm -f "$$racelog"; \
	wait $$cdk || rc=1; \
	echo "== $$(date +%T) make infra-test, then make synth lambda-sizes   (ran in the background)"; \
	cat "$$cdklog"; rm -f "$$cdklog"; \
	exit $$rc

e2e: test-deps
	$(GO) test $(GOTESTFLAGS) -v ./tests/

bench:
	bash scripts/test-deps.sh clients
	$(GO) run ./tests/bench $(ARGS)

# Retrieval quality and latency on LoCoMo (ARGS='-data path/to/locomo10.json' or VP_LOCOMO; see the README).
bench-retrieval:
	$(GO) run ./tests/benchretrieval $(ARGS)

lint:
	@out="$$(gofmt -l $$(git ls-files --cached --others --exclude-standard -- '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt: these files need formatting (gofmt -w):"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# ---- AWS (functions/<name>, infra/, cdk.json) ----
FUNCTIONS := mcp oauth embedder scheduler webhooks doorbell
LAMBDA_DIR := dist/lambda
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
CUSTOMER ?= example
REGION ?= us-east-1
CDK_ARGS ?=
CDK := $(CURDIR)/.cache/cdk/node_modules/.bin/cdk
# The CDK CLI offline and quiet: no version check, no
# telemetry, no instance metadata probe. synth runs without AWS credentials.
CDK_ENV := CDK_HOME=$(CURDIR)/.cdk-home CDK_DISABLE_VERSION_CHECK=true CDK_DISABLE_CLI_TELEMETRY=true \
	JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 \
	JSII_RUNTIME_PACKAGE_CACHE_ROOT=$(CURDIR)/.jsii-cache
CDK_CONTEXT = -c customer=$(CUSTOMER) -c region=$(REGION) \
	$(if $(SEARCH_TIER),-c searchTier=$(SEARCH_TIER)) $(if $(EMBEDDING),-c embedding=$(EMBEDDING)) $(CDK_ARGS)

# Each function: a static linux/arm64 binary named bootstrap (provided.al2023),
# zipped with a fixed timestamp so that an unchanged binary keeps its asset hash.
lambdas:
	@mkdir -p $(LAMBDA_DIR)
	@for f in $(FUNCTIONS); do \
		d="$$(mktemp -d "$(CURDIR)/$(LAMBDA_DIR)/.build-XXXXXX")"; \
		GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath \
			-ldflags='-s -w -X main.version=$(VERSION)' -o "$$d/bootstrap" ./functions/$$f || { rm -rf "$$d"; exit 1; }; \
		touch -t 198001010000 "$$d/bootstrap"; \
		(cd "$$d" && zip -q -X "$$d/$$f.zip" bootstrap) || { rm -rf "$$d"; exit 1; }; \
		mv -f "$$d/$$f.zip" $(LAMBDA_DIR)/$$f.zip; rm -rf "$$d"; \
		echo "$(LAMBDA_DIR)/$$f.zip $$(wc -c <$(LAMBDA_DIR)/$$f.zip) bytes"; \
	done

# The zips' size goal (10 MiB each: cold start reads the whole zip), checked
# on the arm64 zips that deploy, as make test builds them for the synth.
LAMBDA_ZIP_GOAL := 10485760
lambda-sizes:
	@rc=0; for f in $(FUNCTIONS); do \
		n=$$(wc -c <$(LAMBDA_DIR)/$$f.zip) || exit 1; \
		if [ "$$n" -gt $(LAMBDA_ZIP_GOAL) ]; then echo "FAIL: $(LAMBDA_DIR)/$$f.zip is $$n bytes, over the $(LAMBDA_ZIP_GOAL)-byte goal"; rc=1; fi; \
	done; [ $$rc = 0 ] && echo "lambda zips: all within $(LAMBDA_ZIP_GOAL) bytes"; exit $$rc

synth: test-deps lambdas
	env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE \
		$(CDK_ENV) AWS_EC2_METADATA_DISABLED=true AWS_REGION=$(REGION) \
		$(CDK) synth -q --no-notices --no-version-reporting -o cdk.out $(CDK_CONTEXT)

# Needs AWS credentials for the target account (and cdk bootstrap once per
# account and region). Without MASTER_TOKEN_SHA256 the stack generates the
# master token in Secrets Manager; the MasterTokenCommand output prints it.
deploy: test-deps lambdas
	@case "$(origin CUSTOMER)" in "command line"|environment) ;; *) echo "make deploy: say which customer, e.g. make deploy CUSTOMER=acme"; exit 1;; esac
	$(CDK_ENV) AWS_REGION=$(REGION) $(CDK) deploy $(if $(filter 1 true,$(YES)),--require-approval never) --no-notices \
		--outputs-file cdk.out/outputs-$(CUSTOMER).json $(CDK_CONTEXT) \
		$(if $(MASTER_TOKEN_SHA256),-c masterTokenHash=$(MASTER_TOKEN_SHA256)) VantagePeers-$(CUSTOMER)

# The CDK stack's assertions (a separate Go module: the main module never compiles the CDK).
infra-test:
	cd infra && $(CDK_ENV) AWS_EC2_METADATA_DISABLED=true $(GO) test $(GOTESTFLAGS) ./...
