package httpapi

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// stepUp serves an OAuth client's request like admit, holding the answer
// back: when a tool call was refused for a right the client's grant lacks,
// the client is answered 403 with WWW-Authenticate: Bearer
// error="insufficient_scope" naming the scope (MCP authorization 2025-11-25,
// scope challenge), so that its host can ask the person again. The scope
// challenged is mcp:full plus the right: a host that replaces its scope
// with the challenge's (the TypeScript SDK does) keeps what it had. The
// server answers JSON, never a stream, so holding the body back delays
// nothing.
func stepUp(w http.ResponseWriter, r *http.Request, metadataURL, flightKey string, flight flights, next http.Handler) {
	su := &mcpserver.StepUp{}
	buf := &heldAnswer{header: http.Header{}}
	admit(buf, r.WithContext(mcpserver.WithStepUp(r.Context(), su)), flightKey, flight, next)
	scope, cause := su.Needed()
	if scope == "" {
		buf.release(w)
		return
	}
	if scope != vp.ScopeFull {
		scope = vp.ScopeFull + " " + scope
	}
	clean := strings.NewReplacer(`"`, "'", `\`, "/")
	w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+scope+`", resource_metadata="`+metadataURL+
		`", error_description="`+clean.Replace(cause)+`"`)
	writeJSON(w, http.StatusForbidden, map[string]string{"error": "insufficient_scope", "scope": scope,
		"error_description": cause + " — the client may ask the person to approve " + scope})
}

// heldAnswer keeps an answer until it is released.
type heldAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (h *heldAnswer) Header() http.Header { return h.header }

func (h *heldAnswer) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *heldAnswer) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return h.body.Write(b)
}

// Flush holds: the answer goes out whole, on release.
func (h *heldAnswer) Flush() {}

func (h *heldAnswer) release(w http.ResponseWriter) {
	for k, v := range h.header {
		w.Header()[k] = v
	}
	if h.status == 0 {
		h.status = http.StatusOK
	}
	w.WriteHeader(h.status)
	_, _ = w.Write(h.body.Bytes())
}
