package oauth

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The admin endpoints take the master token only. A refused call is
// audited.
func (s *Server) adminRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /admin/oauth/clients", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		cs, err := s.ListClients(r.Context())
		s.respond(w, r, map[string]any{"clients": cs}, err)
	}))
	m.HandleFunc("POST /admin/oauth/elevate", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		var in struct {
			ClientID string `json:"clientId"`
			Profile  string `json:"scopeProfile"`
			Tenant   string `json:"tenant"`
		}
		if !decodeBody(w, r, &in) {
			return
		}
		c, err := s.Elevate(r.Context(), a, in.ClientID, in.Profile, in.Tenant)
		s.respond(w, r, c, err)
	}))
	m.HandleFunc("DELETE /admin/oauth/clients/{id...}", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		res, err := s.DeleteClient(r.Context(), a, r.PathValue("id"))
		s.respond(w, r, res, err)
	}))
	m.HandleFunc("GET /admin/oauth/profiles", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		ps, err := s.ListProfiles(r.Context())
		s.respond(w, r, map[string]any{"profiles": ps}, err)
	}))
	m.HandleFunc("GET /admin/oauth/profiles/{id}", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		p, err := s.GetProfile(r.Context(), r.PathValue("id"))
		s.respond(w, r, p, err)
	}))
	m.HandleFunc("PUT /admin/oauth/profiles/{id}", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		var p Profile
		if !decodeBody(w, r, &p) {
			return
		}
		if p.ID != "" && p.ID != r.PathValue("id") {
			s.respond(w, r, nil, vp.E("oauth.profile.put", vp.KindInvalid, "profileId", "differs from the id in the URL"))
			return
		}
		p.ID = r.PathValue("id")
		p, err := s.PutProfile(r.Context(), a, p)
		s.respond(w, r, p, err)
	}))
	m.HandleFunc("DELETE /admin/oauth/profiles/{id}", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		err := s.DeleteProfile(r.Context(), a, r.PathValue("id"))
		s.respond(w, r, map[string]any{"deleted": err == nil}, err)
	}))
	m.HandleFunc("POST /admin/oauth/seed-profiles", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		created, err := s.SeedProfiles(r.Context(), a)
		s.respond(w, r, map[string]any{"created": created}, err)
	}))
	m.HandleFunc("GET /admin/audit", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		if limit == 0 {
			limit = 200
		}
		day := r.URL.Query().Get("day")
		if day == "" {
			day = s.now().UTC().Format(AuditDayLayout)
		}
		recs, err := s.ListAudit(r.Context(), day, limit)
		s.respond(w, r, map[string]any{"day": day, "records": recs}, err)
	}))
	m.HandleFunc("PUT /admin/clerk/users/{sub}", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		var in struct {
			Tenant string `json:"tenant"`
		}
		if !decodeBody(w, r, &in) {
			return
		}
		err := s.MapClerkUser(r.Context(), a, r.PathValue("sub"), in.Tenant)
		s.respond(w, r, map[string]any{"clerkUserId": r.PathValue("sub"), "tenant": in.Tenant}, err)
	}))
	s.adminTokenRoutes(m)
	m.HandleFunc("/admin/", s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "error_description": "no admin endpoint " + r.Method + " " + r.URL.Path})
	}))
}

// admin authenticates the master token.
func (s *Server) admin(h func(http.ResponseWriter, *http.Request, Actor)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a := Actor{IP: s.clientIP(r), UserAgent: r.UserAgent()}
		secret, ok := auth.ParseBearer(r.Header.Get("Authorization")) // the scheme is case-insensitive (RFC 7235)
		if !ok {
			s.audit(r.Context(), AuditRecord{Action: "admin.call", Outcome: "refused", Detail: r.Method + " " + r.URL.Path + ": no bearer token", IP: a.IP, UserAgent: a.UserAgent})
			w.Header().Set("WWW-Authenticate", `Bearer realm="vantagepeers-admin"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token", "error_description": "the admin endpoints need the master token: Authorization: Bearer <master token>"})
			return
		}
		p, err := s.tokens.Resolve(r.Context(), secret)
		if err != nil && !errors.Is(err, auth.ErrInvalidToken) {
			s.log.ErrorContext(r.Context(), "resolving an admin token", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "temporarily_unavailable", "error_description": "could not check the token; retry"})
			return
		}
		if err != nil {
			// Each refused token cost a store read: an address's are counted,
			// and answered 429 past the limit. Valid tokens are not counted.
			if d := s.lim.Check(r, s.lim.Rules().AuthFailure); !d.Allowed {
				ratelimit.Refuse(w, d, "rate_limited", d.Message("refused bearer tokens"))
				return
			}
		}
		if err != nil || p.TokenID != "master" {
			status, desc := http.StatusUnauthorized, "the token is not valid"
			if err == nil {
				status, desc = http.StatusForbidden, "only the master token may call the admin endpoints"
			}
			s.audit(r.Context(), AuditRecord{Action: "admin.call", Outcome: "refused", Actor: p.TokenID, Tenant: p.Tenant, Detail: r.Method + " " + r.URL.Path + ": " + desc, IP: a.IP, UserAgent: a.UserAgent})
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="vantagepeers-admin", error="invalid_token"`)
			}
			writeJSON(w, status, map[string]string{"error": map[int]string{401: "invalid_token", 403: "forbidden"}[status], "error_description": desc})
			return
		}
		a.ID = "master"
		h(w, r, a)
	}
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	limitBody(w, r, maxRegisterBytes)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if tooLarge(w, err) {
			return false
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "the body must be a JSON object: " + err.Error()})
		return false
	}
	return true
}

// respond writes v, or err with the status of its kind.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err == nil {
		writeJSON(w, http.StatusOK, v)
		return
	}
	status := map[vp.Kind]int{
		vp.KindInvalid: http.StatusBadRequest, vp.KindNotFound: http.StatusNotFound, vp.KindConflict: http.StatusConflict,
		vp.KindForbidden: http.StatusForbidden, vp.KindUnauthorized: http.StatusUnauthorized, vp.KindTooLarge: http.StatusRequestEntityTooLarge,
	}[vp.KindOf(err)]
	if status == 0 {
		s.log.ErrorContext(r.Context(), "admin call failed", "path", r.URL.Path, "err", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error", "error_description": "internal error; it was logged — retry"})
		return
	}
	writeJSON(w, status, map[string]string{"error": vp.KindOf(err).String(), "error_description": err.Error()})
}
