package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
)

// jsonrpcErrors makes malformed requests get JSON-RPC error objects, which
// MCP clients can read, instead of the SDK's plain-text HTTP 400s: -32700
// for a body that is not JSON (or not UTF-8, which a JSON decoder would
// otherwise silently rewrite to U+FFFD), -32601 for an unknown method, and
// -32600 for any other refusal.
func jsonrpcErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			writeRPCError(w, http.StatusRequestEntityTooLarge, -32600, "the request body is over the limit of "+itoa(MaxRequestBytes)+" bytes")
			return
		case isTimeout(err):
			w.Header().Set("Connection", "close")
			writeRPCError(w, http.StatusRequestTimeout, -32600, "the request body did not arrive in time: the whole body must be sent within the body read timeout")
			return
		case err != nil:
			writeRPCError(w, http.StatusBadRequest, -32600, "the request body could not be read")
			return
		}
		if p := mcpserver.ScanJSON(body, mcpserver.EnvelopeDepth, false); p != nil {
			code, msg := mcpserver.DepthError(p)
			writeRPCErrorID(w, http.StatusBadRequest, mcpserver.RequestIDShallow(body), code, msg)
			return
		}
		switch {
		case !utf8.Valid(body):
			writeRPCError(w, http.StatusBadRequest, -32700, "parse error: the request body is not valid UTF-8; send text as UTF-8")
			return
		case !json.Valid(body):
			writeRPCError(w, http.StatusBadRequest, -32700, "parse error: the request body is not valid JSON")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &plainErrorCatcher{ResponseWriter: w, id: requestID(body)}
		next.ServeHTTP(rec, r)
		rec.flush()
	})
}

// plainErrorCatcher holds back a text/plain 4xx answer so that it can be
// re-sent as a JSON-RPC error; anything else passes straight through.
type plainErrorCatcher struct {
	http.ResponseWriter
	status  int
	caught  bool
	message bytes.Buffer
	id      json.RawMessage // the request's id, echoed in the error
}

func (c *plainErrorCatcher) WriteHeader(status int) {
	ct := c.Header().Get("Content-Type")
	if status >= 400 && status < 500 && (ct == "" || strings.HasPrefix(ct, "text/plain")) {
		c.status, c.caught = status, true
		return
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *plainErrorCatcher) Write(b []byte) (int, error) {
	if c.caught {
		return c.message.Write(b)
	}
	return c.ResponseWriter.Write(b)
}

func (c *plainErrorCatcher) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok && !c.caught {
		f.Flush()
	}
}

func (c *plainErrorCatcher) flush() {
	if !c.caught {
		return
	}
	msg := strings.TrimSpace(c.message.String())
	code := -32600
	if strings.Contains(msg, "not handled") || strings.Contains(msg, "unsupported") || strings.Contains(msg, "method not found") {
		code = -32601
	}
	c.Header().Del("Content-Length")
	writeRPCErrorID(c.ResponseWriter, c.status, c.id, code, msg)
}

// requestID returns the id of a single JSON-RPC request, or nil (null) when
// there is none to echo (a batch, a notification, an unreadable id).
func requestID(body []byte) json.RawMessage {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 {
		return nil
	}
	return req.ID
}

func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	writeRPCErrorID(w, status, nil, code, msg)
}

func writeRPCErrorID(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	var idv any = id
	if id == nil {
		idv = nil
	}
	writeJSON(w, status, map[string]any{
		"jsonrpc": "2.0", "id": idv,
		"error": map[string]any{"code": code, "message": msg},
	})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
