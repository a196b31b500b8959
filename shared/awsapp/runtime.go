package awsapp

import (
	"runtime/debug"
	"strconv"
)

// tuneGC sets the collector for a Lambda container, unless GOGC or
// GOMEMLIMIT in the environment say otherwise.
//
// Start-up allocates several megabytes of short-lived buffers (the MCP SDK
// decodes each tool's schema through a 32 KiB buffer), and at the default
// GOGC of 100 on a near-empty heap that is a dozen collections: GOGC 400
// halved the MCP server's construction in a fresh process (25 -> 14 ms
// median). The memory limit, 80% of the function's memory, keeps the
// looser target from ever running the container out of memory.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if getenv("GOMEMLIMIT") != "" {
		return
	}
	if mib, err := strconv.Atoi(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")); err == nil && mib > 0 {
		debug.SetMemoryLimit(int64(mib) << 20 * 8 / 10)
	}
}
