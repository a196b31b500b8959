package githubfake_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/github/githubfake"
)

// get sends a request to the fake and decodes its JSON body.
func get(t *testing.T, method, url, auth, body string, hdr ...string) (*http.Response, any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s %s: body is not JSON: %s", method, url, b)
		}
	}
	return resp, v
}

func TestFakeGitHubWireProtocol(t *testing.T) {
	f := githubfake.New(t)
	f.AllowToken("tok")
	n := f.AddIssue("o/r", "title", "body", time.Time{})
	for range 150 {
		f.AddComment("o/r", n, "someone", "hi")
	}
	base := f.URL() + "api/v3/repos/"
	cases := []struct {
		name, method, path, auth, body string
		hdr                            []string
		status                         int
		check                          func(t *testing.T, resp *http.Response, v any)
	}{
		{"no token", "GET", "o/r/issues", "", "", nil, 401, func(t *testing.T, _ *http.Response, v any) {
			if v.(map[string]any)["message"] != "Requires authentication" {
				t.Errorf("body %v", v)
			}
		}},
		{"bad token", "GET", "o/r/issues", "token nope", "", nil, 401, func(t *testing.T, _ *http.Response, v any) {
			if v.(map[string]any)["message"] != "Bad credentials" {
				t.Errorf("body %v", v)
			}
		}},
		{"per_page is capped at 100, Link says next and last", "GET", "o/r/issues/1/comments?per_page=500", "token tok", "", nil, 200, func(t *testing.T, resp *http.Response, v any) {
			if got := len(v.([]any)); got != 100 {
				t.Errorf("%d comments, want 100", got)
			}
			link := resp.Header.Get("Link")
			if !strings.Contains(link, `page=2&per_page=100>; rel="next"`) || !strings.Contains(link, `rel="last"`) {
				t.Errorf("Link %q", link)
			}
			if resp.Header.Get("X-RateLimit-Remaining") != "4999" {
				t.Errorf("remaining %q", resp.Header.Get("X-RateLimit-Remaining"))
			}
		}},
		{"last page has no next", "GET", "o/r/issues/1/comments?per_page=100&page=2", "Bearer tok", "", nil, 200, func(t *testing.T, resp *http.Response, v any) {
			c := v.([]any)
			if len(c) != 50 || strings.Contains(resp.Header.Get("Link"), `rel="next"`) {
				t.Errorf("%d comments, Link %q", len(c), resp.Header.Get("Link"))
			}
			u := c[0].(map[string]any)["user"].(map[string]any)
			if u["login"] != "someone" || u["type"] != "User" {
				t.Errorf("user %v", u)
			}
		}},
		{"unknown repo", "GET", "o/x/issues", "token tok", "", nil, 404, nil},
		{"comment without body", "POST", "o/r/issues/1/comments", "token tok", `{}`, nil, 422, func(t *testing.T, _ *http.Response, v any) {
			if v.(map[string]any)["message"] != "Validation Failed" {
				t.Errorf("body %v", v)
			}
		}},
		{"comment on a missing issue", "POST", "o/r/issues/99/comments", "token tok", `{"body":"x"}`, nil, 404, nil},
		{"comment posted", "POST", "o/r/issues/1/comments", "token tok", `{"body":"x"}`, nil, 201, func(t *testing.T, resp *http.Response, v any) {
			m := v.(map[string]any)
			if m["body"] != "x" || m["user"].(map[string]any)["type"] != "Bot" || resp.Header.Get("Location") == "" {
				t.Errorf("body %v", m)
			}
		}},
		{"issues: bad state", "GET", "o/r/issues?state=some", "token tok", "", nil, 422, nil},
		{"issue opened", "POST", "o/r/issues", "token tok", `{"title":"t","body":"b","labels":["bug"]}`, nil, 201, func(t *testing.T, _ *http.Response, v any) {
			m := v.(map[string]any)
			if m["number"] != 2.0 || m["state"] != "open" || m["labels"].([]any)[0].(map[string]any)["name"] != "bug" {
				t.Errorf("body %v", m)
			}
		}},
		{"issue without title", "POST", "o/r/issues", "token tok", `{"body":"b"}`, nil, 422, nil},
		{"no such pull request", "GET", "o/r/pulls/1", "token tok", "", nil, 404, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, v := get(t, tc.method, base+tc.path, tc.auth, tc.body, tc.hdr...)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%v)", resp.StatusCode, tc.status, v)
			}
			if tc.check != nil {
				tc.check(t, resp, v)
			}
		})
	}
	if got := len(f.Comments("o/r", n)); got != 151 {
		t.Errorf("%d comments stored, want 151", got)
	}
	if is := f.Issues("o/r"); len(is) != 2 || is[1].Labels[0] != "bug" {
		t.Errorf("issues %+v", is)
	}
	if got := len(f.Requests()); got != len(cases) {
		t.Errorf("%d requests recorded, want %d", got, len(cases))
	}
}

