// Package keysdoc renders shared/store/KEYS.md, the table of access
// patterns, from key declarations (shared/store/table), so that the
// document cannot drift from the keys the code writes. The declarations
// are the capability modules' (shared/app Tables): its TestKeysFile fails
// when the file is stale; go generate ./shared/app rewrites it.
package keysdoc

import (
	"fmt"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
)

// Render returns KEYS.md for the given declarations, in their order.
func Render(docs []table.Doc) string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("\n| access pattern | index | partition key | sort key | notes |\n|---|---|---|---|---|\n")
	for _, d := range docs {
		for _, k := range d.Keys {
			// Only partition keys of tenant data carry the tenant prefix.
			fmt.Fprintf(&b, "| %s | %s | `%s` | `%s` | %s |\n", k.Pattern, indexName(k.Index), keyText(d.Global || k.Global, k.PK), keyText(true, k.SK), k.Note)
		}
	}
	b.WriteString("\n" + footer)
	return b.String()
}

func indexName(i store.Index) string {
	if i == store.Primary {
		return "table"
	}
	return i.String()
}

// keyText shows a template as the documentation writes keys: the tenant
// prefix as T#t# (partition keys of tenant data only: global keys and sort
// keys carry none), placeholders (optional ones too) as <field>.
func keyText(global bool, tpl string) string {
	s := strings.NewReplacer("{", "<", "?}", ">", "}", ">").Replace(tpl)
	if !global && tpl != "" {
		s = "T#t#" + s
	}
	return s
}

const header = `# Single-table key schema

One table (DynamoDB) or one ` + "`" + `items` + "`" + ` table (SQLite) holds every entity. Each item has a primary
key ` + "`" + `pk` + "`" + `/` + "`" + `sk` + "`" + `, up to four sparse secondary index keys ` + "`" + `gsi1..gsi4` + "`" + ` (` + "`" + `pk` + "`" + `/` + "`" + `sk` + "`" + ` pairs, absent when
the item is not in that index), ` + "`" + `ttl` + "`" + ` (Unix seconds; expired items are invisible to every read
even before the backend purges them), ` + "`" + `ver` + "`" + ` (maintained by the store, for conditional writes)
and ` + "`" + `data` + "`" + ` (the entity as JSON).

**Tenant isolation is structural:** every partition key of tenant data starts with
` + "`" + `T#<tenant>#` + "`" + `, where the tenant comes from the caller's token, never from an argument. No request
path scans the table. The only keys without a tenant are the credential lookups (the tenant is
what the credential tells us: tokens, OAuth clients, codes, refresh tokens, Clerk users), server
configuration, the audit log, and four indexes read only by server-side jobs that serve every
tenant (due recurring templates, queued embedding jobs, due and dead outbox jobs, expired iframe
sessions) — each entry
there names its tenant, and what a job writes goes under that tenant's keys.

Ids are time-ordered (` + "`" + `<prefix>_` + "`" + ` + 26 base32 characters: 48-bit milliseconds, 80 random bits),
so an index sorted by id is sorted by creation time. Orchestrator and instance ids are stored
normalised (NFC, case-folded) and may not contain ` + "`" + `#` + "`" + ` or ` + "`" + `,` + "`" + `.
`

const footer = `Writes that must be atomic are one ` + "`" + `Write` + "`" + ` call: a message and all its receipts (one
transaction, so at most 99 recipients per message), a message delete and its receipts, and every
read-modify-write of an entity (` + "`" + `IfVersion` + "`" + ` on the version read — the shape every claim uses).
`
