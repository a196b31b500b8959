package gitguardtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Conflict is one reservation as check_paths answers it. It is the
// server's wire shape written again, not the guard's type: a field the
// guard misnames fails its tests.
type Conflict struct {
	ReservationID string   `json:"reservationId"`
	Holder        string   `json:"holder"`
	Paths         []string `json:"paths"`
	Exclusive     bool     `json:"exclusive"`
	ExpiresAt     int64    `json:"expiresAt"` // unix ms
	Reason        string   `json:"reason"`
}

type checkPathsResult struct {
	Conflicts []Conflict `json:"conflicts"`
}

// FakeReservation is one reservation the fake server holds.
type FakeReservation struct {
	Conflict
	Project string
}

// FakeReservations is a faithful stand-in for the server's check_paths:
// the official go-sdk server over stateless Streamable HTTP behind the
// SDK's bearer-token middleware, as /mcp is served, answering with the
// reservations of other agents in the project whose globs match a path.
type FakeReservations struct {
	Tokens map[string]string // token → agent
	Held   []FakeReservation
	Status int // when set, every request gets it
	Delay  time.Duration
	Refuse string // when set, check_paths fails with it

	mu    sync.Mutex
	calls []FakeCall
}

// FakeCall is one call of check_paths the fake answered: by whom, with
// what, and the Authorization header it came with.
type FakeCall struct {
	Agent, Project string
	Paths          []string
	Auth           string
}

type checkPathsArgs struct {
	Project   string   `json:"project"`
	Paths     []string `json:"paths"`
	Exclusive *bool    `json:"exclusive,omitempty"` // as the server: default true; false, only exclusive ones conflict
}

// Serve starts the fake until the test ends and returns its MCP URL.
func (f *FakeReservations) Serve(t testing.TB) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "fake-vantagepeers"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "check_paths"}, func(ctx context.Context, req *mcp.CallToolRequest, in checkPathsArgs) (*mcp.CallToolResult, checkPathsResult, error) {
		agent := req.Extra.TokenInfo.UserID
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, FakeCall{Agent: agent, Project: in.Project, Paths: in.Paths, Auth: req.Extra.Header.Get("Authorization")})
		if f.Refuse != "" {
			return nil, checkPathsResult{}, errors.New(f.Refuse)
		}
		if in.Project == "" || len(in.Paths) == 0 || len(in.Paths) > 32 {
			return nil, checkPathsResult{}, fmt.Errorf("invalid_argument: paths: 1 to 32 paths (got %d)", len(in.Paths))
		}
		for _, p := range in.Paths {
			// The server parses each path as a reservation glob, which
			// has no escapes.
			if len(p) > 512 || strings.ContainsAny(p, "[]{}\\") || strings.ContainsFunc(p, unicode.IsControl) || !utf8.ValidString(p) {
				return nil, checkPathsResult{}, fmt.Errorf("invalid_argument: paths: %q: not a glob of the reservation language", p)
			}
		}
		out := checkPathsResult{Conflicts: []Conflict{}}
		for _, r := range f.Held {
			onlyExclusive := in.Exclusive != nil && !*in.Exclusive
			if r.Project == in.Project && r.Holder != agent && (r.Exclusive || !onlyExclusive) && slices.ContainsFunc(in.Paths, func(p string) bool { return globsMatch(r.Paths, p) }) {
				out.Conflicts = append(out.Conflicts, r.Conflict)
			}
		}
		return nil, out, nil
	})
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if a, ok := f.Tokens[tok]; ok {
			return &auth.TokenInfo{UserID: a, Expiration: time.Now().Add(time.Hour)}, nil
		}
		return nil, auth.ErrInvalidToken
	}
	h := auth.RequireBearerToken(verify, nil)(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		status, delay := f.Status, f.Delay
		f.mu.Unlock()
		if delay > 0 {
			// Read first: the server notices a client that hung up only
			// once the body is read.
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if status != 0 {
			http.Error(w, "fake outage", status)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// globsMatch: "dir/**" is everything under dir, else path.Match.
func globsMatch(globs []string, p string) bool {
	for _, g := range globs {
		if dir, ok := strings.CutSuffix(g, "/**"); ok && strings.HasPrefix(p, dir+"/") {
			return true
		}
		if ok, _ := path.Match(g, p); ok {
			return true
		}
	}
	return false
}

// Calls are the calls of check_paths so far.
func (f *FakeReservations) Calls() []FakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}
