package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// A refused token's holder reads why in WWW-Authenticate and the body; the
// log gets one line per token per minute, with the token id, never the
// secret.
func TestRefusalsSayWhyAndAreLoggedOncePerToken(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	toks := auth.New(auth.Options{Store: st})
	expired, expTok, _ := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"alice"}, TTL: time.Millisecond})
	revoked, revTok, _ := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"bob"}})
	if _, err := toks.Revoke(ctx, revTok.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	var logs syncBuffer
	srv := httptest.NewServer(httpapi.New(httpapi.Options{
		MCP: mcpserver.New(mcpserver.Options{Toolsets: []mcpserver.Toolset{mcpserver.ProfileTools(&profile.Service{})}, Version: "t"}), Tokens: toks, Version: "t", Started: time.Now(),
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	}))
	defer srv.Close()
	for _, c := range []struct {
		name, auth, want string
		challenge        bool // error= and error_description in WWW-Authenticate
	}{
		{"missing", "", "no bearer token", false},
		{"malformed", "Bearer abc", "malformed", true},
		{"unknown", "Bearer " + auth.NewSecret(), "not known to this server", true},
		{"expired", "Bearer " + expired, "token " + expTok.ID + " expired on ", true},
		{"revoked", "Bearer " + revoked, "token " + revTok.ID + " was revoked on ", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for range 3 {
				req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
				if c.auth != "" {
					req.Header.Set("Authorization", c.auth)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				var body struct{ Error, ErrorDescription string }
				_ = json.Unmarshal(bytes.ReplaceAll(raw, []byte("error_description"), []byte("errorDescription")), &body)
				wa := res.Header.Get("WWW-Authenticate")
				if res.StatusCode != 401 || body.Error != "invalid_token" || !strings.Contains(body.ErrorDescription, c.want) {
					t.Fatalf("%d %s, want 401 invalid_token saying %q", res.StatusCode, raw, c.want)
				}
				if got := strings.Contains(wa, `error_description="`) && strings.Contains(wa, c.want); got != c.challenge || !strings.Contains(wa, "resource_metadata=") {
					t.Fatalf("WWW-Authenticate %q: error_description with %q = %v, want %v", wa, c.want, got, c.challenge)
				}
			}
		})
	}
	out := logs.String()
	for _, secret := range []string{expired, revoked} {
		if strings.Contains(out, secret) {
			t.Fatal("a refused secret was logged")
		}
	}
	for _, c := range []struct{ needle string }{{`"tokenId":"` + expTok.ID + `"`}, {`"tokenId":"` + revTok.ID + `"`}, {`"reason":"unknown"`}, {`"reason":"malformed"`}, {`"reason":"missing"`}} {
		if n := strings.Count(out, c.needle); n != 1 {
			t.Errorf("%d log lines with %s for 3 refusals within a minute, want 1:\n%s", n, c.needle, out)
		}
	}
}
