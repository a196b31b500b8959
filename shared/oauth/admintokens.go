package oauth

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The limits of POST /admin/tokens, declared once: the CLI's remote
// commands send what its local commands accept, and the server refuses more.
const (
	MaxTokenPrefixes   = 50                     // namespaces in read, write; orchestrators in actsAs
	MaxTokenLabelBytes = 200                    // a note, not a document
	MaxTokenTTL        = 36500 * 24 * time.Hour // the CLI's 36500d
)

// TokenRequest is the body of POST /admin/tokens: an agent token, as
// `vantagepeers token create` and `connect` mint it on a local data dir.
type TokenRequest struct {
	Tenant      string   `json:"tenant"`
	ActsAs      []string `json:"actsAs"`
	Read        []string `json:"read"`
	Write       []string `json:"write"`
	Label       string   `json:"label,omitempty"`
	ToolProfile string   `json:"toolProfile,omitempty"`
	TTLSeconds  int64    `json:"ttlSeconds,omitempty"` // 0: no expiry
}

// TokenCreated is the answer of POST /admin/tokens: the secret, shown once.
type TokenCreated struct {
	Token  string     `json:"token"`
	Record auth.Token `json:"record"`
}

// adminTokenRoutes are the agent tokens of the admin API, so that a
// deployment without a shell (AWS) is onboarded as the embedded server is.
func (s *Server) adminTokenRoutes(m *http.ServeMux) {
	m.HandleFunc("POST /admin/tokens", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		var in TokenRequest
		if !decodeBody(w, r, &in) {
			return
		}
		out, err := s.CreateToken(r.Context(), a, in)
		s.respond(w, r, out, err)
	}))
	m.HandleFunc("GET /admin/tokens", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		toks, err := s.tokens.List(r.Context(), r.URL.Query().Get("tenant"))
		if toks == nil {
			toks = []auth.Token{}
		}
		s.respond(w, r, map[string]any{"tokens": toks}, err)
	}))
	m.HandleFunc("DELETE /admin/tokens/{id}", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		tok, err := s.RevokeToken(r.Context(), a, r.PathValue("id"))
		s.respond(w, r, tok, err)
	}))
}

// CreateToken mints an agent token; the token and its audit record are
// one write.
func (s *Server) CreateToken(ctx context.Context, a Actor, in TokenRequest) (TokenCreated, error) {
	const op = "admin.token.create"
	for field, list := range map[string][]string{"actsAs": in.ActsAs, "read": in.Read, "write": in.Write} {
		if len(list) > MaxTokenPrefixes {
			return TokenCreated{}, vp.Errorf(op, vp.KindInvalid, field, "%d entries: at most %d", len(list), MaxTokenPrefixes)
		}
	}
	switch {
	case len(in.ActsAs) == 0:
		return TokenCreated{}, vp.E(op, vp.KindInvalid, "actsAs", "required: the orchestrators the token may act as, or \"*\"")
	case len(in.Label) > MaxTokenLabelBytes:
		return TokenCreated{}, vp.Errorf(op, vp.KindInvalid, "label", "%d bytes: at most %d", len(in.Label), MaxTokenLabelBytes)
	case in.TTLSeconds < 0 || time.Duration(in.TTLSeconds)*time.Second > MaxTokenTTL:
		return TokenCreated{}, vp.Errorf(op, vp.KindInvalid, "ttlSeconds", "%d: want 0 (no expiry) up to %d", in.TTLSeconds, int64(MaxTokenTTL/time.Second))
	}
	secret, tok, put, err := s.tokens.Prepare(auth.Spec{Tenant: in.Tenant, ActsAs: in.ActsAs, ReadPrefixes: in.Read, WritePrefixes: in.Write,
		Label: in.Label, ToolProfile: in.ToolProfile, TTL: time.Duration(in.TTLSeconds) * time.Second})
	if err != nil {
		return TokenCreated{}, err
	}
	rec := AuditRecord{Action: "admin.token.create", Actor: a.ID, IP: a.IP, UserAgent: a.UserAgent, Tenant: tok.Tenant, TokenID: tok.ID,
		Detail: "acts as " + strings.Join(tok.ActsAs, ",")}
	if err := s.st.Write(ctx, put, s.auditOp(rec)); err != nil {
		return TokenCreated{}, vp.Wrap(op, vp.KindInternal, err)
	}
	return TokenCreated{Token: secret, Record: tok}, nil
}

// RevokeToken revokes a token by id and audits it.
func (s *Server) RevokeToken(ctx context.Context, a Actor, id string) (auth.Token, error) {
	tok, err := s.tokens.Revoke(ctx, id)
	if err != nil {
		return auth.Token{}, err
	}
	s.audit(ctx, AuditRecord{Action: "admin.token.revoke", Actor: a.ID, IP: a.IP, UserAgent: a.UserAgent, Tenant: tok.Tenant, TokenID: tok.ID})
	return tok, nil
}
