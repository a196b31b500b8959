package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/oauth/consent"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The consent page has two steps: the person signs in with their token,
// then sees what the client will get and approves. The token is not sent
// back to the browser between the steps: the review page carries a ticket,
// the signed hash of the token (its store key, not its secret) bound to
// this authorization request, valid ticketTTL. The approval re-reads the
// token by that hash, so a token revoked meanwhile approves nothing.

const ticketTTL = 10 * time.Minute

// signIn is who signs in: a pasted token, or the ticket of the review
// page. hash is the token's SHA-256, the master token's too: the grant
// names it as its approver and ends when it is revoked, expires or (the
// master token) is rotated. A refusal is a status and the page's message.
func (s *Server) signIn(ctx context.Context, form url.Values, q authzRequest, t texts) (p vp.Principal, hash string, status int, msg string) {
	if tk := form.Get("ticket"); tk != "" && form.Get("token") == "" {
		hash, ok, err := s.checkTicket(ctx, q, tk)
		if err != nil {
			s.log.ErrorContext(ctx, "checking a consent ticket", "err", err)
			return p, "", http.StatusServiceUnavailable, t.ServerError
		}
		if !ok {
			return p, "", http.StatusBadRequest, t.Expired
		}
		tok, err := s.tokens.Live(ctx, hash)
		if errors.Is(err, auth.ErrInvalidToken) {
			return p, "", http.StatusUnauthorized, t.BadToken
		}
		if err != nil {
			s.log.ErrorContext(ctx, "reading the sign-in token", "err", err)
			return p, "", http.StatusServiceUnavailable, t.ServerError
		}
		return tok.Principal(), hash, 0, ""
	}
	secret := strings.TrimSpace(form.Get("token"))
	p, err := s.tokens.Resolve(ctx, secret)
	if errors.Is(err, auth.ErrInvalidToken) {
		return p, "", http.StatusUnauthorized, t.BadToken
	}
	if err != nil {
		s.log.ErrorContext(ctx, "resolving the sign-in token", "err", err)
		return p, "", http.StatusServiceUnavailable, t.ServerError
	}
	return p, auth.HashHex(secret), 0, ""
}

// consentLimit bounds the consent form's submissions of one address: those
// that try a token (Rules.Consent, few: guessing tokens is what it stops)
// apart from approvals by ticket, which try none (Rules.Authorize), so that
// a person's two steps count once. It reports whether it answered.
func (s *Server) consentLimit(w http.ResponseWriter, r *http.Request) bool {
	rule, what := s.lim.Rules().Consent, "consent submissions"
	if r.PostForm.Get("token") == "" && r.PostForm.Get("ticket") != "" {
		rule, what = s.lim.Rules().Authorize, "authorization requests"
	}
	if d := s.lim.Check(r, rule); !d.Allowed {
		ratelimit.Refuse(w, d, "rate_limited", d.Message(what))
		return true
	}
	return false
}

// ticket signs hash for the authorization request q.
func (s *Server) ticket(ctx context.Context, q authzRequest, hash string) (string, error) {
	key, err := s.consentKey(ctx)
	if err != nil {
		return "", err
	}
	return consent.Ticket(key, hash, s.now().Add(ticketTTL), q.ClientID, q.RedirectURI, q.Challenge, q.Scope, q.Resource), nil
}

// checkTicket returns the hash a ticket carries, ok=false when it is not
// one this server signed for q or it has expired.
func (s *Server) checkTicket(ctx context.Context, q authzRequest, tk string) (hash string, ok bool, err error) {
	key, err := s.consentKey(ctx)
	if err != nil {
		return "", false, err
	}
	hash, ok = consent.OpenTicket(key, tk, s.now(), q.ClientID, q.RedirectURI, q.Challenge, q.Scope, q.Resource)
	return hash, ok, nil
}

// consentKey is the server's ticket key, made on first use and shared by
// every instance through the store.
func (s *Server) consentKey(ctx context.Context) ([]byte, error) {
	s.ticketKey.mu.Lock()
	defer s.ticketKey.mu.Unlock()
	if s.ticketKey.key == nil {
		k, err := auth.EnsureKey(ctx, s.st, "oauth-consent-ticket")
		if err != nil {
			return nil, err
		}
		s.ticketKey.key = k
	}
	return s.ticketKey.key, nil
}
