package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/oauth/clerk"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
)

// Where OAuth and Clerk records live (shared/store/KEYS.md is generated
// from these). Every key is global: a client id, a code or a refresh token
// is what the caller presents before its tenant is known; the audit log
// and scope profiles belong to the server.

// clientRef is the key part of a client id: the id itself, or for a client
// whose id is an https URL (a client ID metadata document) "U" and the
// URL's SHA-256, which bounds the key's length.
func clientRef(id string) string {
	if isURLClientID(id) {
		sum := sha256.Sum256([]byte(id))
		return "U" + hex.EncodeToString(sum[:])
	}
	return id
}

var clientsList = table.Key{Index: store.GSI1, PK: "OAUTHCLIENTS", SK: "{clientId}", Pattern: "OAuth clients",
	Note: "admin; also read with `TOKENS` by the keyword-search backfill (client tenants)"}

var clients = table.Declare(table.Schema[Client]{
	Entity: "OAuth client",
	Global: true,
	Primary: table.Key{PK: "OAUTHCLIENT#{clientRef}", SK: "CLIENT", Pattern: "OAuth client by id",
		Note: "every token of the client requires it: deleting it revokes them all; `<clientRef>` is the id, or `U<sha256>` of an https id; TTL (24 h) until a person approves an authorization for it or an admin elevates it"},
	Indexes: []table.Key{clientsList,
		{Index: store.GSI2, PK: "OAUTHCLIENTPROF#{profileId}", SK: "{clientId}", Pattern: "clients of a scope profile", Note: "a profile in use is not deleted"},
	},
	Fields: func(c Client) table.Values {
		return table.Values{"clientRef": clientRef(c.ClientID), "clientId": c.ClientID, "profileId": c.ScopeProfile}
	},
	// A client nobody authorized yet lives PendingClientTTL.
	Expires: func(c Client) int64 { return c.PendingUntil / 1000 },
})

// A deleted client's record stays in its partition for audit, listed (as
// revoked) where the client was.
var deletedClients = table.Declare(table.Schema[Client]{
	Entity:  "deleted OAuth client",
	Global:  true,
	Primary: table.Key{PK: "OAUTHCLIENT#{clientRef}", SK: "DELETED#{revokedAt}", Pattern: "deleted OAuth client", Note: "tombstone, for audit; `<revokedAt>` is in ms, 13 digits"},
	Indexes: []table.Key{{Index: store.GSI1, PK: clientsList.PK, SK: clientsList.SK, Pattern: "deleted OAuth clients, with the others", Note: "listed as revoked"}},
	Fields: func(c Client) table.Values {
		return table.Values{"clientRef": clientRef(c.ClientID), "clientId": c.ClientID, "revokedAt": table.Millis(c.RevokedAt)}
	},
})

func clientKey(id string) store.Key {
	return clients.KeyOf("", table.Values{"clientRef": clientRef(id)})
}

var profiles = table.Declare(table.Schema[Profile]{
	Entity:  "scope profile",
	Global:  true,
	Primary: table.Key{PK: "OAUTH#PROFILES", SK: "{profileId}", Pattern: "scope profiles", Note: "seeded"},
	Fields:  func(p Profile) table.Values { return table.Values{"profileId": p.ID} },
})

func profileKey(id string) store.Key { return profiles.KeyOf("", table.Values{"profileId": id}) }

// secretRecord is a record keyed by the SHA-256 (hex) of the secret it
// stands for; only the record is stored, never the secret.
type secretRecord[T any] struct {
	hash string
	v    T
}

func secretFields[T any](r secretRecord[T]) table.Values    { return table.Values{"sha256": r.hash} }
func encodeSecret[T any](r secretRecord[T]) ([]byte, error) { return json.Marshal(r.v) }

