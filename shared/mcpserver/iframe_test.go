package mcpserver_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestIframeTools(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"create_iframe_session", "touch_iframe_session", "revoke_iframe_session"} {
		if !slices.Contains(names, want) {
			t.Fatalf("%s is not registered", want)
		}
	}
	exp := time.Now().Add(30 * time.Minute).UnixMilli()
	r, text := call(t, cs, "create_iframe_session", map[string]any{"sessionId": "s-1", "origin": "https://app.example.com", "expiresAt": exp})
	if r.IsError || !strings.Contains(text, `"ifs_`) || !strings.Contains(text, `"revoked":false`) {
		t.Fatalf("create: %s", text)
	}
	if r, text := call(t, cs, "touch_iframe_session", map[string]any{"sessionId": "s-1"}); r.IsError || !strings.Contains(text, `"touched":true`) {
		t.Fatalf("touch: %s", text)
	}
	if r, text := call(t, cs, "revoke_iframe_session", map[string]any{"sessionId": "s-1"}); r.IsError || !strings.Contains(text, `"revoked":true`) {
		t.Fatalf("revoke: %s", text)
	}
	if _, text := call(t, cs, "touch_iframe_session", map[string]any{"sessionId": "s-1"}); !strings.Contains(text, `"touched":false`) {
		t.Fatalf("touch after revoke: %s", text)
	}
	r, text = call(t, cs, "create_iframe_session", map[string]any{"sessionId": "s-2", "origin": "https://app.example.com/embed", "expiresAt": exp})
	if !r.IsError || !strings.Contains(text, "origin") {
		t.Fatalf("bad origin: %s", text)
	}
}

// A principal granted nothing (the client-generic OAuth profile) may call
// whoami and nothing else.
func TestDenyAllPrincipal(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", TokenID: "tok_generic"})
	if r, text := call(t, cs, "whoami", map[string]any{}); r.IsError {
		t.Fatalf("whoami: %s", text)
	}
	r, text := call(t, cs, "create_iframe_session", map[string]any{"sessionId": "s", "origin": "https://a.example", "expiresAt": time.Now().Add(time.Hour).UnixMilli()})
	if !r.IsError || !strings.Contains(text, "forbidden") || !strings.Contains(text, "elevate") {
		t.Fatalf("deny-all create: %s", text)
	}
}
