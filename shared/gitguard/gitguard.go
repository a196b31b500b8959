// Package gitguard is the git guard: a pre-commit hook that asks the
// server (the MCP tool check_paths, with the agent's own token, over the
// go-sdk client) whether a staged path falls under another agent's
// exclusive reservation, and refuses the commit when one does. The
// command that declares it is in functions/vantagepeers.
package gitguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The hook's file names in the hooks directory. guardMarker in a
// pre-commit hook says it is ours: installing again rewrites it instead of
// chaining to it.
const (
	hookName = "pre-commit"
	// ChainedName is where install keeps a pre-commit hook that was not
	// ours; the hook runs it first.
	ChainedName = "pre-commit.vantagepeers-chained"
	guardMarker = "# vantagepeers guard hook"
	// checkBatch and maxGlobBytes are check_paths' limits
	// (reservation.MaxPaths, MaxGlobBytes): a commit of thousands of
	// files makes several calls, and a longer path is asked about as a
	// glob of its directory.
	checkBatch   = 32
	maxGlobBytes = 512
	// DefaultTimeout is how long check waits for the server unless told.
	DefaultTimeout = 5 * time.Second
)

// target checks what install and check share: the project and the
// MCP URL.
func target(op, project, rawURL string) error {
	if strings.TrimSpace(project) == "" || strings.ContainsFunc(project, unicode.IsControl) {
		return fmt.Errorf("%s: --project is required: the project the agents reserve paths in", op)
	}
	u, err := url.Parse(rawURL)
	if rawURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: --url %q: want the server's MCP URL, http(s)://HOST/mcp", op, rawURL)
	}
	return nil
}

// InstallOptions: Dir is a directory in the repository ("": the
// current one), Bin the binary the hook runs, FailOpen what the hook's
// check does when the server cannot answer.
type InstallOptions struct {
	Dir, Bin, Project, URL string
	FailOpen               bool
}

// Install writes the pre-commit hook where git runs hooks from, keeping a
// hook that was not ours as ChainedName, and says what it did on stdout.
func Install(ctx context.Context, o InstallOptions, stdout io.Writer) error {
	if err := target("guard install", o.Project, o.URL); err != nil {
		return err
	}
	// --git-path hooks is where git itself runs hooks from: core.hooksPath
	// when set (relative to the top of the work tree), the common git dir
	// of a linked worktree.
	out, err := gitOutput(ctx, o.Dir, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	if err != nil {
		return fmt.Errorf("guard install: not in a git repository: %w", err)
	}
	dir := strings.TrimRight(string(out), "\n")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("guard install: the hooks directory %s: %w", dir, err)
	}
	hook, chained := filepath.Join(dir, hookName), filepath.Join(dir, ChainedName)
	old, err := os.ReadFile(hook)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("guard install: %w", err)
	case !bytes.Contains(old, []byte(guardMarker)):
		if _, err := os.Lstat(chained); err == nil {
			// Another tool replaced our hook after an install: moving it
			// would lose the hook chained the first time.
			return fmt.Errorf("guard install: both %s (not ours) and %s exist; merge them by hand into %s, then install again",
				hook, chained, ChainedName)
		}
		if err := os.Rename(hook, chained); err != nil {
			return fmt.Errorf("guard install: keeping the existing hook: %w", err)
		}
		fmt.Fprintf(stdout, "kept the existing pre-commit hook as %s: it runs first\n", chained)
	}
	tmp := hook + ".vantagepeers-tmp"
	if err := os.WriteFile(tmp, []byte(hookScript(o)), 0o755); err != nil {
		return fmt.Errorf("guard install: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // the umask may have taken the x bits
		return err
	}
	if err := os.Rename(tmp, hook); err != nil {
		return fmt.Errorf("guard install: %w", err)
	}
	if u, _ := url.Parse(o.URL); u.Scheme == "http" && !isLoopback(u.Hostname()) {
		fmt.Fprintf(stdout, "warning: %s is plain http: every commit sends the agent's token (VP_TOKEN) across the network unencrypted; use https unless the network is yours\n", o.URL)
	}
	fmt.Fprintf(stdout, "installed %s: commits are checked against project %s's reservations at %s (VP_TOKEN: the agent's token)\n",
		hook, o.Project, o.URL)
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hookScript is the pre-commit hook. It runs the hook it replaced first;
// when the binary has moved it looks for vantagepeers on PATH, and finding
// neither it lets the commit through only when failing open.
func hookScript(o InstallOptions) string {
	missing := 1
	if o.FailOpen {
		missing = 0
	}
	return fmt.Sprintf(`#!/bin/sh
%s (written by vantagepeers guard install; installing again rewrites it).
# It refuses a commit whose staged paths another agent reserved; the hook that was
# here before, if any, is %s and runs first.
chained="$(dirname "$0")/%s"
if [ -x "$chained" ]; then
	# Without the agent's token: that hook (and the linters it starts) has no use for it.
	(unset VP_TOKEN; exec "$chained" "$@") || exit $?
fi
vp=%s
if [ ! -x "$vp" ]; then
	found=$(command -v vantagepeers) || {
		echo "vantagepeers guard: no vantagepeers binary at $vp nor on PATH: the commit is not checked" >&2
		exit %d
	}
	vp=$found
fi
exec "$vp" guard check --staged --project %s --url %s --fail-open=%t
`, guardMarker, ChainedName, ChainedName, shQuote(o.Bin), missing,
		shQuote(o.Project), shQuote(o.URL), o.FailOpen)
}

// shQuote is s as one word of sh: in single quotes, each quote inside closed, escaped and reopened.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func gitOutput(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// stagedPaths are the paths the commit changes, from the top of the work
// tree: a rename is both its old and its new path (--no-renames), a
// deletion its path, and -z keeps spaces, newlines and non-ASCII names
// as they are. --no-relative overrides a diff.relative setting.
func stagedPaths(ctx context.Context, dir string) ([]string, error) {
	out, err := gitOutput(ctx, dir, "diff", "--cached", "--name-only", "-z", "--no-renames", "--no-relative", "--no-ext-diff", "--")
	if err != nil {
		return nil, err
	}
	var paths []string
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths), nil
}

