// Package iframe holds the authenticated Gen UI iframe embed sessions
// (SEP-1865) and the job that deletes expired ones.
package iframe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// A session is addressed by its client-generated id inside the tenant; a
// global sparse index sorted by expiry lets the cleanup job find expired
// rows without scanning any tenant.
var sessions = table.Declare(table.Schema[Session]{
	Entity: "iframe session",
	Primary: table.Key{PK: "IFRAME#{sessionId}", SK: "IFRAME", Pattern: "iframe session by id",
		Note: "TTL = expiry + 30 days as a backstop"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "IFRAME_EXPIRY", SK: "{expiresAt}#{tenant}#{sessionId}", Global: true,
			Pattern: "expired iframe sessions", Note: "server-side cleanup job; expiresAt: 13 digits"},
	},
	Fields: func(is Session) table.Values {
		return table.Values{"sessionId": is.SessionID, "expiresAt": table.Millis(is.ExpiresAt)}
	},
})

// Tables documents the keys of this package (shared/store/KEYS.md).
func Tables() []table.Doc { return []table.Doc{sessions.Doc()} }

func sessionKey(tenant, sessionID string) store.Key {
	return sessions.KeyOf(tenant, table.Values{"sessionId": sessionID})
}

// Options configures a Service.
type Options struct {
	Store  store.Store
	Now    func() time.Time
	Logger *slog.Logger
}

// Service is the iframe session domain.
type Service struct {
	st  store.Store
	now func() time.Time
	ids *vp.IDs
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{st: o.Store, now: o.Now, ids: vp.NewIDs(o.Now)}
}

func (s *Service) nowMS() int64 { return s.now().UnixMilli() }

// Limits of an iframe session.
const (
	MaxSessionTTL = 30 * 24 * time.Hour
	MaxOrigin     = 2048
	// retention keeps an expired row readable by the store for a
	// while (the cleanup job normally removes it first).
	retention = 30 * 24 * time.Hour
)

// Session is one authenticated Gen UI iframe embed (SEP-1865): one
// connection from an origin. TenantID is the caller's routing label only;
// the tenant the row lives in is the token's.
type Session struct {
	ID           string `json:"_id"`
	CreationTime int64  `json:"_creationTime"`
	SessionID    string `json:"sessionId"`
	TenantID     string `json:"tenantId,omitempty"`
	Origin       string `json:"origin"`
	UserID       string `json:"userId,omitempty"`
	CreatedAt    int64  `json:"createdAt"`
	LastSeenAt   int64  `json:"lastSeenAt"`
	ExpiresAt    int64  `json:"expiresAt"`
	Revoked      bool   `json:"revoked"`
	RevokedAt    int64  `json:"revokedAt,omitempty"`
	CreatedBy    string `json:"createdBy,omitempty"` // the token that created it
}

// CreateInput is create_iframe_session's arguments.
type CreateInput struct {
	SessionID string
	TenantID  string
	Origin    string
	UserID    string
	ExpiresAt int64 // Unix ms
}

// Limits are create_iframe_session's limits; ids are bounded by
// vp.CheckName.
func (CreateInput) Limits() vp.Limit { return vp.MaxBytes("origin", MaxOrigin) }

func item(tenant string, is Session) (store.Item, error) {
	it, err := sessions.Item("iframe_session", tenant, is)
	it.ExpiresAt = is.ExpiresAt/1000 + int64(retention.Seconds())
	return it, err
}

// CreateIframeSession records a new embed session; the session id is the
// client's (crypto.randomUUID()) and must be new in the tenant.
func (s *Service) CreateIframeSession(ctx context.Context, p vp.Principal, in CreateInput) (Session, error) {
	const op = "create_iframe_session"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return Session{}, err
	}
	if err := vp.CheckName(op, "sessionId", in.SessionID, true); err != nil {
		return Session{}, err
	}
	if err := vp.CheckName(op, "tenantId", in.TenantID, false); err != nil {
		return Session{}, err
	}
	if err := vp.CheckName(op, "userId", in.UserID, false); err != nil {
		return Session{}, err
	}
	origin, err := checkOrigin(op, in.Origin)
	if err != nil {
		return Session{}, err
	}
	now := s.nowMS()
	switch {
	case in.ExpiresAt <= now:
		return Session{}, vp.Errorf(op, vp.KindInvalid, "expiresAt", "must be in the future (Unix ms; now is %d), e.g. now + 30 minutes", now)
	case in.ExpiresAt > now+MaxSessionTTL.Milliseconds():
		return Session{}, vp.Errorf(op, vp.KindInvalid, "expiresAt", "is more than %d days ahead; the limit is %d days", int(MaxSessionTTL.Hours()/24), int(MaxSessionTTL.Hours()/24))
	}
	is := Session{
		ID: s.ids.New("ifs"), CreationTime: now, SessionID: in.SessionID, TenantID: in.TenantID, Origin: origin, UserID: in.UserID,
		CreatedAt: now, LastSeenAt: now, ExpiresAt: in.ExpiresAt, CreatedBy: p.TokenID,
	}
	it, err := item(tenant, is)
	if err != nil {
		return Session{}, err
	}
	err = s.st.Write(ctx, store.Put(it, store.IfNotExists))
	if errors.Is(err, store.ErrConditionFailed) {
		return Session{}, vp.Errorf(op, vp.KindConflict, "sessionId", "session %q already exists; generate a new id (crypto.randomUUID())", in.SessionID)
	}
	if err != nil {
		return Session{}, records.Err(op, err)
	}
	return is, nil
}

