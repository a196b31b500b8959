package main

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func (b *Bridge) fingerprint() string { return seal.Fingerprint(b.me.Device) }

type toolFunc func(ctx context.Context, raw json.RawMessage) (any, error)

func newServer(b *Bridge) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "pacerelle", Version: version}, nil)
	add := func(name, desc string, in json.RawMessage, readOnly bool, fn toolFunc) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: in, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: readOnly}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				out, err := fn(ctx, req.Params.Arguments)
				if err != nil {
					res := &mcp.CallToolResult{}
					res.SetError(err)
					return res, nil
				}
				text, _ := json.Marshal(out)
				return &mcp.CallToolResult{StructuredContent: out, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
			})
	}
	conv := strProp("only this conversation", vp.MaxNameBytes)
	add("get_status", "Connection state (connecting, connected, reconnecting, disconnected or stopped), the number of pending requests, uncertain_sends: replies whose delivery could not be confirmed, pairings (pinned person devices), pending_pairings (started, not confirmed: show the person each one's 6-digit code; they confirm on their device only if it shows the same code) and refused_pairings (confirmations not trusted, with the reason).",
		schema(map[string]any{}), true, b.getStatus)
	add("wait_for_messages", "Returns pending requests, or waits for new ones. Waiting never marks a request as processed. Omit afterCursor when resuming: a cursor skips earlier requests, including unfinished ones.",
		schema(map[string]any{
			"timeoutMs":      intProp("how long to wait, 0–30000 ms (default 25000; 0 returns at once)", 0, MaxTimeoutMs),
			"conversationId": conv,
			"limit":          intProp("most requests returned, 1–50 (default 20)", 1, MaxLimit),
			"afterCursor":    strProp("pagination cursor from a previous call", 40),
		}), true, b.waitForMessages)
	add("send_message", "Sends an encrypted reply. Give sourceMessageId (recommended): the reply goes to that request's conversation and person.",
		schema(map[string]any{
			"text":             strProp("the reply text", MaxTextChars),
			"sourceMessageId":  strProp("the request answered", vp.MaxNameBytes),
			"conversationId":   strProp("explicit target conversation (advanced)", vp.MaxNameBytes),
			"to":               strProp("explicit recipient, a person party such as person:ann (advanced)", vp.MaxNameBytes),
			"replyToMessageId": strProp("message the reply links to", vp.MaxNameBytes),
		}, "text"), false, b.sendMessage)
	add("send_widget", `Sends a widget.standard v1 widget to the same target as a request, e.g. {"type":"widget.standard","v":1,"id":"confirm-1","kind":"confirm","spec":{"title":"Publier ?"}}.`,
		schema(map[string]any{
			"widgetJson":      map[string]any{"description": "a widget.standard v1 payload, as a JSON string or an object", "type": []string{"string", "object"}},
			"sourceMessageId": strProp("the request this widget answers", vp.MaxNameBytes),
			"conversationId":  strProp("explicit target conversation (advanced)", vp.MaxNameBytes),
			"to":              strProp("explicit recipient (advanced)", vp.MaxNameBytes),
		}, "widgetJson"), false, b.sendWidget)
	add("mark_processed", "Marks a request as processed. Only this tool does: reading or replying is not enough.",
		schema(map[string]any{
			"messageId": strProp("the request to mark", vp.MaxNameBytes),
			"note":      strProp("optional note, up to 2000 characters", MaxNoteChars),
		}, "messageId"), false, b.markProcessed)
	add("get_history", "Recent requests and replies kept locally (up to 50 of each).",
		schema(map[string]any{"conversationId": conv, "limit": intProp("1–50 (default 20)", 1, MaxLimit)}), true, b.getHistory)
	add("save_checkpoint", "Saves progress on a request so that another session can resume it. Set status completed when the work is finished.",
		schema(map[string]any{
			"sourceMessageId":  strProp("the request concerned", vp.MaxNameBytes),
			"summary":          strProp("what has been done so far", MaxSummaryChars),
			"nextAction":       strProp("the next step", MaxSummaryChars),
			"hostSessionLabel": strProp("a label for the host session", MaxLabelChars),
			"status":           map[string]any{"type": "string", "enum": []string{"active", "completed"}, "description": "active (default) or completed"},
		}, "sourceMessageId", "summary", "nextAction"), false, b.saveCheckpoint)
	add("get_checkpoints", "Returns the active checkpoints (and the completed ones with includeCompleted).",
		schema(map[string]any{"conversationId": conv, "includeCompleted": map[string]any{"type": "boolean"}}), true, b.getCheckpoints)

	s.AddResource(&mcp.Resource{URI: "conversation://current", Name: "current conversation", Description: "The last observed conversation.", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			b.mu.Lock()
			cur := b.st.Current
			b.mu.Unlock()
			return jsonResource(req.Params.URI, map[string]any{"current": cur})
		})
	s.AddResource(&mcp.Resource{URI: "widget://pending", Name: "pending widget response", Description: "The last unprocessed widget response.", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			b.mu.Lock()
			var last *Request
			for i := range b.st.Requests {
				if r := b.st.Requests[i]; r.Kind == wire.KindWidgetResponse && !r.Processed {
					last = &r
				}
			}
			b.mu.Unlock()
			return jsonResource(req.Params.URI, map[string]any{"pending": last})
		})
	s.AddPrompt(&mcp.Prompt{Name: "start_pacerelle", Description: "Read the status and checkpoints, then wait for, process and answer requests continuously."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "Work the Pacerelle inbox", Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: startPrompt}}}}, nil
		})
	return s
}

