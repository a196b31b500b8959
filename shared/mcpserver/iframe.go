package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/iframe"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type createIframeIn struct {
	SessionID string `json:"sessionId" jsonschema:"new, client-generated, e.g. crypto.randomUUID()"`
	TenantID  string `json:"tenantId,omitempty" jsonschema:"routing label (the tenant is your token's)"`
	Origin    string `json:"origin" jsonschema:"the embedding page's origin"`
	UserID    string `json:"userId,omitempty" jsonschema:"the signed-in user"`
	ExpiresAt int64  `json:"expiresAt" jsonschema:"Unix ms, at most 30 days ahead"`
}

type iframeSessionIn struct {
	SessionID string `json:"sessionId"`
}

type touchIframeOut struct {
	Touched bool `json:"touched" jsonschema:"false when the session does not exist, was revoked or has expired"`
}

type revokeIframeOut struct {
	Revoked bool `json:"revoked" jsonschema:"false when the session does not exist"`
}

// IframeTools are the tools of the iframe embed sessions over c; none when c is nil.
func IframeTools(c *iframe.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addIframeTools(m, c) }}
}

func (s *server) addIframeTools(m *mcp.Server, c *iframe.Service) {
	add(s, m, tool{Name: "create_iframe_session", Title: "Create embed session", Annotations: write,
		Limits:      iframe.CreateInput{}.Limits(),
		Description: "Register an embed session before a web page (origin) loads VantagePeers UI in an iframe; it ends at expiresAt or when revoked. Example: {\"sessionId\":\"4b6f1c1e-...\",\"origin\":\"https://app.example.com\",\"expiresAt\":1767225600000}"},
		func(ctx context.Context, p vp.Principal, in createIframeIn) (iframe.Session, error) {
			return c.CreateIframeSession(ctx, p, iframe.CreateInput{SessionID: in.SessionID, TenantID: in.TenantID, Origin: in.Origin, UserID: in.UserID, ExpiresAt: in.ExpiresAt})
		})
	add(s, m, tool{Name: "touch_iframe_session", Title: "Touch embed session", Annotations: idempotent,
		Description: "Record embed activity: lastSeenAt becomes now (expiresAt never moves). Example: {\"sessionId\":\"4b6f1c1e-...\"}"},
		func(ctx context.Context, p vp.Principal, in iframeSessionIn) (touchIframeOut, error) {
			ok, err := c.TouchIframeSession(ctx, p, in.SessionID)
			return touchIframeOut{Touched: ok}, err
		})
	add(s, m, tool{Name: "revoke_iframe_session", Title: "Revoke embed session", Annotations: idempotent,
		Description: "End an embed session now (secure logout); the record stays for audit. Example: {\"sessionId\":\"4b6f1c1e-...\"}"},
		func(ctx context.Context, p vp.Principal, in iframeSessionIn) (revokeIframeOut, error) {
			ok, err := c.RevokeIframeSession(ctx, p, in.SessionID)
			return revokeIframeOut{Revoked: ok}, err
		})
}
