package coord

import (
	"fmt"

	"github.com/vantagepeers/vantagepeers/shared/store"
)

// Key builders. KEYS.md (shared/store/KEYS.md) is the table of access
// patterns these serve; keep the two in step. Every partition key starts
// with "T#<tenant>#".

func tp(tenant string) string { return "T#" + tenant + "#" }

// ms13 renders a millisecond time so that it sorts as a string.
func ms13(ms int64) string { return fmt.Sprintf("%013d", ms) }

func profileKey(tenant, orch, instance string) store.Key {
	sk := "#"
	if instance != "" {
		sk = "I#" + instance
	}
	return store.Key{PK: tp(tenant) + "PROFILE#" + orch, SK: sk}
}

func peersIndex(tenant string, updatedAt int64, orch, instance string) store.Key {
	return store.Key{PK: tp(tenant) + "PEERS", SK: ms13(updatedAt) + "#" + orch + "#" + instance}
}

func instanceIndex(tenant, instance, orch string) store.Key {
	return store.Key{PK: tp(tenant) + "INSTANCE#" + instance, SK: orch}
}

func messageKey(tenant, id string) store.Key {
	return store.Key{PK: tp(tenant) + "MSG#" + id, SK: "MSG"}
}

func receiptKey(tenant, id string) store.Key {
	return store.Key{PK: tp(tenant) + "RCPT#" + id, SK: "RCPT"}
}

func unreadPK(tenant, recipient string) string { return tp(tenant) + "UNREAD#" + recipient }

func messageReceiptsPK(tenant, msgID string) string { return tp(tenant) + "MSGRCPT#" + msgID }