const startPrompt = `You are connected to Pacerelle, an end-to-end-encrypted inbox of requests from people.
1. Call get_status, then get_checkpoints: resume any active checkpoint first.
2. Loop continuously: call wait_for_messages WITHOUT afterCursor (so unfinished requests come back); for each request, do the work, answer with send_message (pass sourceMessageId) or send_widget, save_checkpoint for long work, and call mark_processed when done — only mark_processed marks a request as processed.
3. If get_status lists uncertain_sends, those replies may not have arrived; they are retried automatically with the same id.
4. If get_status lists pending_pairings, a person is pairing a new device: tell them its code (e.g. "pairing ann's device phone: code 123456") and that they must confirm on their device ONLY if it shows the same code. Check get_status again while waiting: a pairing is trusted once it moves to pairings. Report any refused_pairings to the person with the reason; never ask them to confirm a code you did not show.`

func jsonResource(uri string, v any) (*mcp.ReadResourceResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

// ---- tools

type uncertain struct {
	ID             string `json:"id"`
	Kind           string `json:"kind"`
	ConversationID string `json:"conversationId"`
	To             string `json:"to"`
	Attempts       int    `json:"attempts"`
	LastError      string `json:"lastError,omitempty"`
	CreatedAt      int64  `json:"createdAt"`
}

func (b *Bridge) getStatus(_ context.Context, raw json.RawMessage) (any, error) {
	if _, err := parseArgs("get_status", raw); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	un := []uncertain{}
	for _, r := range b.st.Replies {
		if r.Status != StatusSent {
			un = append(un, uncertain{ID: r.ID, Kind: r.Kind, ConversationID: r.ConversationID, To: r.To, Attempts: r.Attempts, LastError: r.LastError, CreatedAt: r.CreatedAt})
		}
	}
	return map[string]any{
		"connection": b.conn, "agent_id": b.cfg.AgentID, "device": b.me.ID, "fingerprint": b.fingerprint(),
		"pending": b.st.pending(), "uncertain_sends": un, "pairings": append([]PairingInfo{}, b.st.Pairings...),
		"pending_pairings": b.st.shownPairings(), "refused_pairings": append([]RefusedPairing{}, b.st.RefusedPairings...),
		"e2ee": !b.cfg.NoE2EE, "last_error": b.lastErr, "refused_envelopes": b.refused,
	}, nil
}

func (b *Bridge) waitForMessages(ctx context.Context, raw json.RawMessage) (any, error) {
	const tool = "wait_for_messages"
	a, err := parseArgs(tool, raw, "timeoutMs", "conversationId", "limit", "afterCursor")
	if err != nil {
		return nil, err
	}
	timeout, err := a.num("timeoutMs", 0, MaxTimeoutMs, DefaultTimeoutMs)
	if err != nil {
		return nil, err
	}
	limit, err := a.num("limit", 1, MaxLimit, DefaultWaitLimit)
	if err != nil {
		return nil, err
	}
	conv, err := a.id("conversationId", false)
	if err != nil {
		return nil, err
	}
	cursorArg, err := a.str("afterCursor", false, 40)
	if err != nil {
		return nil, err
	}
	var after int64
	if cursorArg != "" {
		if after, err = strconv.ParseInt(cursorArg, 10, 64); err != nil || after < 0 {
			return nil, vp.E(tool, vp.KindInvalid, "afterCursor", "is not a cursor returned by wait_for_messages (omit it to start from the oldest pending request)")
		}
	}
	deadline := time.NewTimer(time.Duration(timeout) * time.Millisecond)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		var out []Request
		more := false
		for _, r := range b.st.Requests {
			if r.Processed || r.Seq <= after || (conv != "" && r.ConversationID != conv) {
				continue
			}
			if len(out) == limit {
				more = true
				break
			}
			out = append(out, r)
		}
		changed, conn := b.changed, b.conn
		b.mu.Unlock()
		if len(out) > 0 || timeout == 0 {
			return b.page(out, cursorArg, more, conn), nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			timeout = 0
		case <-ctx.Done():
			return nil, vp.Wrap(tool, vp.KindUnavailable, ctx.Err())
		}
	}
}