var codes = table.Declare(table.Schema[secretRecord[authCode]]{
	Entity:  "authorization code",
	Global:  true,
	Primary: table.Key{PK: "OAUTHCODE#{sha256}", SK: "CODE", Pattern: "authorization code by hash", Note: "single-use IfVersion redemption; TTL (kept past expiry to recognise a replay)"},
	Fields:  secretFields[authCode],
	Encode:  encodeSecret[authCode],
	Expires: func(r secretRecord[authCode]) int64 { return r.v.ExpiresAt/1000 + codeReplayWindow },
})

var refreshTokens = table.Declare(table.Schema[secretRecord[refreshToken]]{
	Entity:  "refresh token",
	Global:  true,
	Primary: table.Key{PK: "OAUTHRT#{sha256}", SK: "RT", Pattern: "refresh token by hash", Note: "single-use IfVersion redemption; TTL"},
	Fields:  secretFields[refreshToken],
	Encode:  encodeSecret[refreshToken],
	Expires: func(r secretRecord[refreshToken]) int64 { return r.v.ExpiresAt/1000 + 86400 },
})

func codeKey(hash string) store.Key { return codes.KeyOf("", table.Values{"sha256": hash}) }
func refreshKey(hash string) store.Key {
	return refreshTokens.KeyOf("", table.Values{"sha256": hash})
}

var families = table.Declare(table.Schema[family]{
	Entity:  "grant",
	Global:  true,
	Primary: table.Key{PK: "OAUTHFAM#{familyId}", SK: "FAM", Pattern: "grant (refresh family)", Note: "reuse of a rotated refresh token revokes the family"},
	Indexes: []table.Key{{Index: store.GSI3, PK: "OAUTHFAMC#{clientId}", SK: "{familyId}", Pattern: "grants of a client", Note: "revoked with the client"}},
	Fields:  func(f family) table.Values { return table.Values{"familyId": f.ID, "clientId": f.ClientID} },
	Expires: func(f family) int64 { return f.ExpiresAt/1000 + 86400 },
})

func familyKey(id string) store.Key { return families.KeyOf("", table.Values{"familyId": id}) }

var auditLog = table.Declare(table.Schema[AuditRecord]{
	Entity:  "audit record",
	Global:  true,
	Primary: table.Key{PK: "AUDIT#{day}", SK: "{auditId}", Pattern: "audit log of a UTC day", Note: "append-only (IfNotExists only); `<day>` is YYYY-MM-DD"},
	Fields: func(r AuditRecord) table.Values {
		return table.Values{"day": time.UnixMilli(r.CreationTime).UTC().Format(AuditDayLayout), "auditId": r.ID}
	},
})

// auditQuery reads the records of day, newest first.
func auditQuery(day string) store.Query {
	q := auditLog.Query("", store.Primary, table.Values{"day": day})
	q.Reverse = true
	return q
}

var clerkUsers = table.Declare(table.Schema[clerkWorkspace]{
	Entity:  "Clerk user",
	Global:  true,
	Primary: table.Key{PK: "CLERKUSER#{sub}", SK: "WS", Pattern: "Clerk user → tenant"},
	Fields:  func(w clerkWorkspace) table.Values { return table.Values{"sub": w.ClerkUserID} },
})

func clerkUserKey(sub string) store.Key { return clerkUsers.KeyOf("", table.Values{"sub": sub}) }

// itemOf builds v's item from its table. OAuth records are plain structs:
// failing to encode one is a bug, which panics as mustJSON does.
func itemOf[T any](t *table.Table[T], v T) store.Item {
	it, err := t.Item("oauth", "", v)
	if err != nil {
		panic("oauth: encoding " + t.Entity() + ": " + err.Error())
	}
	return it
}

// Tables describes this package's keys for KEYS.md.
func Tables() []table.Doc {
	return []table.Doc{clients.Doc(), deletedClients.Doc(), profiles.Doc(), codes.Doc(), refreshTokens.Doc(),
		families.Doc(), auditLog.Doc(), clerkUsers.Doc(), clerk.WindowDoc(), pendingHours.Doc()}
}
