package oauth

import (
	"net/http"

	"github.com/vantagepeers/vantagepeers/shared/admintokens"
	"github.com/vantagepeers/vantagepeers/shared/store"
)

// adminTokenRoutes lends the token endpoints the admin API's master-token
// check, audit log and answers.
func (s *Server) adminTokenRoutes(m *http.ServeMux) {
	admintokens.Routes(m, admintokens.Hooks{Tokens: s.tokens, Store: s.st, Decode: decodeBody, Respond: s.respond,
		Admin: func(h func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
			return s.admin(func(w http.ResponseWriter, r *http.Request, a Actor) { h(w, r, a.ID) })
		},
		Audit: func(r *http.Request, actor, action, tenant, tokenID, detail string) store.Op {
			return s.auditOp(AuditRecord{Action: action, Actor: actor, IP: s.clientIP(r), UserAgent: r.UserAgent(), Tenant: tenant, TokenID: tokenID, Detail: detail})
		},
	})
}
