package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/uimarker"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type sendMessageIn struct {
	From           string `json:"from,omitempty"`
	FromInstanceID string `json:"fromInstanceId,omitempty" jsonschema:"your instance"`
	Channel        string `json:"channel" jsonschema:"an orchestrator id, ids comma-separated, an instance id, or broadcast (every profile but you)"`
	Content        string `json:"content"`
	InstanceID     string `json:"instanceId,omitempty" jsonschema:"deliver only to this instance"`
	SessionDay     *int64 `json:"sessionDay,omitempty"`
	TenantID       string `json:"tenantId,omitempty" jsonschema:"workspace label"`
}

type checkMessagesIn struct {
	Recipient           string `json:"recipient,omitempty"`
	RecipientInstanceID string `json:"recipientInstanceId,omitempty" jsonschema:"your instance; hides messages for your other ones"`
	Since               *int64 `json:"since,omitempty" jsonschema:"Unix ms: only newer ones (polling)"`
	TenantID            string `json:"tenantId,omitempty" jsonschema:"workspace label"`
	Limit               int    `json:"limit,omitempty" jsonschema:"default 100, max 500"`
	StuckAfterHours     *int   `json:"stuckAfterHours,omitempty" jsonschema:"your in_progress tasks idle this long are listed in stuckInProgress (default 4)"`
}

type markAsReadIn struct {
	ReceiptIDs []string `json:"receiptIds" jsonschema:"from check_messages"`
}

type markAsReadOut struct {
	Marked int `json:"marked"`
}

type messageIDIn struct {
	MessageID string `json:"messageId"`
}

type deleteMessageIn struct {
	MessageID          string `json:"messageId"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty"`
}

type listMessagesIn struct {
	listing.Params
	From       string `json:"from,omitempty"`
	Channel    string `json:"channel,omitempty" jsonschema:"exactly as sent"`
	SessionDay *int64 `json:"sessionDay,omitempty"`
}

// MessageTools are the tools of the messages over c; none when c is nil.
func MessageTools(c *message.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addMessageTools(m, c) }}
}

func (s *server) addMessageTools(m *mcp.Server, c *message.Service) {
	add(s, m, tool{Name: "send_message", Title: "Send message", Core: true, Annotations: write,
		Limits:      message.SendInput{}.Limits(),
		Description: "Send a message to peers; each recipient gets an unread receipt until mark_as_read. A name nobody has used yet is still delivered, and listed in unknownRecipients (a typo?). Example: {\"channel\":\"bob,carol\",\"content\":\"API merged, rebase\"}"},
		func(ctx context.Context, p vp.Principal, in sendMessageIn) (message.SendResult, error) {
			return c.Send(ctx, p, message.SendInput{From: in.From, FromInstanceID: in.FromInstanceID, Channel: in.Channel,
				Content: in.Content, InstanceID: in.InstanceID, SessionDay: in.SessionDay, TenantLabel: in.TenantID})
		})

	add(s, m, tool{Name: "check_messages", Title: "Check messages", Core: true, Annotations: readOnly,
		Limits:      message.CheckInput{}.Limits(),
		Description: "Read your unread messages, oldest first, with receiptIds (unread until mark_as_read); call it between steps too. Also stuckInProgress (your idle in_progress tasks) and peersStuckOnYou, 10 each at most. Example: {\"recipientInstanceId\":\"bob-laptop\"}"},
		func(ctx context.Context, p vp.Principal, in checkMessagesIn) (message.Inbox, error) {
			return c.Check(ctx, p, message.CheckInput{Recipient: in.Recipient, InstanceID: in.RecipientInstanceID,
				Since: in.Since, TenantLabel: in.TenantID, Limit: in.Limit, StuckAfterHours: in.StuckAfterHours})
		})

	add(s, m, tool{Name: "mark_as_read", Title: "Mark as read", Core: true, Annotations: idempotent,
		Limits: message.MarkReadLimit(),
		Description: "Mark messages read so check_messages stops returning them; returns how many were newly marked. " +
			"Example: {\"receiptIds\":[\"rcp_01jd...\"]}"},
		func(ctx context.Context, p vp.Principal, in markAsReadIn) (markAsReadOut, error) {
			n, err := c.MarkRead(ctx, p, in.ReceiptIDs)
			return markAsReadOut{Marked: n}, err
		})

	add(s, m, tool{Name: "get_message", Title: "Get message", Annotations: readOnly,
		Description: "Fetch a message. Example: {\"messageId\":\"msg_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in messageIDIn) (vp.Message, error) {
			return c.GetMessage(ctx, p, in.MessageID)
		})

	add(s, m, tool{Name: "delete_message", Title: "Delete message", Annotations: destructive,
		Description: "Delete a message and its receipts for good (sender or system). Example: {\"messageId\":\"msg_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in deleteMessageIn) (message.DeleteResult, error) {
			return c.DeleteMessage(ctx, p, in.MessageID, in.CallerOrchestrator)
		})

	add(s, m, tool{Name: "list_messages", Title: "List messages", Marker: markMessages, UI: uimarker.KindMessagesFeed, Annotations: readOnly,
		Description: "List message history, newest first. Example: {\"from\":\"alice\",\"fields\":\"lite\"}"},
		func(ctx context.Context, p vp.Principal, in listMessagesIn) (listing.Page[any], error) {
			return c.ListMessages(ctx, p, message.ListMessagesInput{From: in.From, Channel: in.Channel, SessionDay: in.SessionDay, Params: in.Params})
		})

	add(s, m, tool{Name: "list_broadcast_status", Title: "Message read receipts", Annotations: readOnly,
		Description: "Who has read a message (e.g. a broadcast): a receipt per recipient. Example: {\"messageId\":\"msg_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in messageIDIn) (message.BroadcastStatus, error) {
			return c.BroadcastStatus(ctx, p, in.MessageID)
		})
}
