package auth

import (
	"encoding/json"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
)

// Where tokens and server secrets live (shared/store/KEYS.md is generated
// from these). Both are global: a token is looked up before its tenant is
// known (the tenant is what the token tells us), and server secrets belong
// to no tenant.

// storedToken is a token with the SHA-256 (hex) of its secret, which is its
// key; only the token is stored.
type storedToken struct {
	hash string
	tok  Token
}

var tokens = table.Declare(table.Schema[storedToken]{
	Entity: "bearer token",
	Global: true,
	Primary: table.Key{PK: "TOKEN#{sha256}", SK: "TOKEN", Pattern: "bearer token by secret hash",
		Note: "global by necessity; the secret is never stored"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "TOKENS", SK: "{listedTokenId}", Pattern: "tokens, oldest first",
			Note: "`token list` (admin only); the AWS scheduler's keyword-search backfill reads it for the tenants (every 10 minutes); sparse: a token issued to an OAuth client is listed with its client instead"},
		{Index: store.GSI2, PK: "TOKENID#{tokenId}", SK: "TOKEN", Pattern: "token by id", Note: "`token revoke`"},
		{Index: store.GSI3, PK: "TOKCLIENT#{clientId}", SK: "{tokenId}", Pattern: "tokens of an OAuth client", Note: "sparse: on `TOKEN#` items issued to a client"},
	},
	Fields: func(s storedToken) table.Values {
		v := table.Values{"sha256": s.hash, "tokenId": s.tok.ID, "clientId": s.tok.ClientID}
		if s.tok.ClientID == "" {
			v["listedTokenId"] = s.tok.ID
		}
		return v
	},
	Encode: func(s storedToken) ([]byte, error) { return json.Marshal(s.tok) },
	// Issued tokens (OAuth, Clerk) vanish a day after they expire; tokens
	// an admin created stay, revoked or expired, for `token list`.
	Expires: func(s storedToken) int64 {
		if s.tok.Kind == "" || s.tok.ExpiresAt == 0 {
			return 0
		}
		return s.tok.ExpiresAt/1000 + 24*60*60
	},
})

// Token keys are global: the tenant is what the token tells us.
func tokenKey(hash string) store.Key { return tokens.KeyOf("", table.Values{"sha256": hash}) }

// sysEntry is one server secret, stored as its raw bytes.
type sysEntry struct {
	name  string
	value []byte
}

var sysConfig = table.Declare(table.Schema[sysEntry]{
	Entity:  "server configuration",
	Global:  true,
	Primary: table.Key{PK: "SYS#CONFIG", SK: "{name}", Pattern: "server configuration", Note: "`<name>` is `master-sha256` (master token hash) or `key:<name>` (cursor signing key)"},
	Fields:  func(e sysEntry) table.Values { return table.Values{"name": e.name} },
	Encode:  func(e sysEntry) ([]byte, error) { return e.value, nil },
})

func sysKey(name string) store.Key { return sysConfig.KeyOf("", table.Values{"name": name}) }

func sysItem(name string, value []byte) store.Item {
	it, _ := sysConfig.Item("auth", "", sysEntry{name: name, value: value}) // Encode cannot fail
	return it
}

// Tables describes this package's keys for KEYS.md.
func Tables() []table.Doc { return []table.Doc{tokens.Doc(), sysConfig.Doc()} }
