package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/localstate"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relayclient"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/requester"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
)

// TestRequestReplyProcessed: a request reaches wait_for_messages; a reply
// reaches the person once, linked to it; waiting and replying do not mark
// it processed, mark_processed does, and the state survives a restart of
// the bridge (processed flags and checkpoints).
func TestRequestReplyProcessed(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := w.person.Send(ctx, "c1", "req-1", "publish the report?"); err != nil {
		t.Fatal(err)
	}
	got := messagesOf(w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 10000}))
	if len(got) != 1 || got[0]["id"] != "req-1" || got[0]["text"] != "publish the report?" || got[0]["from"] != "person:ann" {
		t.Fatalf("wait_for_messages: %v", got)
	}
	sent := w.ok(t, "send_message", map[string]any{"text": "done", "sourceMessageId": "req-1"})
	if sent["status"] != StatusSent || sent["conversationId"] != "c1" {
		t.Fatalf("send_message: %v", sent)
	}
	replies, err := w.person.Wait(ctx, func(r []requester.Reply) bool { return len(r) >= 1 })
	if err != nil || len(replies) != 1 || replies[0].Text != "done" || replies[0].ReplyTo != "req-1" {
		t.Fatalf("person got %+v, %v", replies, err)
	}
	if again := messagesOf(w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 0})); len(again) != 1 {
		t.Fatalf("after waiting and replying the request is no longer pending: %v", again)
	}
	w.ok(t, "save_checkpoint", map[string]any{"sourceMessageId": "req-1", "summary": "replied", "nextAction": "mark it", "hostSessionLabel": "s1"})
	if m := w.ok(t, "mark_processed", map[string]any{"messageId": "req-1", "note": "ok"}); m["already"] != false {
		t.Fatalf("mark_processed: %v", m)
	}
	if m := w.ok(t, "mark_processed", map[string]any{"messageId": "req-1"}); m["already"] != true {
		t.Fatalf("second mark_processed: %v", m)
	}
	if st := w.ok(t, "get_status", nil); st["pending"] != 0.0 || len(st["uncertain_sends"].([]any)) != 0 || st["connection"] != ConnConnected {
		t.Fatalf("get_status: %v", st)
	}
	// A second owner of the state is refused while the bridge runs.
	if _, err := Open(Config{AgentID: "bot", Token: "x", StoreRoot: w.storeDir, BaseURL: w.srv.URL}, w.bridge.log); !errors.Is(err, localstate.ErrLocked) {
		t.Fatalf("second bridge: %v", err)
	}
	w.stop()
	w.start(t)
	if got := messagesOf(w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 0})); len(got) != 0 {
		t.Fatalf("after a restart a processed request is pending again: %v", got)
	}
	cps := w.ok(t, "get_checkpoints", map[string]any{})
	if cps["count"] != 1.0 {
		t.Fatalf("checkpoints after restart: %v", cps)
	}
	h := w.ok(t, "get_history", map[string]any{"conversationId": "c1"})
	if len(h["requests"].([]any)) != 1 || len(h["replies"].([]any)) != 1 {
		t.Fatalf("history: %v", h)
	}
}

// TestLostAckIsNotASecondReply: the relay applies a reply but the answer
// is lost; the reply is listed in uncertain_sends, resent with the same id
// when the bridge reconnects, and the person receives it once.
func TestLostAckIsNotASecondReply(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := w.person.Send(ctx, "c1", "req-1", "hello"); err != nil {
		t.Fatal(err)
	}
	w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 10000})
	w.dropSend.Store(true)
	sent := w.ok(t, "send_message", map[string]any{"text": "hi", "sourceMessageId": "req-1"})
	if sent["status"] != StatusUncertain {
		t.Fatalf("send with a lost ack: %v", sent)
	}
	st := w.ok(t, "get_status", nil)
	un := st["uncertain_sends"].([]any)
	if len(un) != 1 || un[0].(map[string]any)["id"] != sent["id"] {
		t.Fatalf("uncertain_sends: %v", st)
	}
	w.dropSend.Store(false)
	w.stop() // a new session flushes uncertain replies first
	w.start(t)
	deadline := time.Now().Add(10 * time.Second)
	for len(w.ok(t, "get_status", nil)["uncertain_sends"].([]any)) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the uncertain reply was never confirmed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	replies, _, err := w.person.Fetch(ctx)
	if err != nil || len(replies) != 1 || replies[0].ID != sent["id"] {
		t.Fatalf("the person got %d replies (%v), want exactly 1", len(replies), err)
	}
}

