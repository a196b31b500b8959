package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
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

// fakeReservation is one reservation the fake server holds.
type fakeReservation struct {
	pathConflict
	project string
}

// fakeReservations is a faithful stand-in for the server's check_paths:
// the official go-sdk server over stateless Streamable HTTP behind the
// SDK's bearer-token middleware, as /mcp is served, answering with the
// reservations of other agents in the project whose globs match a path.
type fakeReservations struct {
	tokens map[string]string // token → agent
	mu     sync.Mutex
	held   []fakeReservation
	calls  []fakeCall
	status int // when set, every request gets it
	delay  time.Duration
	refuse string // when set, check_paths fails with it
}

type fakeCall struct {
	agent, project string
	paths          []string
	auth           string
}

type checkPathsArgs struct {
	Project   string   `json:"project"`
	Paths     []string `json:"paths"`
	Exclusive *bool    `json:"exclusive,omitempty"` // as the server: default true; false, only exclusive ones conflict
}

func (f *fakeReservations) serve(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "fake-vantagepeers"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "check_paths"}, func(ctx context.Context, req *mcp.CallToolRequest, in checkPathsArgs) (*mcp.CallToolResult, checkPathsResult, error) {
		agent := req.Extra.TokenInfo.UserID
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, fakeCall{agent: agent, project: in.Project, paths: in.Paths, auth: req.Extra.Header.Get("Authorization")})
		if f.refuse != "" {
			return nil, checkPathsResult{}, errors.New(f.refuse)
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
		out := checkPathsResult{Conflicts: []pathConflict{}}
		for _, r := range f.held {
			onlyExclusive := in.Exclusive != nil && !*in.Exclusive
			if r.project == in.Project && r.Holder != agent && (r.Exclusive || !onlyExclusive) && slices.ContainsFunc(in.Paths, func(p string) bool { return globsMatch(r.Paths, p) }) {
				out.Conflicts = append(out.Conflicts, r.pathConflict)
			}
		}
		return nil, out, nil
	})
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if a, ok := f.tokens[tok]; ok {
			return &auth.TokenInfo{UserID: a, Expiration: time.Now().Add(time.Hour)}, nil
		}
		return nil, auth.ErrInvalidToken
	}
	h := auth.RequireBearerToken(verify, nil)(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		status, delay := f.status, f.delay
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

func (f *fakeReservations) allCalls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// stage writes and stages files in dir.
func stage(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		writeFile(t, filepath.Join(dir, f), f+"\n")
	}
	gitOK(t, dir, append([]string{"add", "--"}, files...)...)
}