func (b *Bridge) page(out []Request, cursor string, more bool, conn string) map[string]any {
	if len(out) > 0 {
		cursor = strconv.FormatInt(out[len(out)-1].Seq, 10)
	}
	if out == nil {
		out = []Request{}
	}
	return map[string]any{"messages": out, "cursor": cursor, "has_more": more, "connection": conn}
}

// target resolves where a reply goes: the source request's conversation
// and sender, unless explicit targets are given (which must agree with a
// source when both are).
func (b *Bridge) target(tool string, a *args) (conv, to, source string, err error) {
	if source, err = a.id("sourceMessageId", false); err != nil {
		return
	}
	if conv, err = a.id("conversationId", false); err != nil {
		return
	}
	if to, err = a.id("to", false); err != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if source != "" {
		r := b.st.request(source)
		if r == nil {
			return "", "", "", vp.Errorf(tool, vp.KindNotFound, "sourceMessageId", "no request %q is kept locally; use an id from wait_for_messages", source)
		}
		if conv != "" && conv != r.ConversationID {
			return "", "", "", vp.Errorf(tool, vp.KindInvalid, "conversationId", "%q is not the conversation of request %s (%s); give one or the other", conv, source, r.ConversationID)
		}
		if to != "" && to != r.From {
			return "", "", "", vp.Errorf(tool, vp.KindInvalid, "to", "%q is not the sender of request %s (%s); give one or the other", to, source, r.From)
		}
		return r.ConversationID, r.From, source, nil
	}
	if conv == "" && to == "" {
		return "", "", "", vp.E(tool, vp.KindInvalid, "sourceMessageId", "is required unless conversationId or to names the target")
	}
	if to == "" { // the last person heard from in that conversation
		for i := len(b.st.Requests) - 1; i >= 0 && to == ""; i-- {
			if b.st.Requests[i].ConversationID == conv {
				to = b.st.Requests[i].From
			}
		}
		if to == "" {
			return "", "", "", vp.Errorf(tool, vp.KindNotFound, "conversationId", "no request of conversation %q is kept locally: give to as well", conv)
		}
	}
	if _, ok := b.st.Pins.Lists[to]; !ok {
		return "", "", "", vp.Errorf(tool, vp.KindNotFound, "to", "%q is not a paired person", to)
	}
	if conv == "" {
		conv = "conv-" + b.ids.New("c")[2:]
	}
	return conv, to, "", nil
}

