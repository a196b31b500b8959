package gitguard

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/gitguard/gitguardtest"
)

// The check against a fake server: bob's staged paths under alice's
// exclusive reservation refuse the commit naming her, the paths, the
// expiry and the reason; the paths sent are every staged path (both sides
// of a rename) with bob's own token; shared reservations and bob's own do
// not refuse; many paths go in batches.
func TestGuardCheckAgainstFakeMCPServer(t *testing.T) {
	dir := gitguardtest.NewRepo(t)
	now := time.Now()
	expires := now.Add(23*time.Minute + 20*time.Second)
	f := &gitguardtest.FakeReservations{Tokens: map[string]string{"tok-alice": "alice", "tok-bob": "bob"}, Held: []gitguardtest.FakeReservation{
		{Project: "web", Conflict: gitguardtest.Conflict{ReservationID: "r-alice", Holder: "alice", Paths: []string{"src/api/**"},
			Exclusive: true, ExpiresAt: expires.UnixMilli(), Reason: "refactoring the API"}},
		{Project: "web", Conflict: gitguardtest.Conflict{ReservationID: "r-carol", Holder: "carol", Paths: []string{"docs/*.md"},
			ExpiresAt: expires.UnixMilli(), Reason: "proofreading"}},
		{Project: "web", Conflict: gitguardtest.Conflict{ReservationID: "r-bob", Holder: "bob", Paths: []string{"cmd/**"},
			Exclusive: true, ExpiresAt: expires.UnixMilli()}},
		{Project: "other", Conflict: gitguardtest.Conflict{ReservationID: "r-dave", Holder: "dave", Paths: []string{"**"}, Exclusive: true}},
	}}
	u := f.Serve(t)
	check := func(token string) (string, error) {
		var stderr bytes.Buffer
		err := Check(context.Background(), CheckOptions{Dir: dir, Project: "web", URL: u, Token: token,
			FailOpen: true, Now: func() time.Time { return now }}, &stderr)
		return stderr.String(), err
	}

	gitguardtest.Stage(t, dir, "src/old.go")
	gitguardtest.GitOK(t, dir, "commit", "-q", "-m", "old")
	if err := os.MkdirAll(filepath.Join(dir, "src", "api"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitguardtest.GitOK(t, dir, "mv", "src/old.go", "src/api/users.go")
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
	calls := f.Calls()
	if len(calls) != 1 || calls[0].Agent != "bob" || calls[0].Auth != "Bearer tok-bob" || calls[0].Project != "web" ||
		!slices.Equal(calls[0].Paths, []string{"src/api/users.go", "src/old.go"}) {
		t.Fatalf("the server saw %+v; want one call by bob with both sides of the rename", calls)
	}
	if _, err := check("tok-alice"); err != nil {
		t.Fatalf("alice's commit of her own reserved paths: %v", err)
	}
	gitguardtest.GitOK(t, dir, "reset", "-q", "--hard")

	gitguardtest.Stage(t, dir, "docs/guide.md", "cmd/main.go")
	out, err = check("tok-bob")
	if err != nil || out != "" {
		t.Fatalf("a shared reservation and bob's own: %v, %q; want the commit through", err, out)
	}
	gitguardtest.GitOK(t, dir, "reset", "-q", "--hard")

	var many []string
	for i := range 250 {
		many = append(many, fmt.Sprintf("gen/f%03d.txt", i))
	}
	many = append(many, "src/api/z.go")
	gitguardtest.Stage(t, dir, many...)
	before := len(f.Calls())
	out, err = check("tok-bob")
	calls = f.Calls()[before:]
	var sent []string
	for _, c := range calls {
		sent = append(sent, c.Paths...)
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
	dir := gitguardtest.NewRepo(t)
	gitguardtest.Stage(t, dir, "a.go")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/mcp"
	_ = ln.Close()

	for _, c := range []struct {
		name       string
		setup      func(f *gitguardtest.FakeReservations)
		url        func(u string) string
		token      string
		through    bool   // failing open, the commit goes through
		want       string // in the warning or the error
		maxLatency time.Duration
	}{
		{name: "unreachable", url: func(string) string { return closed }, through: true, want: "connection refused"},
		{name: "503", setup: func(f *gitguardtest.FakeReservations) { f.Status = 503 }, through: true, want: "answered 503 Service Unavailable"},
		{name: "502", setup: func(f *gitguardtest.FakeReservations) { f.Status = 502 }, through: true, want: "answered 502"},
		{name: "timeout", setup: func(f *gitguardtest.FakeReservations) { f.Delay = 5 * time.Second }, through: true, want: "no answer from", maxLatency: 2 * time.Second},
		{name: "401", token: "tok-stolen", want: "VP_TOKEN is refused"},
		{name: "no token", token: "-", want: "VP_TOKEN is not set"},
		{name: "404", url: func(u string) string { return strings.TrimSuffix(u, "/mcp") + "/nope" }, setup: func(f *gitguardtest.FakeReservations) { f.Status = 404 }, want: "404"},
		{name: "tool error", setup: func(f *gitguardtest.FakeReservations) { f.Refuse = "invalid_argument: project: no such project" },
			want: "refused check_paths: invalid_argument: project: no such project"},
	} {
		for _, failOpen := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/fail-open=%v", c.name, failOpen), func(t *testing.T) {
				f := &gitguardtest.FakeReservations{Tokens: map[string]string{"tok-bob": "bob"}}
				if c.setup != nil {
					c.setup(f)
				}
				u := f.Serve(t)
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
				o := CheckOptions{Dir: dir, Project: "web", URL: u, Token: tok, FailOpen: failOpen, Timeout: 500 * time.Millisecond}
				start := time.Now()
				err := Check(context.Background(), o, &stderr)
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

// Names the glob language cannot write (a Next.js route, a newline)
// reach the fake server, which parses globs as the real one does, as
// valid globs: the commit is checked, and refused for alice's paths.
func TestGuardCheckOddNamesAgainstFakeMCPServer(t *testing.T) {
	dir := gitguardtest.NewRepo(t)
	f := &gitguardtest.FakeReservations{Tokens: map[string]string{"tok-bob": "bob"}, Held: []gitguardtest.FakeReservation{
		{Project: "web", Conflict: gitguardtest.Conflict{ReservationID: "r1", Holder: "alice", Paths: []string{"app/**"}, Exclusive: true,
			ExpiresAt: time.Now().Add(time.Hour).UnixMilli()}}}}
	u := f.Serve(t)
	check := func() error {
		return Check(context.Background(), CheckOptions{Dir: dir, Project: "web", URL: u, Token: "tok-bob"}, io.Discard)
	}
	gitguardtest.Stage(t, dir, "pages/[id].tsx", "pages/{a,b}\\n.md", "new\nline.txt")
	if err := check(); err != nil {
		t.Fatalf("odd names outside any reservation: %v", err)
	}
	gitguardtest.Stage(t, dir, "app/[slug]/page.tsx")
	if err := check(); err == nil || !strings.Contains(err.Error(), "commit refused") {
		t.Fatalf("app/[slug]/page.tsx under alice's app/**: %v; want the commit refused", err)
	}
}
