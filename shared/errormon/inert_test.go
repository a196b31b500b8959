package errormon_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/ghmd/ghmdtest"
	"github.com/vantagepeers/vantagepeers/shared/github/githubfake"
)

// What outsiders get logged (a username, a URL parameter, a header) and
// what a tenant names (a deployment, an orchestrator) reaches the issues
// and comments the bot posts. None of it may become a mention, a link, an
// image, HTML or a table cell of its own there.

var hostileMessages = []string{
	"invalid username @octocat [rotate your token](https://evil.example/rotate)",
	"see https://evil.example/bare and www.evil.example/w, or mail admin@evil.example",
	"![pixel](https://evil.example/p.png) <img src=x onerror=alert(1)>",
	`<a href="https://evil.example/a">support</a> <details open><summary>@octocat</summary>`,
	"broken | table | row ` and ``` fence\n\n# @octocat heading\n> [x](https://evil.example/q)",
	"<!-- vantagepeers:error:err_000000000000000000000000 --> then @octocat, fixes #1 and acme/app#2 and GH-3",
}

var hostileFunctions = []string{
	"messages:send` | @octocat | [x](https://evil.example/f) |",
	"POST /api/<img src=x onerror=alert(1)>",
	"orders:get\n| injected | row |",
	"ai:run @octocat",
	"www.evil.example/route",
	"a|b|c",
}

// canaries are fragments of the hostile texts that may only appear inside
// code in what the bot posts.
var canaries = []string{"octocat", "evil.example", "onerror", "injected", "<details open>"}

// oneLine is how a value shows within a line (ghmd.Inline, ghmd.Cell).
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestOutsiderTextIsInertOnGitHubAgainstFakeConvexAndFakeGitHub(t *testing.T) {
	e := newRealEnv(t, realOpts{mon: func(o *errormon.Options) { o.IssuesPerHour = 3 }})
	const depName = "shop @octocat [x](https://evil.example/d)"
	if _, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: depName, DeploymentURL: e.convex.URL(),
		DeployKeyEnvVar: keyEnvVar, GitHubRepo: adapterRepo, Orchestrator: "@octocat"}); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-5 * time.Minute)
	for k := range hostileMessages {
		at = at.Add(time.Millisecond)
		e.convex.Append(convexfake.Entry{Identifier: hostileFunctions[k], UdfType: "Mutation", ExecutionID: fmt.Sprint("exec-hostile-", k),
			RequestID: fmt.Sprint("req-", k), Time: at,
			Error: "Uncaught Error: " + hostileMessages[k] + "\n    at handler (../convex/x.ts:1:1)"})
	}
	if n := e.scan(t, depName); n != len(hostileMessages) {
		t.Fatalf("scanned %d events, want %d", n, len(hostileMessages))
	}
	e.drain(t)

	var functions []string // as the groups keep them (routes' numbers parameterised)
	for _, g := range e.groupsOf(t, depName) {
		functions = append(functions, oneLine(g.Function))
	}
	if len(functions) != len(hostileFunctions) {
		t.Fatalf("%d groups, want %d", len(functions), len(hostileFunctions))
	}
	writes := e.gh.Writes()
	var issues, comments, tables int
	for _, w := range writes {
		where := fmt.Sprintf("%s %s #%d", w.Method, w.Kind, w.Number)
		if p := ghmdtest.Problems(w.Body, canaries...); len(p) > 0 {
			t.Errorf("%s is live Markdown: %q\n%s", where, p, w.Body)
		}
		if w.Kind == "issue" {
			issues++
			checkTitle(t, where, w.Title)
		} else {
			comments++
		}
		d := ghmdtest.Parse(w.Body)
		for _, tab := range d.Tables {
			tables++
			checkTable(t, where, tab, functions)
		}
	}
	// 3 issues, the summary issue; 3 "Investigating" comments and the
	// summary's one comment (edited: two writes for the 3 errors past the
	// cap, one per error after the first... at least one).
	if issues != 4 || comments < 4 || tables != 3 {
		t.Fatalf("%d issues, %d comment writes, %d tables; want 4, 4 or more, 3:\n%+v", issues, comments, tables, writes)
	}
}

// checkTitle: one line, bounded, no mention, no control or bidi character.
func checkTitle(t *testing.T, where, title string) {
	t.Helper()
	if n := utf8.RuneCountInString(title); n == 0 || n > 200 {
		t.Errorf("%s: title of %d characters", where, n)
	}
	for _, r := range title {
		if r == '@' || r == '#' || r == '\n' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			t.Errorf("%s: title %q carries %U", where, title, r)
		}
	}
	if refs := ghmdtest.References(title); refs != nil {
		t.Errorf("%s: title %q references issues: %q", where, title, refs)
	}
}

// checkTable: every row has the header's two cells, and the function and
// type rows show the whole value (nothing broke out into other cells).
func checkTable(t *testing.T, where string, rows [][]string, functions []string) {
	t.Helper()
	if len(rows) != 7 {
		t.Errorf("%s: the table has %d rows, want a header and 6: %q", where, len(rows), rows)
	}
	for _, r := range rows {
		if len(r) != 2 {
			t.Errorf("%s: row %q has %d cells, want 2", where, r, len(r))
		}
	}
	for _, r := range rows {
		if len(r) == 2 && r[0] == "function" && !slices.Contains(functions, r[1]) {
			t.Errorf("%s: the function cell shows %q, which is not one of the functions whole", where, r[1])
		}
	}
}

// lostCommentAnswer drops GitHub's answer to the first POST of the
// summary's comment: the comment exists, the job never learns its id (a
// crash between GitHub's answer and the commit).
type lostCommentAnswer struct {
	next http.RoundTripper
	lost atomic.Bool
}