// The check against a fake server: bob's staged paths under alice's
// exclusive reservation refuse the commit naming her, the paths, the
// expiry and the reason; the paths sent are every staged path (both sides
// of a rename) with bob's own token; shared reservations and bob's own do
// not refuse; many paths go in batches.
func TestGuardCheckAgainstFakeMCPServer(t *testing.T) {
	dir := newRepo(t)
	now := time.Now()
	expires := now.Add(23*time.Minute + 20*time.Second)
	f := &fakeReservations{tokens: map[string]string{"tok-alice": "alice", "tok-bob": "bob"}, held: []fakeReservation{
		{project: "web", pathConflict: pathConflict{ReservationID: "r-alice", Holder: "alice", Paths: []string{"src/api/**"},
			Exclusive: true, ExpiresAt: expires.UnixMilli(), Reason: "refactoring the API"}},
		{project: "web", pathConflict: pathConflict{ReservationID: "r-carol", Holder: "carol", Paths: []string{"docs/*.md"},
			ExpiresAt: expires.UnixMilli(), Reason: "proofreading"}},
		{project: "web", pathConflict: pathConflict{ReservationID: "r-bob", Holder: "bob", Paths: []string{"cmd/**"},
			Exclusive: true, ExpiresAt: expires.UnixMilli()}},
		{project: "other", pathConflict: pathConflict{ReservationID: "r-dave", Holder: "dave", Paths: []string{"**"}, Exclusive: true}},
	}}
	u := f.serve(t)
	check := func(token string) (string, error) {
		var stderr bytes.Buffer
		err := guardCheck(context.Background(), guardCheckOptions{Dir: dir, Project: "web", URL: u, Token: token,
			FailOpen: true, Now: func() time.Time { return now }}, &stderr)
		return stderr.String(), err
	}

	stage(t, dir, "src/old.go")
	gitOK(t, dir, "commit", "-q", "-m", "old")
	if err := os.MkdirAll(filepath.Join(dir, "src", "api"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitOK(t, dir, "mv", "src/old.go", "src/api/users.go")
	out, err := check("tok-bob")
	if err == nil {
		t.Fatalf("bob's rename into alice's exclusive paths was let through: %s", out)
	}
	for _, want := range []string{"alice holds src/api/** exclusively", "until " + time.UnixMilli(expires.UnixMilli()).UTC().Format(time.RFC3339),
		"(in 23 min)", "refactoring the API", "r-alice", "--no-verify"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	calls := f.allCalls()
	if len(calls) != 1 || calls[0].agent != "bob" || calls[0].auth != "Bearer tok-bob" || calls[0].project != "web" ||
		!slices.Equal(calls[0].paths, []string{"src/api/users.go", "src/old.go"}) {
		t.Fatalf("the server saw %+v; want one call by bob with both sides of the rename", calls)
	}
	if _, err := check("tok-alice"); err != nil {
		t.Fatalf("alice's commit of her own reserved paths: %v", err)
	}
	gitOK(t, dir, "reset", "-q", "--hard")

	stage(t, dir, "docs/guide.md", "cmd/main.go")
	out, err = check("tok-bob")
	if err != nil || out != "" {
		t.Fatalf("a shared reservation and bob's own: %v, %q; want the commit through", err, out)
	}
	gitOK(t, dir, "reset", "-q", "--hard")

	var many []string
	for i := range 250 {
		many = append(many, fmt.Sprintf("gen/f%03d.txt", i))
	}
	many = append(many, "src/api/z.go")
	stage(t, dir, many...)
	before := len(f.allCalls())
	out, err = check("tok-bob")
	calls = f.allCalls()[before:]
	var sent []string
	for _, c := range calls {
		sent = append(sent, c.paths...)
	}
	slices.Sort(many)
	if err == nil || strings.Count(out, "alice holds") != 1 || len(calls) != 8 || !slices.Equal(sent, many) {
		t.Fatalf("251 paths: %v, %d calls, %d paths sent, %d refusal lines; want a refusal naming alice once, 8 calls of at most 32, every path once",
			err, len(calls), len(sent), strings.Count(out, "alice holds"))
	}
}

// What the committer sees when the server does not answer as it should:
// no answer, a 5xx, a timeout let the commit through with a warning (and
// refuse it with --fail-open=false); a refused token, a missing token, a
// tool error and a wrong URL always refuse it.
func TestGuardCheckFailuresAgainstFakeMCPServer(t *testing.T) {
	dir := newRepo(t)
	stage(t, dir, "a.go")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/mcp"
	_ = ln.Close()

	for _, c := range []struct {
		name       string
		setup      func(f *fakeReservations)
		url        func(u string) string
		token      string
		through    bool   // failing open, the commit goes through
		want       string // in the warning or the error
		maxLatency time.Duration
	}{
		{name: "unreachable", url: func(string) string { return closed }, through: true, want: "connection refused"},
		{name: "503", setup: func(f *fakeReservations) { f.status = 503 }, through: true, want: "answered 503 Service Unavailable"},
		{name: "502", setup: func(f *fakeReservations) { f.status = 502 }, through: true, want: "answered 502"},
		{name: "timeout", setup: func(f *fakeReservations) { f.delay = 5 * time.Second }, through: true, want: "no answer from", maxLatency: 2 * time.Second},
		{name: "401", token: "tok-stolen", want: "VP_TOKEN is refused"},
		{name: "no token", token: "-", want: "VP_TOKEN is not set"},
		{name: "404", url: func(u string) string { return strings.TrimSuffix(u, "/mcp") + "/nope" }, setup: func(f *fakeReservations) { f.status = 404 }, want: "404"},
		{name: "tool error", setup: func(f *fakeReservations) { f.refuse = "invalid_argument: project: no such project" },
			want: "refused check_paths: invalid_argument: project: no such project"},
	} {
		for _, failOpen := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/fail-open=%v", c.name, failOpen), func(t *testing.T) {
				f := &fakeReservations{tokens: map[string]string{"tok-bob": "bob"}}
				if c.setup != nil {
					c.setup(f)
				}
				u := f.serve(t)
				if c.url != nil {
					u = c.url(u)
				}
				tok := c.token
				switch tok {
				case "":
					tok = "tok-bob"
				case "-":
					tok = ""
				}
				var stderr bytes.Buffer
				o := guardCheckOptions{Dir: dir, Project: "web", URL: u, Token: tok, FailOpen: failOpen, Timeout: 500 * time.Millisecond}
				start := time.Now()
				err := guardCheck(context.Background(), o, &stderr)
				took := time.Since(start)
				text := stderr.String()
				if err != nil {
					text += err.Error()
				}
				if through := err == nil; through != (c.through && failOpen) {
					t.Fatalf("commit let through %v, want %v: %s", through, c.through && failOpen, text)
				}
				if !strings.Contains(text, c.want) {
					t.Errorf("the message does not say %q: %s", c.want, text)
				}
				if c.through && failOpen && !strings.Contains(text, "warning") {
					t.Errorf("let through without a warning: %q", text)
				}
				if c.maxLatency > 0 && took > c.maxLatency {
					t.Errorf("took %v, want under %v: %s", took, c.maxLatency, text)
				}
			})
		}
	}
}