// queryGlob is the glob check_paths is asked about for a staged path. The
// reservation glob language ('*', '**' as a whole segment, '?', literal
// characters) has no escape and refuses '[', ']', '{', '}', '\', control
// characters and invalid UTF-8, all of which a file name may hold
// (src/[id].tsx): each such character, and each '*' of a name, becomes
// '?', which matches it and any other one character. The question is
// then about a few more paths than the staged one, never fewer: a
// conflict can be reported too much, never missed.
func queryGlob(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if seg == "**" {
			continue // matches everything under it: more, never fewer
		}
		var b strings.Builder
		for j := 0; j < len(seg); {
			r, n := utf8.DecodeRuneInString(seg[j:])
			if (r == utf8.RuneError && n == 1) || unicode.IsControl(r) || strings.ContainsRune("[]{}\\*", r) {
				r = '?'
			}
			b.WriteRune(r)
			j += n
		}
		segs[i] = b.String()
	}
	return boundGlob(segs)
}

// boundGlob joins segs, a glob of at most maxGlobBytes: when longer, the
// deepest directory that fits with "/**", or the first name's beginning
// followed by '*'. Either matches the path and more.
func boundGlob(segs []string) string {
	if g := strings.Join(segs, "/"); len(g) <= maxGlobBytes {
		return g
	}
	dir := ""
	for _, seg := range segs[:len(segs)-1] {
		next := seg
		if dir != "" {
			next = dir + "/" + seg
		}
		if len(next)+len("/**") > maxGlobBytes {
			break
		}
		dir = next
	}
	if dir != "" {
		return dir + "/**"
	}
	tail := "*"
	if len(segs) > 1 {
		tail = "*/**"
	}
	cut := segs[0][:maxGlobBytes-len(tail)]
	for !utf8.ValidString(cut) { // not inside a rune: queryGlob made the segment valid UTF-8
		cut = cut[:len(cut)-1]
	}
	return cut + tail
}

// pathConflict is one reservation check_paths reports.
type pathConflict struct {
	ReservationID string   `json:"reservationId"`
	Holder        string   `json:"holder"`
	Paths         []string `json:"paths"`
	Exclusive     bool     `json:"exclusive"`
	ExpiresAt     int64    `json:"expiresAt"` // unix ms
	Reason        string   `json:"reason"`
}

type checkPathsResult struct {
	Conflicts []pathConflict `json:"conflicts"`
}

// CheckOptions: Dir is a directory in the repository ("": the
// current one); Token is the agent's own; Version is the client's, as the
// MCP handshake announces it; Now and HTTP default to the clock and a
// transport of its own.
type CheckOptions struct {
	Dir, Project, URL, Token string
	Version                  string
	FailOpen                 bool
	Timeout                  time.Duration
	Now                      func() time.Time
	HTTP                     http.RoundTripper
}

