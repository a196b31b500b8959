package issue_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// FuzzHandleEvent: any body under any event name is handled without a
// panic, and the only error is a payload that is not JSON (KindInvalid).
func FuzzHandleEvent(f *testing.F) {
	for _, seed := range []string{
		`{"action":"opened","issue":{"number":1,"title":"x","user":{"login":"a"},"author_association":"OWNER"},"repository":{"full_name":"acme/api"}}`,
		`{"action":"transferred","issue":{"number":1},"repository":{"full_name":"acme/api"},"changes":{"new_issue":{"number":2},"new_repository":{"full_name":"acme/new"}}}`,
		`{"action":"created","issue":{"number":1,"user":{"login":"a"}},"comment":{"body":"hi","user":{"login":"b","type":"User"}},"repository":{"full_name":"acme/api"}}`,
		`{"action":"closed","pull_request":{"html_url":"https://github.com/a/b/pull/1","merged":true},"repository":{"full_name":"a/b"}}`,
		`{"repository":{"full_name":"../.."}}`, `[]`, `null`, `{"issue":{"number":-1}}`,
	} {
		for _, ev := range []string{"issues", "issue_comment", "pull_request"} {
			f.Add(ev, seed)
		}
	}
	e := newEnv(f, openSQLiteF(f), nil)
	e.mapRepo(f, "acme/api", "sigma", "api")
	n := 0
	f.Fuzz(func(t *testing.T, name, body string) {
		n++
		_, err := e.issues.HandleEvent(ctx(), event(t, name, fmt.Sprint("fz-", n), []byte(body)))
		if err != nil && !vp.IsKind(err, vp.KindInvalid) {
			t.Fatalf("%s %q: %v", name, body, err)
		}
	})
}

// FuzzReferences: every reference found is a positive number that occurs
// after a "#" in the title.
func FuzzReferences(f *testing.F) {
	for _, s := range []string{"Fix #282", "acme/api#1 and #2", "#2820", "a#1", "##5", "[#142] T6 — x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, title string) {
		for _, r := range issue.References(title) {
			if r.Number < 1 || !strings.Contains(title, fmt.Sprintf("#%d", r.Number)) {
				t.Fatalf("References(%q) gave %+v", title, r)
			}
		}
		_ = issue.CommitSHAs(title)
		_ = issue.Sanitize(title, 64)
	})
}
