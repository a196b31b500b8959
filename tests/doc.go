// Package tests holds the end-to-end tests of VantagePeers: they build the
// real binary, start `vantagepeers serve` (and `vantagepeers stdio`) and
// drive it with clients nobody here wrote — the official MCP TypeScript SDK
// (tests/clients/*.mjs) and the MCP Inspector CLI — plus raw HTTP for what
// well-behaved clients never send.
//
// Run them with `make test`, or after `scripts/test-deps.sh`:
//
//	go test ./tests/ -v
//
// Without node or tests/node_modules the client tests are skipped with a
// loud message, except when CI=true: then they fail.
//
// Environment:
//
//	VP_E2E_RACE=1         build the server binary with -race
//	VP_E2E_KNOWN_BUGS=1   run the known-bug tests as failures instead of skipping them
//	VP_E2E_KEEP=1         keep the temporary folder (binary, data dir, server log)
package tests
