package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// writeRefusal answers 401 with the reason in both the WWW-Authenticate
// header (RFC 6750 §3: what MCP hosts show) and the JSON body. A request
// with no token gets no error code (§3.1), only the challenge.
func writeRefusal(w http.ResponseWriter, metadataURL string, r *auth.RefusedError) {
	desc := r.Description()
	challenge := `Bearer resource_metadata="` + metadataURL + `", scope="` + vp.ScopeFull + `"`
	if r.Reason != auth.ReasonMissing {
		// A quoted-string may not hold '"' or '\\'; the descriptions never do,
		// but the header must stay well-formed whatever they say.
		challenge += `, error="invalid_token", error_description="` + strings.NewReplacer(`"`, "'", `\\`, "/").Replace(desc) + `"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token", "error_description": desc})
}

// refusalLog logs refused tokens, at most one line per token (or, for
// tokens that matched none, per reason) and minute: a client retrying a
// revoked token in a loop must not flood the log. It logs the token id,
// never the secret.
type refusalLog struct {
	out  *slog.Logger
	now  func() time.Time
	mu   sync.Mutex
	last map[string]time.Time
}

func newRefusalLog(log *slog.Logger, now func() time.Time) *refusalLog {
	return &refusalLog{out: log, now: now, last: map[string]time.Time{}}
}

// refusalEvery is the least time between two lines about one token.
const refusalEvery = time.Minute

func (l *refusalLog) log(ctx context.Context, r *auth.RefusedError) {
	key := r.TokenID
	if key == "" {
		key = string(r.Reason)
	}
	now := l.now()
	l.mu.Lock()
	if t, ok := l.last[key]; ok && now.Sub(t) < refusalEvery {
		l.mu.Unlock()
		return
	}
	if len(l.last) >= 4096 { // many distinct tokens: forget the old ones
		for k, t := range l.last {
			if now.Sub(t) >= refusalEvery {
				delete(l.last, k)
			}
		}
	}
	l.last[key] = now
	l.mu.Unlock()
	attrs := []any{"reason", string(r.Reason)}
	if r.TokenID != "" {
		attrs = append(attrs, "tokenId", r.TokenID)
	}
	l.out.WarnContext(ctx, "token refused", attrs...)
}
