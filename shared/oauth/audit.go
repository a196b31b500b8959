package oauth

import (
	"context"
	"encoding/json"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The audit log is append-only: each record is written once with
// IfNotExists, usually in the same transaction as the change it records,
// and never updated. Records of a UTC day share a partition, newest last.
// AuditDayLayout is the form of an audit day.
const AuditDayLayout = "2006-01-02"

// Actor is who made an admin call or approved an authorization.
type Actor struct {
	ID        string // "master", "cli", a token id
	IP        string
	UserAgent string
}

// AuditRecord is one entry of the credentials audit log. It names tokens
// by id and never holds a secret.
type AuditRecord struct {
	ID           string         `json:"_id"`
	CreationTime int64          `json:"_creationTime"`
	Action       string         `json:"action"`
	Outcome      string         `json:"outcome"` // ok or refused
	Actor        string         `json:"actor,omitempty"`
	ClientID     string         `json:"clientId,omitempty"`
	Tenant       string         `json:"tenant,omitempty"`
	TokenID      string         `json:"tokenId,omitempty"`
	FamilyID     string         `json:"familyId,omitempty"`
	Profile      string         `json:"profile,omitempty"`
	Detail       string         `json:"detail,omitempty"`
	Counts       map[string]int `json:"counts,omitempty"`
	IP           string         `json:"ip,omitempty"`
	UserAgent    string         `json:"userAgent,omitempty"`
	// The Clerk exchange (credentialsAuditLog).
	ClerkUserID string `json:"clerkUserId,omitempty"`
	WorkspaceID string `json:"workspaceId,omitempty"`
	ExtID       string `json:"extId,omitempty"`
	ExtVersion  string `json:"extVersion,omitempty"`
	IssuedAt    int64  `json:"issuedAt,omitempty"`
}

// auditOp returns the write that appends rec.
func (s *Server) auditOp(rec AuditRecord) store.Op {
	now := s.now()
	rec.ID = s.ids.New("aud")
	rec.CreationTime = now.UnixMilli()
	if rec.Outcome == "" {
		rec.Outcome = "ok"
	}
	rec.UserAgent = truncate(rec.UserAgent, 512)
	rec.Detail = truncate(rec.Detail, 1024)
	return store.Put(itemOf(auditLog, rec), store.IfNotExists)
}

// audit appends rec on its own (for events with no other write, such as a
// refused call); a failure is logged.
func (s *Server) audit(ctx context.Context, rec AuditRecord) {
	if err := s.st.Write(ctx, s.auditOp(rec)); err != nil {
		s.log.ErrorContext(ctx, "writing the audit log", "action", rec.Action, "err", err)
	}
}

// ListAudit returns the records of one UTC day (YYYY-MM-DD), newest first,
// at most limit (1..1000).
func (s *Server) ListAudit(ctx context.Context, day string, limit int) ([]AuditRecord, error) {
	const op = "oauth.audit.list"
	if _, err := time.Parse(AuditDayLayout, day); err != nil {
		return nil, vp.Errorf(op, vp.KindInvalid, "day", "%q: want YYYY-MM-DD", day)
	}
	limit = max(1, min(limit, 1000))
	rows, err := records.QueryAll(ctx, s.st, auditQuery(day), limit)
	if err != nil {
		return nil, vp.Wrap(op, vp.KindInternal, err)
	}
	out := []AuditRecord{}
	for _, it := range rows {
		var r AuditRecord
		if err := json.Unmarshal(it.Data, &r); err != nil {
			return nil, vp.Wrap(op, vp.KindInternal, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 { // do not cut a UTF-8 sequence
		n--
	}
	return s[:n]
}
