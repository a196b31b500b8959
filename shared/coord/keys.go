package coord

import (
	"fmt"
	"strconv"
)

// Key builders. KEYS.md (shared/store/KEYS.md) is the table of access
// patterns these serve; keep the two in step. Every partition key starts
// with "T#<tenant>#".

func tp(tenant string) string { return "T#" + tenant + "#" }

// ms13 renders a millisecond time so that it sorts as a string.
func ms13(ms int64) string { return fmt.Sprintf("%013d", ms) }

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