// errUnreachable marks a failure that --fail-open lets through: no answer,
// a 5xx, a 408 or 429, or the timeout.
var errUnreachable = errors.New("server unreachable")

// Check refuses (an error) a commit whose staged paths fall under another
// agent's exclusive reservation, writing on stderr who holds what and
// until when. A server that cannot answer lets it through with a warning
// on stderr when failing open, refuses it otherwise.
func Check(ctx context.Context, o CheckOptions, stderr io.Writer) error {
	if err := target("guard check", o.Project, o.URL); err != nil {
		return err
	}
	if o.Token == "" {
		return errors.New("guard check: VP_TOKEN is not set: the check uses the agent's own token " +
			"(export VP_TOKEN=<token of vantagepeers connect>); git commit --no-verify skips the hook")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	paths, err := stagedPaths(ctx, o.Dir)
	if err != nil {
		return fmt.Errorf("guard check: the staged paths: %w", err)
	}
	if len(paths) == 0 {
		return nil
	}
	conflicts, err := checkPaths(ctx, o, paths)
	if errors.Is(err, errUnreachable) {
		if o.FailOpen {
			fmt.Fprintf(stderr, "vantagepeers guard: warning: %v; the commit goes through unchecked (--fail-open=false refuses it instead)\n", err)
			return nil
		}
		return fmt.Errorf("guard check: %w; the commit is refused (--fail-open=false)", err)
	}
	if err != nil {
		return fmt.Errorf("guard check: %w", err)
	}
	// The call asks for exclusive reservations only; a server that
	// answered shared ones too does not refuse the commit with them.
	exclusive := slices.DeleteFunc(conflicts, func(c pathConflict) bool { return !c.Exclusive })
	if len(exclusive) == 0 {
		return nil
	}
	_, err = io.WriteString(stderr, refusal(exclusive, o.Now()))
	if err != nil {
		return err
	}
	return fmt.Errorf("guard: commit refused: %d exclusive reservation(s) of other agents cover staged paths", len(exclusive))
}

// refusal is what a refused commit prints: one line a reservation.
func refusal(cs []pathConflict, now time.Time) string {
	var b strings.Builder
	b.WriteString("vantagepeers guard: commit refused: staged paths are reserved by another agent\n")
	for _, c := range cs {
		b.WriteString("  " + describeConflict(c, "holds", now) + "\n")
	}
	b.WriteString("Wait for the expiry, ask the holder to release (send_message), or unstage those paths;\n" +
		"git commit --no-verify skips this check.\n")
	return b.String()
}

// describeConflict: "alice holds src/api/** exclusively until
// 2026-07-28T14:03:00Z (in 23 min): refactoring the API [reservation r1]".
// Everything the server relays from another agent is stripped of control
// characters: a reason must not drive the committer's terminal.
func describeConflict(c pathConflict, verb string, now time.Time) string {
	how := ""
	if c.Exclusive {
		how = " exclusively"
	}
	paths := make([]string, len(c.Paths))
	for i, p := range c.Paths {
		paths[i] = inert(p)
	}
	exp := time.UnixMilli(c.ExpiresAt).UTC()
	s := fmt.Sprintf("%s %s %s%s until %s (%s)", inert(c.Holder), verb, strings.Join(paths, ", "), how,
		exp.Format(time.RFC3339), untilText(exp.Sub(now)))
	if r := inert(c.Reason); r != "" {
		s += ": " + r
	}
	if c.ReservationID != "" {
		s += " [reservation " + inert(c.ReservationID) + "]"
	}
	return s
}

// inert replaces control characters (ESC of terminal sequences, CR,
// newlines) with a space, and bounds the text.
func inert(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r) {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// untilText is how long until the expiry: "in 45 s", "in 23 min",
// "in 2 h 5 min"; "expired" when past.
func untilText(d time.Duration) string {
	switch {
	case d <= 0:
		return "expired"
	case d < time.Minute:
		return fmt.Sprintf("in %d s", int((d+time.Second-1)/time.Second))
	}
	switch m := int((d + 30*time.Second) / time.Minute); {
	case m < 60:
		return fmt.Sprintf("in %d min", m)
	case m%60 == 0:
		return fmt.Sprintf("in %d h", m/60)
	default:
		return fmt.Sprintf("in %d h %d min", m/60, m%60)
	}
}

// checkPaths asks check_paths about paths, checkBatch at a time, over one
// MCP session with the agent's token, and returns the conflicts (each
// reservation once).
func checkPaths(ctx context.Context, o CheckOptions, paths []string) ([]pathConflict, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	base := o.HTTP
	if base == nil {
		base = http.DefaultTransport
	}
	rt := &guardTransport{token: o.Token, base: base, ctx: ctx}
	// Redirects are not followed: the token goes to the URL given and no
	// other (Go keeps the header on a same-host redirect).
	hc := &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	client := mcp.NewClient(&mcp.Implementation{Name: "vantagepeers-guard", Version: o.Version}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: o.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, rt.classify(ctx, o, err)
	}
	defer func() { _ = cs.Close() }()
	var out []pathConflict
	seen := map[string]bool{}
	globs := make([]string, len(paths))
	for i, p := range paths {
		globs[i] = queryGlob(p)
	}
	for batch := range slices.Chunk(globs, checkBatch) {
		// exclusive: false asks as a shared reservation would: only others'
		// exclusive reservations conflict with a commit.
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "check_paths",
			Arguments: map[string]any{"project": o.Project, "paths": batch, "exclusive": false}})
		if err != nil {
			return nil, rt.classify(ctx, o, err)
		}
		if res.IsError {
			return nil, fmt.Errorf("%s refused check_paths: %s", o.URL, inert(toolText(res)))
		}
		var r checkPathsResult
		b, _ := json.Marshal(res.StructuredContent)
		if res.StructuredContent == nil || json.Unmarshal(b, &r) != nil {
			return nil, fmt.Errorf("%s answered check_paths without {conflicts: [...]}: %s", o.URL, inert(toolText(res)))
		}
		for _, c := range r.Conflicts {
			key := c.ReservationID
			if key == "" {
				key = fmt.Sprint(c)
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, c)
			}
		}
	}
	return out, nil
}