// TestBadInput: every tool refuses wrong types, out-of-range numbers,
// oversize text, unknown arguments and invalid widgets with an error that
// names the field and the limit.
func TestBadInput(t *testing.T) {
	w := newWorld(t)
	if _, err := w.person.Send(context.Background(), "c1", "req-1", "hello"); err != nil {
		t.Fatal(err)
	}
	w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 10000})
	long := func(n int) string { return strings.Repeat("é", n) }
	widget := func(mut func(m map[string]any)) map[string]any {
		m := map[string]any{"type": "widget.standard", "v": 1, "id": "confirm-1", "kind": "confirm", "spec": map[string]any{"title": "Publier ?"}}
		mut(m)
		return m
	}
	cases := []struct {
		tool  string
		args  map[string]any
		wants []string
	}{
		{"get_status", map[string]any{"x": 1}, []string{"x", "unknown argument"}},
		{"wait_for_messages", map[string]any{"timeoutMs": 30001}, []string{"timeoutMs", "0 to 30000"}},
		{"wait_for_messages", map[string]any{"timeoutMs": -1}, []string{"timeoutMs", "0 to 30000"}},
		{"wait_for_messages", map[string]any{"timeoutMs": "soon"}, []string{"timeoutMs", "a number", "a string"}},
		{"wait_for_messages", map[string]any{"limit": 0}, []string{"limit", "1 to 50"}},
		{"wait_for_messages", map[string]any{"limit": 51}, []string{"limit", "1 to 50"}},
		{"wait_for_messages", map[string]any{"limit": 2.5}, []string{"limit", "integer"}},
		{"wait_for_messages", map[string]any{"afterCursor": "abc"}, []string{"afterCursor", "omit it"}},
		{"wait_for_messages", map[string]any{"conversationId": 5}, []string{"conversationId", "must be a string"}},
		{"send_message", map[string]any{}, []string{"text", "required"}},
		{"send_message", map[string]any{"text": long(MaxTextChars + 1), "sourceMessageId": "req-1"}, []string{"text", "20000"}},
		{"send_message", map[string]any{"text": "x"}, []string{"sourceMessageId", "required unless"}},
		{"send_message", map[string]any{"text": "x", "sourceMessageId": "nope"}, []string{"sourceMessageId", "no request"}},
		{"send_message", map[string]any{"text": "x", "sourceMessageId": "req-1", "conversationId": "c2"}, []string{"conversationId", "not the conversation"}},
		{"send_message", map[string]any{"text": "x", "to": "person:zed"}, []string{"to", "not a paired person"}},
		{"send_message", map[string]any{"text": []string{"x"}}, []string{"text", "must be a string", "an array"}},
		{"send_widget", map[string]any{"sourceMessageId": "req-1"}, []string{"widgetJson", "required"}},
		{"send_widget", map[string]any{"widgetJson": "{not json", "sourceMessageId": "req-1"}, []string{"widgetJson", "JSON object"}},
		{"send_widget", map[string]any{"widgetJson": widget(func(m map[string]any) { m["type"] = "widget.fancy" }), "sourceMessageId": "req-1"}, []string{"widgetJson", "type", "widget.standard"}},
		{"send_widget", map[string]any{"widgetJson": widget(func(m map[string]any) { m["v"] = 2 }), "sourceMessageId": "req-1"}, []string{"widgetJson", "v: must be 1"}},
		{"send_widget", map[string]any{"widgetJson": widget(func(m map[string]any) { delete(m, "id") }), "sourceMessageId": "req-1"}, []string{"widgetJson", "id", "1 to 100"}},
		{"send_widget", map[string]any{"widgetJson": widget(func(m map[string]any) { m["kind"] = "" }), "sourceMessageId": "req-1"}, []string{"widgetJson", "kind"}},
		{"send_widget", map[string]any{"widgetJson": widget(func(m map[string]any) { m["spec"] = "x" }), "sourceMessageId": "req-1"}, []string{"widgetJson", "spec", "object"}},
		{"send_widget", map[string]any{"widgetJson": widget(func(m map[string]any) { m["extra"] = 1 }), "sourceMessageId": "req-1"}, []string{"widgetJson", "extra", "unknown field"}},
		{"send_widget", map[string]any{"widgetJson": widget(func(m map[string]any) { m["spec"] = map[string]any{"t": strings.Repeat("x", 33000)} }), "sourceMessageId": "req-1"}, []string{"widgetJson", "32768"}},
		{"mark_processed", map[string]any{}, []string{"messageId", "required"}},
		{"mark_processed", map[string]any{"messageId": "req-1", "note": long(MaxNoteChars + 1)}, []string{"note", "2000"}},
		{"mark_processed", map[string]any{"messageId": "nope"}, []string{"messageId", "no request"}},
		{"mark_processed", map[string]any{"messageId": "a#b"}, []string{"messageId", "'#'"}},
		{"get_history", map[string]any{"limit": 51}, []string{"limit", "1 to 50"}},
		{"get_history", map[string]any{"limit": "all"}, []string{"limit", "a string"}},
		{"save_checkpoint", map[string]any{"summary": "s", "nextAction": "n"}, []string{"sourceMessageId", "required"}},
		{"save_checkpoint", map[string]any{"sourceMessageId": "req-1", "nextAction": "n"}, []string{"summary", "required"}},
		{"save_checkpoint", map[string]any{"sourceMessageId": "req-1", "summary": "s"}, []string{"nextAction", "required"}},
		{"save_checkpoint", map[string]any{"sourceMessageId": "req-1", "summary": long(MaxSummaryChars + 1), "nextAction": "n"}, []string{"summary", "4000"}},
		{"save_checkpoint", map[string]any{"sourceMessageId": "req-1", "summary": "s", "nextAction": "n", "status": "done"}, []string{"status", "active, completed"}},
		{"save_checkpoint", map[string]any{"sourceMessageId": "req-1", "summary": "s", "nextAction": "n", "hostSessionLabel": long(201)}, []string{"hostSessionLabel", "200"}},
		{"get_checkpoints", map[string]any{"includeCompleted": "yes"}, []string{"includeCompleted", "true or false"}},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%02d_%s", i, c.tool), func(t *testing.T) {
			r := w.call(t, c.tool, c.args)
			if !r.isError {
				t.Fatalf("accepted: %s", r.text)
			}
			for _, want := range c.wants {
				if !strings.Contains(r.text, want) {
					t.Errorf("error %q does not mention %q", r.text, want)
				}
			}
		})
	}
	// The good widget goes through, as a string and as an object.
	good := widget(func(map[string]any) {})
	w.ok(t, "send_widget", map[string]any{"widgetJson": good, "sourceMessageId": "req-1"})
	w.ok(t, "send_widget", map[string]any{"widgetJson": `{"type":"widget.standard","v":1,"id":"c2","kind":"confirm","spec":{"title":"Publier ?"}}`, "sourceMessageId": "req-1"})
}