// checkOrigin accepts a web origin (scheme://host[:port]) and returns it
// normalised: https, or http for a loopback host; no path, query or
// fragment.
func checkOrigin(op, origin string) (string, error) {
	if err := (CreateInput{}).Limits().Text(op, origin, true); err != nil {
		return "", err
	}
	u, err := url.Parse(strings.TrimSpace(origin))
	bad := func(why string) error {
		return vp.Errorf(op, vp.KindInvalid, "origin", "%q is not an origin: %s (want e.g. https://app.example.com)", origin, why)
	}
	if err != nil || u.Host == "" || u.User != nil {
		return "", bad("give scheme://host[:port]")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", bad("no path, query or fragment")
	}
	host := strings.ToLower(u.Hostname())
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if host != "localhost" && host != "127.0.0.1" && host != "::1" {
			return "", bad("http is only allowed on localhost")
		}
	default:
		return "", bad("the scheme must be https")
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host), nil
}

// GetIframeSession returns the live session, or nil when there is none, it
// has expired (expiresAt <= now) or it was revoked: callers treat nil as
// non-existent.
func (s *Service) GetIframeSession(ctx context.Context, p vp.Principal, sessionID string) (*Session, error) {
	const op = "get_iframe_session"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return nil, err
	}
	is, _, err := s.loadIframe(ctx, op, tenant, sessionID)
	if err != nil || is == nil || is.Revoked || is.ExpiresAt <= s.nowMS() {
		return nil, err
	}
	return is, nil
}

func (s *Service) loadIframe(ctx context.Context, op, tenant, sessionID string) (*Session, store.Item, error) {
	if err := vp.CheckName(op, "sessionId", sessionID, true); err != nil {
		return nil, store.Item{}, err
	}
	it, err := s.st.Get(ctx, sessionKey(tenant, sessionID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, it, nil
	}
	if err != nil {
		return nil, it, records.Err(op, err)
	}
	is, err := records.Decode[Session](op, it)
	return &is, it, err
}

// TouchIframeSession moves lastSeenAt to now (never expiresAt). It reports
// false when the session does not exist, was revoked or has expired.
func (s *Service) TouchIframeSession(ctx context.Context, p vp.Principal, sessionID string) (bool, error) {
	const op = "touch_iframe_session"
	return s.updateIframe(ctx, p, op, sessionID, func(is *Session, now int64) bool {
		if is.Revoked || is.ExpiresAt <= now {
			return false
		}
		is.LastSeenAt = now
		return true
	})
}

// RevokeIframeSession marks the session revoked, keeping the row for audit;
// getSession treats it as non-existent from then on. It reports false only
// when the session does not exist (revoking twice is true).
func (s *Service) RevokeIframeSession(ctx context.Context, p vp.Principal, sessionID string) (bool, error) {
	const op = "revoke_iframe_session"
	return s.updateIframe(ctx, p, op, sessionID, func(is *Session, now int64) bool {
		if !is.Revoked {
			is.Revoked, is.RevokedAt = true, now
		}
		return true
	})
}

// maxUpdateAttempts bounds the optimistic-concurrency loop of an update.
const maxUpdateAttempts = 40

// updateIframe is the read-modify-write of one session; change reports
// whether the session qualifies (and is then written).
func (s *Service) updateIframe(ctx context.Context, p vp.Principal, op, sessionID string, change func(*Session, int64) bool) (bool, error) {
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return false, err
	}
	changed := false
	err = table.Conflicts{Op: op, Max: maxUpdateAttempts, Exhausted: func() error {
		return vp.E(op, vp.KindConflict, "sessionId", "the session kept changing underneath; retry")
	}}.Retry(ctx, func() error {
		changed = false
		is, it, err := s.loadIframe(ctx, op, tenant, sessionID)
		if err != nil || is == nil {
			return err
		}
		before := *is
		if !change(is, s.nowMS()) {
			return nil
		}
		if *is == before {
			changed = true
			return nil
		}
		next, err := item(tenant, *is)
		if err != nil {
			return err
		}
		if err := records.Err(op, s.st.Write(ctx, store.Put(next, store.IfVersion(it.Version)))); err != nil {
			return err
		}
		changed = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// CleanupReport is what one cleanup run did.
type CleanupReport struct {
	Deleted int  `json:"deleted"`
	More    bool `json:"more"` // stopped at the bound with expired rows left
}

// maxCleanup bounds one cleanup run.
const maxCleanup = 10_000

// CleanupIframeSessions deletes the sessions of every tenant that expired
// at or before now (revoked or not), through the global expiry index.
func (s *Service) CleanupIframeSessions(ctx context.Context, now time.Time) (CleanupReport, error) {
	const op = "iframe_sessions.cleanup"
	var rep CleanupReport
	q := sessions.Query("", store.GSI1, nil)
	q.SKTo, q.Limit = table.Millis(now.UnixMilli())+"$", store.MaxTransactOps // '$' sorts just after '#'
	for rep.Deleted < maxCleanup {
		rows, err := s.st.Query(ctx, q)
		if err != nil {
			return rep, records.Err(op, err)
		}
		if len(rows) == 0 {
			return rep, nil
		}
		ops := make([]store.Op, 0, len(rows))
		for _, it := range rows {
			ops = append(ops, store.Delete(it.Key, store.Always))
		}
		if err := s.st.Write(ctx, ops...); err != nil {
			return rep, records.Err(op, fmt.Errorf("deleting %d expired sessions: %w", len(ops), err))
		}
		rep.Deleted += len(rows)
		if len(rows) < q.Limit {
			return rep, nil
		}
		// Go on past them (a secondary index may still show deleted rows
		// for a moment on DynamoDB).
		pos := store.PositionOf(rows[len(rows)-1], q.Index)
		q.After = &pos
	}
	rep.More = true
	return rep, nil
}