func (b *Bridge) sendMessage(ctx context.Context, raw json.RawMessage) (any, error) {
	const tool = "send_message"
	a, err := parseArgs(tool, raw, "text", "sourceMessageId", "conversationId", "to", "replyToMessageId")
	if err != nil {
		return nil, err
	}
	text, err := a.str("text", true, MaxTextChars)
	if err != nil {
		return nil, err
	}
	replyTo, err := a.id("replyToMessageId", false)
	if err != nil {
		return nil, err
	}
	conv, to, source, err := b.target(tool, a)
	if err != nil {
		return nil, err
	}
	if replyTo == "" {
		replyTo = source
	}
	r := Reply{ID: b.ids.New("rep"), Kind: wire.KindReply, ConversationID: conv, To: to, Text: text, SourceMessageID: source, ReplyTo: replyTo}
	r, err = b.send(ctx, r, wire.Payload{Kind: wire.KindReply, Text: text, SourceMessageID: source, ReplyTo: replyTo})
	if err != nil {
		return nil, err
	}
	return sendResult(r), nil
}

func sendResult(r Reply) map[string]any {
	out := map[string]any{"id": r.ID, "conversationId": r.ConversationID, "to": r.To, "status": r.Status, "delivered": r.Status == StatusSent}
	if r.Status != StatusSent {
		out["note"] = "delivery is not confirmed (" + r.LastError + "): it is listed in get_status.uncertain_sends and resent automatically with the same id; do not send it again"
	}
	return out
}

func (b *Bridge) sendWidget(ctx context.Context, raw json.RawMessage) (any, error) {
	const tool = "send_widget"
	a, err := parseArgs(tool, raw, "widgetJson", "sourceMessageId", "conversationId", "to")
	if err != nil {
		return nil, err
	}
	if !a.has("widgetJson") {
		return nil, vp.E(tool, vp.KindInvalid, "widgetJson", `is required: a widget.standard v1 payload such as {"type":"widget.standard","v":1,"id":"confirm-1","kind":"confirm","spec":{"title":"Publier ?"}}`)
	}
	w := []byte(a.m["widgetJson"])
	var s string
	if json.Unmarshal(w, &s) == nil {
		w = []byte(s)
	}
	widget, err := wire.ValidateWidget(w)
	if err != nil {
		return nil, vp.Errorf(tool, vp.KindInvalid, "widgetJson", "%v", err)
	}
	conv, to, source, err := b.target(tool, a)
	if err != nil {
		return nil, err
	}
	r := Reply{ID: b.ids.New("wdg"), Kind: wire.KindWidget, ConversationID: conv, To: to, Widget: widget, SourceMessageID: source, ReplyTo: source}
	r, err = b.send(ctx, r, wire.Payload{Kind: wire.KindWidget, Widget: widget, SourceMessageID: source, ReplyTo: source})
	if err != nil {
		return nil, err
	}
	return sendResult(r), nil
}

func (b *Bridge) markProcessed(_ context.Context, raw json.RawMessage) (any, error) {
	const tool = "mark_processed"
	a, err := parseArgs(tool, raw, "messageId", "note")
	if err != nil {
		return nil, err
	}
	id, err := a.id("messageId", true)
	if err != nil {
		return nil, err
	}
	note, err := a.str("note", false, MaxNoteChars)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.st.request(id)
	if r == nil {
		return nil, vp.Errorf(tool, vp.KindNotFound, "messageId", "no request %q is kept locally; use an id from wait_for_messages", id)
	}
	if r.Processed {
		return map[string]any{"messageId": id, "processed": true, "already": true, "processedAt": r.ProcessedAt}, nil
	}
	r.Processed, r.ProcessedAt, r.Note = true, b.now().UnixMilli(), note
	at := r.ProcessedAt
	if err := b.saveLocked(); err != nil {
		return nil, vp.Wrap(tool, vp.KindInternal, err)
	}
	return map[string]any{"messageId": id, "processed": true, "already": false, "processedAt": at, "pending": b.st.pending()}, nil
}

