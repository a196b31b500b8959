package message

import (
	"strconv"

	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Messages is the message table: by id, and listed by sender, channel,
// tenant and session day. Keyword search (shared/keyword) reads hits back and
// backfills through it.
var Messages = table.Declare(table.Schema[vp.Message]{
	Entity:  "message",
	Primary: table.Key{PK: "MSG#{msgId}", SK: "MSG", Pattern: "message by id"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "MSGFROM#{from}", SK: "{msgId}", Pattern: "messages by sender, newest first", Note: "list_messages `from`"},
		{Index: store.GSI2, PK: "MSGCH#{channel}", SK: "{msgId}", Pattern: "messages by channel", Note: "list_messages `channel`"},
		{Index: store.GSI3, PK: "MSGS", SK: "{msgId}", Pattern: "all messages of the tenant", Note: "list_messages without filter"},
		{Index: store.GSI4, PK: "MSGDAY#{day}", SK: "{msgId}", Pattern: "messages of a session day", Note: "sparse: only messages with `sessionDay`"},
	},
	Fields: func(m vp.Message) table.Values {
		v := table.Values{"msgId": m.ID, "from": m.From, "channel": m.Channel}
		if m.SessionDay != nil {
			v["day"] = itoa64(*m.SessionDay)
		}
		return v
	},
})

// receipts holds one row per recipient of a message, carrying a copy of
// it, so that an inbox is one query.
var receipts = table.Declare(table.Schema[vp.Receipt]{
	Entity:  "receipt",
	Primary: table.Key{PK: "RCPT#{rcptId}", SK: "RCPT", Pattern: "receipt by id", Note: "carries a copy of the message: an inbox is one query"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "UNREAD#{unreadRecipient}", SK: "{rcptId}", Pattern: "unread receipts of a recipient, oldest first, `since`",
			Note: "sparse: removed when read; `since` = sort-key lower bound"},
		{Index: store.GSI2, PK: "MSGRCPT#{msgId}", SK: "{recipient}#{instance?}", Pattern: "receipts of one message",
			Note: "list_broadcast_status, delete cascade"},
	},
	Fields: func(r vp.Receipt) table.Values {
		v := table.Values{"rcptId": r.ID, "msgId": r.MessageID, "recipient": r.Recipient, "instance": r.RecipientInstanceID}
		if r.ReadAt == nil {
			v["unreadRecipient"] = r.Recipient
		}
		return v
	},
})

// Tables documents the keys of this package (shared/store/KEYS.md).
func Tables() []table.Doc { return []table.Doc{Messages.Doc(), receipts.Doc()} }

// Key is the primary key of message id.
func Key(tenant, id string) store.Key { return Messages.KeyOf(tenant, table.Values{"msgId": id}) }

func receiptKey(tenant, id string) store.Key {
	return receipts.KeyOf(tenant, table.Values{"rcptId": id})
}

// receiptsOf queries the receipts of one message.
func receiptsOf(tenant, msgID string) store.Query {
	return receipts.Query(tenant, store.GSI2, table.Values{"msgId": msgID})
}

// Kind is the keyword-search kind of message documents.
const Kind = "message"

// Doc is a message's keyword document: its content, filtered by channel
// (Type) and sender (Owner).
func Doc(tenant string, m vp.Message) search.Doc {
	return search.Doc{Tenant: search.KindPartition(tenant, Kind), ID: m.ID, Kind: Kind,
		Type: m.Channel, Owner: m.From, Text: m.Content, CreatedAt: m.CreatedAt}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
