package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/iframe"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type createIframeIn struct {
	SessionID string `json:"sessionId" jsonschema:"a new client-generated id, e.g. from crypto.randomUUID()"`
	TenantID  string `json:"tenantId,omitempty" jsonschema:"routing label stored on the session (the tenant itself is your token's)"`
	Origin    string `json:"origin" jsonschema:"the embedding page's origin, e.g. https://app.example.com"`
	UserID    string `json:"userId,omitempty" jsonschema:"the signed-in user, for per-user context"`
	ExpiresAt int64  `json:"expiresAt" jsonschema:"when the session ends, Unix ms (at most 30 days ahead), e.g. now + 30 minutes"`
}

type iframeSessionIn struct {
	SessionID string `json:"sessionId" jsonschema:"the sessionId given to create_iframe_session"`
}

type touchIframeOut struct {
	Touched bool `json:"touched" jsonschema:"false when the session does not exist, was revoked or has expired"`
}

type revokeIframeOut struct {
	Revoked bool `json:"revoked" jsonschema:"false when the session does not exist"`
}

func (s *server) addIframeTools(m *mcp.Server) {
	c := s.opts.Iframes
	add(s, m, tool{Name: "create_iframe_session", Annotations: write,
		Limits: limits{
			"sessionId": maxLen(vp.MaxNameBytes), "tenantId": maxLen(vp.MaxNameBytes), "userId": maxLen(vp.MaxNameBytes),
			"origin": maxLen(iframe.MaxOrigin),
		},
		Description: "Register an authenticated Gen UI iframe embed session (SEP-1865) for one embedding origin, before the iframe loads. " +
			"Sessions end at expiresAt or when revoked. " +
			"Example: {\"sessionId\":\"4b6f1c1e-7d7a-4a53-9f1e-0c1d2e3f4a5b\",\"origin\":\"https://app.example.com\",\"expiresAt\":1767225600000}"},
		func(ctx context.Context, p vp.Principal, in createIframeIn) (iframe.Session, error) {
			return c.CreateIframeSession(ctx, p, iframe.CreateInput{SessionID: in.SessionID, TenantID: in.TenantID, Origin: in.Origin, UserID: in.UserID, ExpiresAt: in.ExpiresAt})
		})
	add(s, m, tool{Name: "touch_iframe_session", Annotations: idempotent,
		Description: "Record activity on an embed session: moves lastSeenAt to now (never extends expiresAt). Call it on embed activity events. " +
			"Example: {\"sessionId\":\"4b6f1c1e-7d7a-4a53-9f1e-0c1d2e3f4a5b\"}"},
		func(ctx context.Context, p vp.Principal, in iframeSessionIn) (touchIframeOut, error) {
			ok, err := c.TouchIframeSession(ctx, p, in.SessionID)
			return touchIframeOut{Touched: ok}, err
		})
	add(s, m, tool{Name: "revoke_iframe_session", Annotations: idempotent,
		Description: "End an embed session now (secure logout): it is treated as non-existent from then on; the record is kept for audit. " +
			"Example: {\"sessionId\":\"4b6f1c1e-7d7a-4a53-9f1e-0c1d2e3f4a5b\"}"},
		func(ctx context.Context, p vp.Principal, in iframeSessionIn) (revokeIframeOut, error) {
			ok, err := c.RevokeIframeSession(ctx, p, in.SessionID)
			return revokeIframeOut{Revoked: ok}, err
		})
}
