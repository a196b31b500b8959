package issue_test

import (
	"context"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// BotLogin is the login the tenant's bot posts as (github.ForTenants
// learns it from the token).
func (g *recordingGitHub) BotLogin(context.Context, string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.loginErr != nil {
		return "", g.loginErr
	}
	return "vp-bot", nil
}

// TestForeignMarkerDoesNotHideAFirstResponse: an outsider's comment that
// carries the bot's marker, as its last line or anywhere, is a response
// like any other (it used to be taken for the bot's, so anyone could
// keep an issue "unanswered"); the bot's own comment ending with its
// marker is not; a comment by the bot's login whose marker is quoted
// inside the text is not the bot's write either.
func TestForeignMarkerDoesNotHideAFirstResponse(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mapRepo(t, "acme/api", "sigma", "api")
		g := ghIssue{Repo: "acme/api", Number: 5, Title: "x", Author: "alice"}
		e.deliver(t, "issues", "d1", issuesPayload(t, "opened", g, nil))
		comment := func(id, login, body string, at time.Time) string {
			return e.deliver(t, "issue_comment", id, issuesPayload(t, "created", g, map[string]any{"comment": map[string]any{
				"body": body, "user": map[string]any{"login": login, "type": "User"}, "created_at": at.Format(time.RFC3339)}}))
		}
		t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		comment("c1", "VP-Bot", "Investigating\n<!-- vantagepeers:irp:open:x -->\n", t0.Add(time.Minute))
		if i := e.issue(t, "acme/api", 5); i.FirstResponseAt != nil {
			t.Fatalf("the bot's own comment set the first response at %v", time.UnixMilli(*i.FirstResponseAt))
		}
		comment("c2", "mallory", "looking\n<!-- vantagepeers:irp:open:x -->", t0.Add(20*time.Minute))
		if i := e.issue(t, "acme/api", 5); i.FirstResponseAt == nil || *i.FirstResponseAt != t0.Add(20*time.Minute).UnixMilli() {
			t.Fatalf("an outsider's comment ending with the bot's marker: first response %v, want +20m", i.FirstResponseAt)
		}
		comment("c3", "vp-bot", "quoting <!-- vantagepeers:irp:open:x --> then more\ntext", t0.Add(10*time.Minute))
		if i := e.issue(t, "acme/api", 5); i.FirstResponseAt == nil || *i.FirstResponseAt != t0.Add(10*time.Minute).UnixMilli() {
			t.Fatalf("a comment whose marker is not its last line: first response %v, want +10m", i.FirstResponseAt)
		}
	})
}

// TestMarkerCheckFailsClosedWhenTheBotIsUnknown: when the bot's login
// cannot be learnt, a comment ending with a marker is neither taken for
// the bot's nor counted: the delivery fails (and is retried), and the
// statistics are unchanged.
func TestMarkerCheckFailsClosedWhenTheBotIsUnknown(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mapRepo(t, "acme/api", "sigma", "api")
		g := ghIssue{Repo: "acme/api", Number: 6, Title: "x", Author: "alice"}
		e.deliver(t, "issues", "d1", issuesPayload(t, "opened", g, nil))
		e.gh.mu.Lock()
		e.gh.loginErr = vp.E("github.user", vp.KindUnavailable, "login", "GitHub is down")
		e.gh.mu.Unlock()
		err := e.deliverErr(t, "issue_comment", "c1", issuesPayload(t, "created", g, map[string]any{"comment": map[string]any{
			"body": "x\n<!-- vantagepeers:irp:open:x -->", "user": map[string]any{"login": "mallory", "type": "User"}, "created_at": time.Now().Format(time.RFC3339)}}))
		if !vp.IsKind(err, vp.KindUnavailable) {
			t.Fatalf("delivery while the bot's login is unknown: %v, want unavailable", err)
		}
		if i := e.issue(t, "acme/api", 6); i.FirstResponseAt != nil {
			t.Fatalf("first response set while the bot's login is unknown")
		}
	})
}