func (b *Bridge) getHistory(_ context.Context, raw json.RawMessage) (any, error) {
	const tool = "get_history"
	a, err := parseArgs(tool, raw, "conversationId", "limit")
	if err != nil {
		return nil, err
	}
	conv, err := a.id("conversationId", false)
	if err != nil {
		return nil, err
	}
	limit, err := a.num("limit", 1, MaxLimit, DefaultHistoryRows)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	reqs, reps := []Request{}, []Reply{}
	for i := len(b.st.Requests) - 1; i >= 0 && len(reqs) < limit; i-- {
		if r := b.st.Requests[i]; conv == "" || r.ConversationID == conv {
			reqs = append(reqs, r)
		}
	}
	for i := len(b.st.Replies) - 1; i >= 0 && len(reps) < limit; i-- {
		if r := b.st.Replies[i]; conv == "" || r.ConversationID == conv {
			r.Envelope = nil
			reps = append(reps, r)
		}
	}
	slices.Reverse(reqs)
	slices.Reverse(reps)
	return map[string]any{"requests": reqs, "replies": reps}, nil
}

func (b *Bridge) saveCheckpoint(_ context.Context, raw json.RawMessage) (any, error) {
	const tool = "save_checkpoint"
	a, err := parseArgs(tool, raw, "sourceMessageId", "summary", "nextAction", "hostSessionLabel", "status")
	if err != nil {
		return nil, err
	}
	var c Checkpoint
	if c.SourceMessageID, err = a.id("sourceMessageId", true); err != nil {
		return nil, err
	}
	if c.Summary, err = a.str("summary", true, MaxSummaryChars); err != nil {
		return nil, err
	}
	if c.NextAction, err = a.str("nextAction", true, MaxSummaryChars); err != nil {
		return nil, err
	}
	if c.HostSessionLabel, err = a.str("hostSessionLabel", false, MaxLabelChars); err != nil {
		return nil, err
	}
	if c.Status, err = a.enum("status", []string{"active", "completed"}, "active"); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.st.request(c.SourceMessageID)
	if r == nil {
		return nil, vp.Errorf(tool, vp.KindNotFound, "sourceMessageId", "no request %q is kept locally", c.SourceMessageID)
	}
	c.ConversationID = r.ConversationID
	now := b.now().UnixMilli()
	c.CreatedAt, c.UpdatedAt = now, now
	i := slices.IndexFunc(b.st.Checkpoints, func(x Checkpoint) bool { return x.SourceMessageID == c.SourceMessageID })
	if i >= 0 {
		c.CreatedAt = b.st.Checkpoints[i].CreatedAt
		b.st.Checkpoints[i] = c
	} else {
		b.st.Checkpoints = append(b.st.Checkpoints, c)
	}
	if err := b.saveLocked(); err != nil {
		return nil, vp.Wrap(tool, vp.KindInternal, err)
	}
	return map[string]any{"checkpoint": c, "created": i < 0}, nil
}

func (b *Bridge) getCheckpoints(_ context.Context, raw json.RawMessage) (any, error) {
	const tool = "get_checkpoints"
	a, err := parseArgs(tool, raw, "conversationId", "includeCompleted")
	if err != nil {
		return nil, err
	}
	conv, err := a.id("conversationId", false)
	if err != nil {
		return nil, err
	}
	all, err := a.boolean("includeCompleted")
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []Checkpoint{}
	for _, c := range b.st.Checkpoints {
		if (conv == "" || c.ConversationID == conv) && (all || c.Status == "active") {
			out = append(out, c)
		}
	}
	return map[string]any{"checkpoints": out, "count": len(out)}, nil
}
