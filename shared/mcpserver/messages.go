package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type sendMessageIn struct {
	From           string `json:"from,omitempty" jsonschema:"sender orchestrator; defaults to you"`
	FromInstanceID string `json:"fromInstanceId,omitempty" jsonschema:"your instance id, e.g. alice-main"`
	Channel        string `json:"channel" jsonschema:"recipients: an orchestrator id, a comma-separated list (pi,phi), an instance id, or broadcast"`
	Content        string `json:"content" jsonschema:"message text, at most 64 KiB"`
	InstanceID     string `json:"instanceId,omitempty" jsonschema:"deliver only to this instance of the channel's orchestrators"`
	SessionDay     *int64 `json:"sessionDay,omitempty" jsonschema:"session day number, for list_messages"`
	TenantID       string `json:"tenantId,omitempty" jsonschema:"workspace label stored on the message and receipts"`
}

type checkMessagesIn struct {
	Recipient           string `json:"recipient,omitempty" jsonschema:"whose inbox; defaults to you"`
	RecipientInstanceID string `json:"recipientInstanceId,omitempty" jsonschema:"your instance: also hides messages addressed to your other instances"`
	Since               *int64 `json:"since,omitempty" jsonschema:"Unix ms: only messages received after it (incremental polling)"`
	TenantID            string `json:"tenantId,omitempty" jsonschema:"only messages with this workspace label"`
	Limit               int    `json:"limit,omitempty" jsonschema:"at most this many (default 100, max 500)"`
}

type markAsReadIn struct {
	ReceiptIDs []string `json:"receiptIds" jsonschema:"receiptId values from check_messages (at most 100)"`
}

type markAsReadOut struct {
	Marked int `json:"marked"`
}

type messageIDIn struct {
	MessageID string `json:"messageId" jsonschema:"the messageId send_message returned"`
}

type deleteMessageIn struct {
	MessageID          string `json:"messageId" jsonschema:"the message to delete"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty" jsonschema:"who is deleting; must be the sender or system; defaults to you"`
}

type listMessagesIn struct {
	listing.Params
	From       string `json:"from,omitempty" jsonschema:"only messages from this sender"`
	Channel    string `json:"channel,omitempty" jsonschema:"only messages sent to exactly this channel"`
	SessionDay *int64 `json:"sessionDay,omitempty" jsonschema:"only messages of this session day"`
}

func (s *server) addMessageTools(m *mcp.Server) {
	c := s.opts.Messages
	add(s, m, tool{Name: "send_message", Core: true, Annotations: write,
		Limits: limits{
			"channel": maxLen(vp.MaxChannelBytes), "content": maxLen(vp.MaxMessageBytes), "from": maxLen(vp.MaxNameBytes),
			"fromInstanceId": maxLen(vp.MaxNameBytes), "instanceId": maxLen(vp.MaxNameBytes), "tenantId": maxLen(vp.MaxNameBytes),
		},
		Description: "Send a message to peers; each recipient gets its own unread receipt. Channel: an orchestrator id, several comma-separated, " +
			"an instance id, or 'broadcast' (every orchestrator with a profile but you, resolved now). " +
			"Example: {\"channel\":\"bob,carol\",\"content\":\"API schema merged, you can rebase\"}"},
		func(ctx context.Context, p vp.Principal, in sendMessageIn) (message.SendResult, error) {
			return c.Send(ctx, p, message.SendInput{From: in.From, FromInstanceID: in.FromInstanceID, Channel: in.Channel,
				Content: in.Content, InstanceID: in.InstanceID, SessionDay: in.SessionDay, TenantLabel: in.TenantID})
		})

	add(s, m, tool{Name: "check_messages", Core: true, Annotations: readOnly,
		Limits: limits{"recipient": maxLen(vp.MaxNameBytes), "recipientInstanceId": maxLen(vp.MaxNameBytes)},
		Description: "Read your unread messages, oldest first, with their receiptId. Does not mark them read: call mark_as_read after handling them. " +
			"Poll with since to fetch only new ones. Example: {\"recipientInstanceId\":\"bob-laptop\"}"},
		func(ctx context.Context, p vp.Principal, in checkMessagesIn) (message.Inbox, error) {
			return c.Check(ctx, p, message.CheckInput{Recipient: in.Recipient, InstanceID: in.RecipientInstanceID,
				Since: in.Since, TenantLabel: in.TenantID, Limit: in.Limit})
		})

	add(s, m, tool{Name: "mark_as_read", Core: true, Annotations: idempotent,
		Limits: limits{"receiptIds": maxItems(vp.MaxReceiptIDsPerOp), "receiptIds[]": maxLen(vp.MaxNameBytes)},
		Description: "Mark received messages as read so that check_messages stops returning them. Returns how many were newly marked " +
			"(already-read ones are ignored). Example: {\"receiptIds\":[\"rcp_01jd...\"]}"},
		func(ctx context.Context, p vp.Principal, in markAsReadIn) (markAsReadOut, error) {
			n, err := c.MarkRead(ctx, p, in.ReceiptIDs)
			return markAsReadOut{Marked: n}, err
		})

	add(s, m, tool{Name: "get_message", Annotations: readOnly,
		Description: "Fetch one message by id with its full content and channel. Example: {\"messageId\":\"msg_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in messageIDIn) (vp.Message, error) {
			return c.GetMessage(ctx, p, in.MessageID)
		})

	add(s, m, tool{Name: "delete_message", Annotations: destructive,
		Description: "Delete a message you sent, with every recipient's receipt (sender or system only). Cannot be undone. " +
			"Example: {\"messageId\":\"msg_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in deleteMessageIn) (message.DeleteResult, error) {
			return c.DeleteMessage(ctx, p, in.MessageID, in.CallerOrchestrator)
		})

	add(s, m, tool{Name: "list_messages", Annotations: readOnly,
		Description: "Browse message history, newest first, optionally by sender, channel or session day. Paginated: {items, nextCursor?}; " +
			"pass nextCursor back as cursor. Example: {\"from\":\"alice\",\"limit\":50,\"fields\":\"lite\"}"},
		func(ctx context.Context, p vp.Principal, in listMessagesIn) (listing.Page[any], error) {
			return c.ListMessages(ctx, p, message.ListMessagesInput{From: in.From, Channel: in.Channel, SessionDay: in.SessionDay, Params: in.Params})
		})

	add(s, m, tool{Name: "list_broadcast_status", Annotations: readOnly,
		Description: "See who has and has not read a message (typically a broadcast): one object with a receipt per recipient. " +
			"Example: {\"messageId\":\"msg_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in messageIDIn) (message.BroadcastStatus, error) {
			return c.BroadcastStatus(ctx, p, in.MessageID)
		})
}