// The command line: guard check reads VP_TOKEN and checks the repository
// of the current directory; the exit status is 1 for a conflict, 0 for an
// unreachable server; --staged is required.
func TestGuardCommandLineAgainstFakeMCPServer(t *testing.T) {
	dir := newRepo(t)
	f := &fakeReservations{tokens: map[string]string{"tok-bob": "bob"}, held: []fakeReservation{
		{project: "web", pathConflict: pathConflict{ReservationID: "r1", Holder: "alice", Paths: []string{"*.go"}, Exclusive: true,
			ExpiresAt: time.Now().Add(time.Hour).UnixMilli(), Reason: "ports"}}}}
	u := f.serve(t)
	stage(t, dir, "main.go")
	t.Chdir(dir)
	t.Setenv("VP_TOKEN", "tok-bob")
	status := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		s := exitStatus(&errb, run(context.Background(), args, strings.NewReader(""), &out, &errb))
		return s, out.String() + errb.String()
	}
	if s, out := status("guard", "check", "--staged", "--project", "web", "--url", u); s != 1 || !strings.Contains(out, "alice holds *.go") {
		t.Fatalf("conflict: exit %d, %q; want 1 naming alice", s, out)
	}
	if s, out := status("guard", "check", "--project", "web", "--url", u); s != 1 || !strings.Contains(out, "--staged is required") {
		t.Fatalf("without --staged: exit %d, %q", s, out)
	}
	if s, out := status("guard", "check", "--staged", "--project", "web", "--url", "http://127.0.0.1:1/mcp", "--timeout", "2s"); s != 0 || !strings.Contains(out, "warning") {
		t.Fatalf("unreachable: exit %d, %q; want 0 with a warning", s, out)
	}
	if s, out := status("guard", "install", "--project", "web"); s != 1 || !strings.Contains(out, "--url") {
		t.Fatalf("install without --url: exit %d, %q", s, out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused install wrote a hook: %v", err)
	}
}

// Names the glob language cannot write (a Next.js route, a newline)
// reach the fake server, which parses globs as the real one does, as
// valid globs: the commit is checked, and refused for alice's paths.
func TestGuardCheckOddNamesAgainstFakeMCPServer(t *testing.T) {
	dir := newRepo(t)
	f := &fakeReservations{tokens: map[string]string{"tok-bob": "bob"}, held: []fakeReservation{
		{project: "web", pathConflict: pathConflict{ReservationID: "r1", Holder: "alice", Paths: []string{"app/**"}, Exclusive: true,
			ExpiresAt: time.Now().Add(time.Hour).UnixMilli()}}}}
	u := f.serve(t)
	check := func() error {
		return guardCheck(context.Background(), guardCheckOptions{Dir: dir, Project: "web", URL: u, Token: "tok-bob"}, io.Discard)
	}
	stage(t, dir, "pages/[id].tsx", "pages/{a,b}\\n.md", "new\nline.txt")
	if err := check(); err != nil {
		t.Fatalf("odd names outside any reservation: %v", err)
	}
	stage(t, dir, "app/[slug]/page.tsx")
	if err := check(); err == nil || !strings.Contains(err.Error(), "commit refused") {
		t.Fatalf("app/[slug]/page.tsx under alice's app/**: %v; want the commit refused", err)
	}
}
