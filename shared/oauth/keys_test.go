package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
)

// TestKeysUnchanged pins the key strings written before the keys were
// declared: existing clients, grants and audit records must still be read.
func TestKeysUnchanged(t *testing.T) {
	k := func(pk, sk string) store.Key { return store.Key{PK: pk, SK: sk} }
	url := "https://app.example/client.json"
	sum := sha256.Sum256([]byte(url))
	day := time.Date(2026, 3, 4, 23, 59, 59, 0, time.UTC)
	tests := []struct {
		name    string
		it      store.Item
		key     store.Key
		gsi     [store.NumGSI]store.Key
		expires int64
	}{
		{"client", itemOf(clients, Client{ClientID: "cl_1", ScopeProfile: "client-generic"}), k("OAUTHCLIENT#cl_1", "CLIENT"),
			[4]store.Key{k("OAUTHCLIENTS", "cl_1"), k("OAUTHCLIENTPROF#client-generic", "cl_1")}, 0},
		{"metadata-document client", itemOf(clients, Client{ClientID: url, ScopeProfile: "p"}), k("OAUTHCLIENT#U"+hex.EncodeToString(sum[:]), "CLIENT"),
			[4]store.Key{k("OAUTHCLIENTS", url), k("OAUTHCLIENTPROF#p", url)}, 0},
		{"deleted client", itemOf(deletedClients, Client{ClientID: "cl_1", RevokedAt: 42}), k("OAUTHCLIENT#cl_1", "DELETED#0000000000042"),
			[4]store.Key{k("OAUTHCLIENTS", "cl_1")}, 0},
		{"profile", itemOf(profiles, Profile{ID: "master"}), k("OAUTH#PROFILES", "master"), [4]store.Key{}, 0},
		{"code", itemOf(codes, secretRecord[authCode]{hash: "ab", v: authCode{ExpiresAt: 5_000}}), k("OAUTHCODE#ab", "CODE"), [4]store.Key{}, 5 + codeReplayWindow},
		{"refresh token", itemOf(refreshTokens, secretRecord[refreshToken]{hash: "cd", v: refreshToken{ExpiresAt: 7_000}}), k("OAUTHRT#cd", "RT"), [4]store.Key{}, 7 + 86400},
		{"family", itemOf(families, family{ID: "fam_1", ClientID: "cl_1", ExpiresAt: 9_000}), k("OAUTHFAM#fam_1", "FAM"),
			[4]store.Key{{}, {}, k("OAUTHFAMC#cl_1", "fam_1")}, 9 + 86400},
		{"audit", itemOf(auditLog, AuditRecord{ID: "aud_1", CreationTime: day.UnixMilli() + 999}), k("AUDIT#2026-03-04", "aud_1"), [4]store.Key{}, 0},
		{"clerk user", itemOf(clerkUsers, clerkWorkspace{ClerkUserID: "user_1"}), k("CLERKUSER#user_1", "WS"), [4]store.Key{}, 0},
	}
	for _, tc := range tests {
		if tc.it.Key != tc.key || tc.it.GSI != tc.gsi || tc.it.ExpiresAt != tc.expires {
			t.Errorf("%s: item %+v %+v ttl %d,\nwant %+v %+v ttl %d", tc.name, tc.it.Key, tc.it.GSI, tc.it.ExpiresAt, tc.key, tc.gsi, tc.expires)
		}
	}
	if q := auditQuery("2026-03-04"); q.PK != "AUDIT#2026-03-04" || !q.Reverse {
		t.Errorf("audit query %+v", q)
	}
}
