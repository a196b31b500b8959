#!/usr/bin/env bash
# Runs a command with one DynamoDB Local shared by every test binary it
# starts: VP_DYNAMODB_LOCAL_ENDPOINT names it (shared/store/dynamo/dynamotest
# uses it instead of starting a Java virtual machine per package, which costs
# seconds of CPU each on a 2-core machine). It is stopped when the command
# ends, whatever the way. Without java, or when it cannot start, the command
# runs without it and each package starts its own as before (or skips loudly).
#
#   scripts/with-dynamodb-local.sh go test ./...
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { echo "with-dynamodb-local: $*" >&2; }

pid=""
stop() {
	if [[ -n "$pid" ]]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
}
trap stop EXIT

if command -v java >/dev/null && dir="$(bash "$repo/scripts/dynamodb-local.sh")"; then
	log="$(mktemp)"
	for _ in 1 2 3; do # a random port can be taken: try another
		port=$((20000 + RANDOM % 25000))
		(cd "$dir" && exec java -Djava.library.path=./DynamoDBLocal_lib -Xmx1g -jar DynamoDBLocal.jar \
			-inMemory -disableTelemetry -port "$port") >"$log" 2>&1 &
		pid=$!
		for _ in $(seq 1 300); do # up to 30 s
			if ! kill -0 "$pid" 2>/dev/null; then
				pid=""
				break
			fi
			if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
				export VP_DYNAMODB_LOCAL_ENDPOINT="http://127.0.0.1:$port"
				break 2
			fi
			sleep 0.1
		done
		stop
		pid=""
	done
	if [[ -z "${VP_DYNAMODB_LOCAL_ENDPOINT:-}" ]]; then
		say "DynamoDB Local did not start; each package starts its own:"
		cat "$log" >&2
	else
		say "one DynamoDB Local for every package at $VP_DYNAMODB_LOCAL_ENDPOINT"
	fi
	rm -f "$log"
fi

"$@"
rc=$?
exit "$rc"