// TestBackoff: full jitter under an exponential ceiling capped at 30 s.
func TestBackoff(t *testing.T) {
	for attempt := 1; attempt < 40; attempt++ {
		ceil := min(backoffCap, backoffBase<<min(attempt, 20))
		for range 200 {
			if d := backoff(attempt); d < 0 || d > ceil || d > 30*time.Second {
				t.Fatalf("attempt %d: %v, ceiling %v", attempt, d, ceil)
			}
		}
	}
	var sum time.Duration
	for range 1000 {
		sum += backoff(30)
	}
	if mean := sum / 1000; mean < 10*time.Second || mean > 20*time.Second {
		t.Fatalf("capped mean %v, want about 15s (uniform up to 30s)", mean)
	}
}

// TestWidgetRoundTrip: a widget reaches the person; the person's answer
// comes back as a pending widget response, shown by widget://pending until
// it is marked processed; conversation://current follows the last message.
func TestWidgetRoundTrip(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := w.person.Send(ctx, "c1", "req-1", "publish?"); err != nil {
		t.Fatal(err)
	}
	w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 10000})
	w.ok(t, "send_widget", map[string]any{"sourceMessageId": "req-1",
		"widgetJson": map[string]any{"type": "widget.standard", "v": 1, "id": "confirm-1", "kind": "confirm", "spec": map[string]any{"title": "Publier ?"}}})
	got, err := w.person.Wait(ctx, func(r []requester.Reply) bool { return len(r) >= 1 })
	if err != nil || got[0].Kind != wire.KindWidget || !strings.Contains(string(got[0].Widget), `"confirm-1"`) {
		t.Fatalf("person got %+v %v", got, err)
	}
	w.ok(t, "mark_processed", map[string]any{"messageId": "req-1"})
	if _, err := w.person.SendPayload(ctx, "c2", "resp-1", wire.Payload{Kind: wire.KindWidgetResponse, WidgetID: "confirm-1", Value: json.RawMessage(`{"confirmed":true}`), ReplyTo: got[0].ID}); err != nil {
		t.Fatal(err)
	}
	msgs := messagesOf(w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 10000}))
	if len(msgs) != 1 || msgs[0]["kind"] != wire.KindWidgetResponse || msgs[0]["widgetId"] != "confirm-1" {
		t.Fatalf("wait_for_messages: %v", msgs)
	}
	read := func(uri string) map[string]any {
		res, err := w.mcp.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal([]byte(res.Contents[0].Text), &m)
		return m
	}
	if p, _ := read("widget://pending")["pending"].(map[string]any); p == nil || p["id"] != "resp-1" {
		t.Fatalf("widget://pending: %v", read("widget://pending"))
	}
	if c, _ := read("conversation://current")["current"].(map[string]any); c == nil || c["conversationId"] != "c2" {
		t.Fatalf("conversation://current: %v", read("conversation://current"))
	}
	w.ok(t, "mark_processed", map[string]any{"messageId": "resp-1"})
	if p := read("widget://pending")["pending"]; p != nil {
		t.Fatalf("widget://pending after processing: %v", p)
	}
	prompt, err := w.mcp.GetPrompt(ctx, &mcp.GetPromptParams{Name: "start_pacerelle"})
	if err != nil || !strings.Contains(prompt.Messages[0].Content.(*mcp.TextContent).Text, "mark_processed") {
		t.Fatalf("start_pacerelle: %v", err)
	}
}