func toolText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

// guardTransport puts the agent's token on every request, ends every
// request at the check's deadline (ctx), and remembers the last status and
// transport error: the SDK's errors do not say whether the server refused
// the token or could not answer.
type guardTransport struct {
	token  string
	base   http.RoundTripper
	ctx    context.Context
	mu     sync.Mutex
	status int
	err    error
}

func (g *guardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	// The SDK sends some requests (the cancellation of a call that timed
	// out, on close) under contexts of its own: against a server that
	// hangs they would hold the commit past --timeout.
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(g.ctx, cancel)
	done := func() { stop(); cancel() }
	r = r.Clone(ctx)
	r.Header.Set("Authorization", "Bearer "+g.token)
	res, err := g.base.RoundTrip(r)
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		g.err = err
		done()
		return nil, err
	}
	if res.StatusCode >= 300 {
		g.status = res.StatusCode
	}
	res.Body = &closeFunc{ReadCloser: res.Body, done: done}
	return res, nil
}

// closeFunc runs done once its body is closed.
type closeFunc struct {
	io.ReadCloser
	done func()
}

func (c *closeFunc) Close() error {
	err := c.ReadCloser.Close()
	c.done()
	return err
}

// classify turns a failed call into the error the committer reads: a
// refused token, a 4xx that is a mistake of configuration, or
// errUnreachable for what --fail-open lets through.
func (g *guardTransport) classify(ctx context.Context, o CheckOptions, err error) error {
	g.mu.Lock()
	status, terr := g.status, g.err
	g.mu.Unlock()
	switch {
	case status == http.StatusUnauthorized:
		return fmt.Errorf("VP_TOKEN is refused by %s (401): the token is unknown, revoked or expired; "+
			"mint the agent a token (vantagepeers connect, or the server's admin) and export VP_TOKEN", o.URL)
	case status == http.StatusForbidden:
		return fmt.Errorf("VP_TOKEN may not call check_paths at %s (403): %v", o.URL, err)
	case status >= 500 || status == http.StatusTooManyRequests || status == http.StatusRequestTimeout:
		return fmt.Errorf("%w: %s answered %d %s", errUnreachable, o.URL, status, http.StatusText(status))
	case ctx.Err() != nil:
		return fmt.Errorf("%w: no answer from %s within %s", errUnreachable, o.URL, o.Timeout)
	case terr != nil:
		return fmt.Errorf("%w: %s: %v", errUnreachable, o.URL, terr)
	case status >= 300:
		return fmt.Errorf("%s answered %d %s: is it the server's MCP URL (…/mcp)? %v", o.URL, status, http.StatusText(status), err)
	}
	return fmt.Errorf("%s: %w", o.URL, err)
}