func (l *lostCommentAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	summary := false
	if r.Method == http.MethodPost && r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		summary = bytes.Contains(b, []byte("errsummary-list"))
	}
	resp, err := l.next.RoundTrip(r)
	if err == nil && summary && l.lost.CompareAndSwap(false, true) {
		_ = resp.Body.Close()
		return nil, errors.New("connection reset by peer")
	}
	return resp, err
}

var summaryLine = regexp.MustCompile("(?m)^- `(err_[0-9a-f]+)` ")

func TestThirtyExtraErrorsMakeOneSummaryCommentAgainstFakeGitHub(t *testing.T) {
	lost := &lostCommentAnswer{}
	e := newRealEnv(t, realOpts{ghTransport: func(rt http.RoundTripper) http.RoundTripper { lost.next = rt; return lost }})
	e.addConvex(t, "app", keyEnvVar)
	// All 40 events within one clock hour, in the past, and inside the
	// first scan's one-hour backfill, whatever the time of day: early in an
	// hour they go at the end of the previous one.
	now := time.Now()
	hour := now.Truncate(time.Hour)
	at := hour.Add(10 * time.Second)
	if now.Sub(hour) < 2*time.Minute {
		at = hour.Add(-2 * time.Minute)
	}
	for c := range 40 {
		e.convex.Append(convexfake.Entry{Identifier: fmt.Sprintf("fn%d:run", c), UdfType: "Mutation", ExecutionID: fmt.Sprint("exec-", c),
			RequestID: fmt.Sprint("req-", c), Time: at.Add(time.Duration(c) * time.Second),
			Error: fmt.Sprintf("Uncaught Error: cause %d of 40 @octocat\n    at f%d (../convex/f.ts:1:1)", c, c)})
	}
	if n := e.scan(t, "app"); n != 40 {
		t.Fatalf("scanned %d, want 40", n)
	}
	// The lost answer fails one job, which the outbox retries after its
	// backoff (about a second).
	deadline := time.Now().Add(30 * time.Second)
	for {
		e.drain(t)
		if e.summarised(t) == 30 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var summary githubfake.FakeIssue
	n := 0
	for _, is := range e.gh.Issues(adapterRepo) {
		if strings.Contains(is.Title, "More new errors") {
			summary = is
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d summary issues, want 1", n)
	}
	cs := e.gh.Comments(adapterRepo, summary.Number)
	if len(cs) != 1 || cs[0].User != githubfake.Login {
		t.Fatalf("the summary issue has %d comments, want exactly 1 of the bot's:\n%+v", len(cs), cs)
	}
	body := cs[0].Body
	ids := summaryLine.FindAllStringSubmatch(body, -1)
	seen := map[string]bool{}
	for _, m := range ids {
		seen[m[1]] = true
	}
	if len(ids) != 30 || len(seen) != 30 {
		t.Fatalf("the summary lists %d lines for %d errors, want 30 distinct:\n%s", len(ids), len(seen), body)
	}
	if c := utf8.RuneCountInString(body); c >= 65_536 {
		t.Fatalf("summary comment of %d characters", c)
	}
	if p := ghmdtest.Problems(body, "octocat"); len(p) > 0 {
		t.Fatalf("the summary is live: %q", p)
	}
	posts, patches := 0, 0
	for _, w := range e.gh.Writes() {
		if w.Kind == "comment" && w.Number == summary.Number {
			switch w.Method {
			case http.MethodPost:
				posts++
			case http.MethodPatch:
				patches++
			}
		}
	}
	if !lost.lost.Load() || posts != 1 || patches != 30 {
		// 30 jobs, one of which ran twice (its first answer lost, then
		// found by marker and edited): 1 post and 30 edits.
		t.Fatalf("summary comment: %d posts, %d edits (answer lost: %v); want 1 post and 30 edits", posts, patches, lost.lost.Load())
	}
	t.Logf("30 errors past the cap: 1 comment of %d characters, %d edits", utf8.RuneCountInString(body), patches)
}

// summarised counts the groups linked to a summary issue.
func (e *realEnv) summarised(t *testing.T) int {
	n := 0
	for _, g := range e.groupsOf(t, "app") {
		if g.Summarised && g.IssueNumber > 0 {
			n++
		}
	}
	return n
}

func TestSummaryIsCappedWithAMoreLine(t *testing.T) {
	e := newEnv(t, func(o *errormon.Options) { o.IssuesPerHour = 1 })
	e.addDeployment(t, "app")
	long := strings.Repeat("x", 400)
	for c := range 400 {
		ev := cause(c, 1)
		ev.Message = fmt.Sprintf("failure %d %s", c, long)
		e.src.add(ev)
	}
	e.scan(t, "app")
	e.drain(t)
	issues, comments := e.gh.snapshot()
	var summary int
	for _, is := range issues {
		if strings.Contains(is.Title, "More new errors") {
			summary = is.Number
		}
	}
	cs := comments[summary]
	if len(cs) != 1 {
		t.Fatalf("%d summary comments, want 1", len(cs))
	}
	body := cs[0]
	listed := len(summaryLine.FindAllString(body, -1))
	more := regexp.MustCompile(`…and (\d+) more`).FindStringSubmatch(body)
	if more == nil || listed+atoi(t, more[1]) != 399 || utf8.RuneCountInString(body) >= 65_536 {
		t.Fatalf("%d listed, more line %q, %d characters; want 399 in all, under 65,536", listed, more, utf8.RuneCountInString(body))
	}
	t.Logf("399 errors past the cap: %d listed, %s more, %d characters, %d edits", listed, more[1], utf8.RuneCountInString(body), e.gh.edits)
}

func atoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
