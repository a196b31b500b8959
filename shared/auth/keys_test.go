package auth

import (
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
)

// TestKeysUnchanged pins the key strings written before the keys were
// declared: existing tokens and server secrets must still be read.
func TestKeysUnchanged(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_123)
	tk := New(Options{Now: func() time.Time { return now }})
	secret, admin, op, err := tk.Prepare(Spec{Tenant: "acme", ActsAs: []string{"bob"}})
	if err != nil {
		t.Fatal(err)
	}
	it := op.Item
	if it.Key != (store.Key{PK: "TOKEN#" + HashHex(secret), SK: "TOKEN"}) || it.ExpiresAt != 0 {
		t.Fatalf("admin token key %+v ttl %d", it.Key, it.ExpiresAt)
	}
	want := [store.NumGSI]store.Key{{PK: "TOKENS", SK: admin.ID}, {PK: "TOKENID#" + admin.ID, SK: "TOKEN"}, {}, {}}
	if it.GSI != want {
		t.Fatalf("admin token indexes %+v, want %+v", it.GSI, want)
	}
	if !strings.Contains(string(it.Data), `"id":"`+admin.ID+`"`) || strings.Contains(string(it.Data), secret) {
		t.Fatalf("stored token %s", it.Data)
	}

	_, issued, op, err := tk.Prepare(Spec{Tenant: "acme", Kind: "oauth", ClientID: "cl_1", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want = [store.NumGSI]store.Key{{}, {PK: "TOKENID#" + issued.ID, SK: "TOKEN"}, {PK: "TOKCLIENT#cl_1", SK: issued.ID}, {}}
	if op.Item.GSI != want {
		t.Fatalf("issued token indexes %+v, want %+v", op.Item.GSI, want)
	}
	if got, wantTTL := op.Item.ExpiresAt, now.Add(time.Hour+24*time.Hour).Unix(); got != wantTTL {
		t.Fatalf("issued token ttl %d, want %d", got, wantTTL)
	}
	if TokenKey("ab") != (store.Key{PK: "TOKEN#ab", SK: "TOKEN"}) {
		t.Fatalf("TokenKey = %+v", TokenKey("ab"))
	}

	if sysKey("master-sha256") != (store.Key{PK: "SYS#CONFIG", SK: "master-sha256"}) {
		t.Fatalf("sysKey = %+v", sysKey("master-sha256"))
	}
	if si := sysItem("key:cursor", []byte{1, 2}); si.Key != (store.Key{PK: "SYS#CONFIG", SK: "key:cursor"}) || string(si.Data) != "\x01\x02" {
		t.Fatalf("sysItem = %+v", si)
	}
}