func TestFakeGitHubETagAndScriptedFailures(t *testing.T) {
	f := githubfake.New(t)
	f.AllowToken("tok")
	f.SetPR("o/r", 7, "open", true, false)
	url := f.URL() + "api/v3/repos/o/r/pulls/7"
	resp, v := get(t, "GET", url, "token tok", "")
	tag := resp.Header.Get("Etag")
	if resp.StatusCode != 200 || tag == "" || v.(map[string]any)["draft"] != true {
		t.Fatalf("status %d etag %q body %v", resp.StatusCode, tag, v)
	}
	remaining := resp.Header.Get("X-RateLimit-Remaining")
	resp, _ = get(t, "GET", url, "token tok", "", "If-None-Match", tag)
	if resp.StatusCode != 304 || resp.Header.Get("X-RateLimit-Remaining") != remaining {
		t.Fatalf("conditional read: status %d, remaining %s (was %s)", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"), remaining)
	}
	f.SetPR("o/r", 7, "closed", false, true)
	resp, v = get(t, "GET", url, "token tok", "", "If-None-Match", tag)
	if resp.StatusCode != 200 || resp.Header.Get("Etag") == tag || v.(map[string]any)["merged"] != true || v.(map[string]any)["merged_at"] == nil {
		t.Fatalf("after a change: status %d etag %q body %v", resp.StatusCode, resp.Header.Get("Etag"), v)
	}

	f.FailNext(2, 429, http.Header{"Retry-After": {"7"}}, "")
	for range 2 {
		resp, v = get(t, "GET", url, "token tok", "")
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || !strings.HasSuffix(v.(map[string]any)["documentation_url"].(string), "secondary-rate-limits") {
			t.Fatalf("scripted: status %d, body %v", resp.StatusCode, v)
		}
	}
	if resp, _ = get(t, "GET", url, "token tok", ""); resp.StatusCode != 200 {
		t.Fatalf("after the script: %d", resp.StatusCode)
	}
	reqs := f.Requests()
	if st := []int{reqs[len(reqs)-3].Status, reqs[len(reqs)-2].Status, reqs[len(reqs)-1].Status}; st[0] != 429 || st[1] != 429 || st[2] != 200 {
		t.Errorf("recorded statuses %v", st)
	}

	// Three reads were charged: neither the 304 nor the scripted answers.
	f.SetQuota(3)
	if resp, v = get(t, "GET", url, "token tok", ""); resp.StatusCode != 403 || resp.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("quota spent: status %d remaining %q %v", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"), v)
	}
}

func TestFakeGitHubAuthorsEditsAndSince(t *testing.T) {
	f := githubfake.New(t)
	f.AllowToken("tok")
	f.AllowAppToken("ghs_app", "acme-ci")
	f.AllowTokenAs("outsider", "mallory")
	n := f.AddIssueBy("o/r", "mallory", "title", "body", time.Time{})
	old := f.AddCommentAt("o/r", n, "someone", "old", time.Now().Add(-48*time.Hour))
	api := f.URL() + "api/v3/"

	if resp, v := get(t, "GET", api+"user", "token tok", ""); resp.StatusCode != 200 || v.(map[string]any)["login"] != githubfake.Login {
		t.Fatalf("GET /user: %d %v", resp.StatusCode, v)
	}
	if resp, _ := get(t, "GET", api+"user", "token ghs_app", ""); resp.StatusCode != 403 {
		t.Fatalf("GET /user with an installation token: %d, want 403", resp.StatusCode)
	}
	_, v := get(t, "POST", api+"repos/o/r/issues/1/comments", "token ghs_app", `{"body":"mine"}`)
	c := v.(map[string]any)
	if c["user"].(map[string]any)["login"] != "acme-ci[bot]" {
		t.Fatalf("an app's comment is by %v", c["user"])
	}
	id := int64(c["id"].(float64))
	patch := func(tok string, id int64, body string) int {
		resp, _ := get(t, "PATCH", api+"repos/o/r/issues/comments/"+strconv.FormatInt(id, 10), "token "+tok, body)
		return resp.StatusCode
	}
	if st := patch("outsider", id, `{"body":"hijacked"}`); st != 403 {
		t.Fatalf("an outsider edited the bot's comment: %d", st)
	}
	if st := patch("ghs_app", id, `{"body":"edited"}`); st != 200 {
		t.Fatalf("the author's edit: %d", st)
	}
	if st := patch("ghs_app", 99999, `{"body":"x"}`); st != 404 {
		t.Fatalf("editing a comment that does not exist: %d", st)
	}
	_, v = get(t, "GET", api+"repos/o/r/issues/1/comments?since="+time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), "token tok", "")
	if list := v.([]any); len(list) != 1 || list[0].(map[string]any)["body"] != "edited" {
		t.Fatalf("since an hour ago: %v, want only the edited comment (not %d)", v, old.ID)
	}
	w := f.Writes()
	if len(w) != 2 || w[0].Method != "POST" || w[0].Body != "mine" || w[1].Method != "PATCH" || w[1].Body != "edited" || w[1].CommentID != id {
		t.Fatalf("writes recorded: %+v", w)
	}
	if f.Count("PATCH", "/comments/"+strconv.FormatInt(id, 10)) != 2 {
		t.Fatal("Count does not count the PATCHes")
	}
}