// TestSecondDevice: a person's new device, confirmed by the paired one (it
// signs the next device list), is accepted by the bridge, and replies are
// sealed for both devices. A device in a list that no pinned device signed
// is refused.
func TestSecondDevice(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	laptop, err := w.person.AddDevice(ctx, t.TempDir(), "laptop")
	if err != nil {
		t.Fatal(err)
	}
	defer laptop.Close()
	if _, err := laptop.Send(ctx, "c1", "from-laptop", "hello from the laptop"); err != nil {
		t.Fatal(err)
	}
	got := messagesOf(w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 10000}))
	if len(got) != 1 || got[0]["fromDevice"] != "laptop" {
		t.Fatalf("wait_for_messages: %v", got)
	}
	w.ok(t, "send_message", map[string]any{"text": "hi both", "sourceMessageId": "from-laptop"})
	for name, d := range map[string]*requester.Device{"phone": w.person, "laptop": laptop} {
		rs, err := d.Wait(ctx, func(r []requester.Reply) bool { return len(r) >= 1 })
		if err != nil || rs[0].Text != "hi both" {
			t.Fatalf("%s: %+v %v", name, rs, err)
		}
	}
	// A rogue device: its list (v3) is signed by itself, not by a pinned device.
	rogue, _ := seal.NewIdentity(wire.PersonParty("ann"), "rogue")
	var own seal.DeviceList
	if err := (&relayclient.Client{BaseURL: w.srv.URL, Token: "agent-tok", Agent: "bot"}).List(ctx, wire.PersonParty("ann"), &own); err != nil {
		t.Fatal(err)
	}
	list := seal.SignList(rogue, own.Version+1, append(own.Devices, rogue.Device))
	added, err := (&relayclient.Client{BaseURL: w.srv.URL, Token: laptop.Credential()}).AddDevice(ctx, rogue.Device, list)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(wire.Payload{Kind: wire.KindRequest, Text: "let me in"})
	env, _ := seal.Seal(rogue, seal.Header{Suite: seal.SuiteHPKE, To: []string{wire.AgentParty("bot")}, Conversation: "c1", MessageID: "rogue-1", ListVersion: list.Version, SentAtMs: time.Now().UnixMilli()}, w.person.AgentDevices(), body)
	if _, err := (&relayclient.Client{BaseURL: w.srv.URL, Token: added.Credential}).Send(ctx, wire.SendBody{ID: "rogue-1", Conversation: "c1", To: env.To, Envelope: env.Encode()}); err != nil {
		t.Fatal(err)
	}
	w.ok(t, "mark_processed", map[string]any{"messageId": "from-laptop"})
	if _, err := w.person.Send(ctx, "c1", "after", "still here"); err != nil {
		t.Fatal(err)
	}
	got = messagesOf(w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 10000}))
	if len(got) != 1 || got[0]["id"] != "after" {
		t.Fatalf("the model saw %v", got)
	}
	if st := w.ok(t, "get_status", nil); st["refused_envelopes"] != 1.0 {
		t.Fatalf("status: %v", st)
	}
}

// TestNoE2EE: with --no-e2ee the bridge exchanges clear envelopes with a
// device that allows them (what the flag is for: seeing the transport),
// says so in get_status, and an encrypting device's requests still open.
func TestNoE2EE(t *testing.T) {
	w := newWorldWith(t, Config{NoE2EE: true})
	ctx := context.Background()
	w.person.Plaintext = true
	if _, err := w.person.Send(ctx, "c1", "req-1", "CLEAR-CANARY"); err != nil {
		t.Fatal(err)
	}
	got := messagesOf(w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 10000}))
	if len(got) != 1 || got[0]["text"] != "CLEAR-CANARY" {
		t.Fatalf("wait_for_messages: %v", got)
	}
	w.ok(t, "send_message", map[string]any{"text": "CLEAR-REPLY", "sourceMessageId": "req-1"})
	rs, err := w.person.Wait(ctx, func(r []requester.Reply) bool { return len(r) >= 1 })
	if err != nil || rs[0].Text != "CLEAR-REPLY" {
		t.Fatalf("reply %+v %v", rs, err)
	}
	if st := w.ok(t, "get_status", nil); st["e2ee"] != false {
		t.Fatalf("get_status e2ee: %v", st["e2ee"])
	}
	w.person.Plaintext = false
	if _, err := w.person.Send(ctx, "c1", "req-2", "sealed"); err != nil {
		t.Fatal(err)
	}
	if got := messagesOf(w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 10000, "afterCursor": "1"})); len(got) != 1 || got[0]["text"] != "sealed" {
		t.Fatalf("an encrypted request: %v", got)
	}
}

// TestNoE2EEWarns: the flag is announced on stderr before anything else.
func TestNoE2EEWarns(t *testing.T) {
	var stderr strings.Builder
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stop at once: only the start-up matters
	_ = run(ctx, []string{"--agent-id", "bot", "--token", "SECRET-TOKEN-XYZ", "--store-root", t.TempDir(), "--base-url", "http://127.0.0.1:1", "--no-e2ee"},
		func(string) string { return "" }, strings.NewReader(""), io.Discard, &stderr)
	if !strings.Contains(stderr.String(), "END-TO-END ENCRYPTION IS OFF") {
		t.Fatalf("stderr: %q", stderr.String())
	}
	if strings.Contains(stderr.String(), "SECRET-TOKEN-XYZ") {
		t.Fatal("the token is logged")
	}
}

// TestHistoryListsWhatWasSeeded: get_history returns every request and
// reply seeded in a conversation, only that conversation's, and limit
// keeps the latest of each, oldest first.
func TestHistoryListsWhatWasSeeded(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	const inC1, inC2 = 7, 3
	for i := range inC1 + inC2 {
		conv := "c1"
		if i >= inC1 {
			conv = "c2"
		}
		if _, err := w.person.Send(ctx, conv, fmt.Sprintf("req-%02d", i), "question"); err != nil {
			t.Fatal(err)
		}
	}
	seen := 0
	for deadline := time.Now().Add(20 * time.Second); seen < inC1+inC2 && time.Now().Before(deadline); {
		seen += len(messagesOf(w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 2000, "limit": 50, "afterCursor": ""})))
		if seen < inC1+inC2 {
			seen = 0 // waiting never marks processed: each call returns every pending request
		}
	}
	for i := range inC1 {
		w.ok(t, "send_message", map[string]any{"text": "answer", "sourceMessageId": fmt.Sprintf("req-%02d", i)})
	}
	count := func(h map[string]any) (int, int) { return len(h["requests"].([]any)), len(h["replies"].([]any)) }
	if q, r := count(w.ok(t, "get_history", map[string]any{"conversationId": "c1", "limit": 50})); q != inC1 || r != inC1 {
		t.Fatalf("c1 history: %d requests, %d replies; want %d and %d", q, r, inC1, inC1)
	}
	if q, r := count(w.ok(t, "get_history", map[string]any{"conversationId": "c2", "limit": 50})); q != inC2 || r != 0 {
		t.Fatalf("c2 history: %d requests, %d replies; want %d and 0", q, r, inC2)
	}
	h := w.ok(t, "get_history", map[string]any{"limit": 5})
	if q, r := count(h); q != 5 || r != 5 {
		t.Fatalf("limit 5: %d requests, %d replies", q, r)
	}
	for i, x := range h["requests"].([]any) {
		if id, want := x.(map[string]any)["id"], fmt.Sprintf("req-%02d", inC1+inC2-5+i); id != want {
			t.Fatalf("limit 5: request %d is %v, want %s (the latest five, oldest first)", i, id, want)
		}
	}
}
