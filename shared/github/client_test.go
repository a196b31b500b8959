package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/github/githubfake"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const (
	repo     = "acme/widgets"
	tokAcme  = "ghp_acmeSECRETtoken"
	tokBeta  = "ghp_betaSECRETtoken"
	tokWrong = "ghp_wrongSECRETtoken"
)

var (
	acme = github.Account{Tenant: "acme", Token: tokAcme}
	beta = github.Account{Tenant: "beta", Token: tokBeta}
)

// env is a client wired to a fresh fake GitHub and a limiter on a real
// SQLite store, with the real clock.
type env struct {
	fake   *githubfake.Server
	client *github.Client
	lim    *github.Limiter
	issue  int
}

func newEnv(t *testing.T, tweak ...func(*github.Options)) *env {
	t.Helper()
	f := githubfake.New(t)
	f.AllowToken(tokAcme)
	f.AllowToken(tokBeta)
	lim := github.NewLimiter(github.LimiterOptions{Store: openStore(t, nil)})
	o := github.Options{BaseURL: f.URL(), Limiter: lim}
	for _, fn := range tweak {
		fn(&o)
	}
	c, err := github.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return &env{fake: f, client: c, lim: lim, issue: f.AddIssue(repo, "Widgets leak", "steps…", time.Time{})}
}

// posts counts the fake's POST requests.
func (e *env) posts() int {
	n := 0
	for _, r := range e.fake.Requests() {
		if r.Method == http.MethodPost {
			n++
		}
	}
	return n
}

func marker(s string) string { return "<!-- vantagepeers:test:" + s + " -->" }

func TestCommentOnceAgainstFakeGitHub(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		seed func(e *env) (wantID int64) // comments already there; the id of the marked one
		// wantGets is the number of comment pages read by the first call.
		wantGets     int
		wantExisting bool
	}{
		{"a new marker is posted", func(*env) int64 { return 0 }, 1, false},
		{"a marker on page 3 of 250 comments is found", func(e *env) int64 {
			var id int64
			for i := range 250 {
				body := fmt.Sprintf("comment %d", i)
				if i == 230 {
					body += "\n" + marker("m")
				}
				user := "someone"
				if i == 230 {
					user = githubfake.Login // only the bot's own comments count
				}
				if c := e.fake.AddComment(repo, e.issue, user, body); i == 230 {
					id = c.ID
				}
			}
			return id
		}, 3, true},
		{"250 comments without the marker: all read, then posted", func(e *env) int64 {
			for i := range 250 {
				e.fake.AddComment(repo, e.issue, "someone", fmt.Sprintf("comment %d <!-- vantagepeers:test:other -->", i))
			}
			return 0
		}, 3, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			wantID := tc.seed(e)
			body := "Taken by @alice.\n" + marker("m")
			c, err := e.client.CommentOnce(ctx, acme, repo, e.issue, marker("m"), body, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Existing != tc.wantExisting || c.URL == "" || c.ID == 0 {
				t.Fatalf("comment %+v, want existing=%v", c, tc.wantExisting)
			}
			if tc.wantExisting && c.ID != wantID {
				t.Fatalf("found comment %d, want %d", c.ID, wantID)
			}
			var gets []string
			for _, r := range e.fake.Requests() {
				if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/comments") {
					gets = append(gets, r.Query)
				}
			}
			if len(gets) != tc.wantGets || !strings.Contains(gets[0], "per_page=100") {
				t.Fatalf("comment pages read: %q, want %d at per_page=100", gets, tc.wantGets)
			}
			wantPosts := 0
			if !tc.wantExisting {
				wantPosts = 1
				cs := e.fake.Comments(repo, e.issue)
				if last := cs[len(cs)-1]; last.ID != c.ID || last.Body != body || last.User != githubfake.Login {
					t.Fatalf("stored %+v, want id %d with the body", last, c.ID)
				}
			}
			if e.posts() != wantPosts {
				t.Fatalf("%d posts, want %d", e.posts(), wantPosts)
			}
			// The same call again finds the comment and posts nothing.
			again, err := e.client.CommentOnce(ctx, acme, repo, e.issue, marker("m"), body, time.Time{})
			if err != nil || !again.Existing || again.ID != c.ID || again.URL != c.URL {
				t.Fatalf("second call: %+v, %v; want the existing %d", again, err, c.ID)
			}
			if e.posts() != wantPosts {
				t.Fatalf("second call posted: %d posts", e.posts())
			}
		})
	}
}

// lostAnswers forwards requests and, for POSTs, throws GitHub's answer
// away: the comment exists but the caller never learns it, as when a
// process dies between the post and its commit.
type lostAnswers struct{ next http.RoundTripper }

func (l lostAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost {
		return resp, err
	}
	_ = resp.Body.Close()
	return nil, errors.New("connection reset by peer")
}

func TestCommentOnceCrashGuardAgainstFakeGitHub(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	crashing, err := github.New(github.Options{BaseURL: e.fake.URL(), Limiter: e.lim,
		HTTPClient: &http.Client{Transport: lostAnswers{http.DefaultTransport}}})
	if err != nil {
		t.Fatal(err)
	}
	body := "Opened a PR.\n" + marker("pr")
	if _, err := crashing.CommentOnce(ctx, acme, repo, e.issue, marker("pr"), body, time.Time{}); !vp.IsKind(err, vp.KindUnavailable) {
		t.Fatalf("lost answer: %v, want unavailable (retried)", err)
	}
	if n := len(e.fake.Comments(repo, e.issue)); n != 1 {
		t.Fatalf("%d comments after the lost answer, want the 1 GitHub made", n)
	}
	// The job's retry, in another process.
	c, err := e.client.CommentOnce(ctx, acme, repo, e.issue, marker("pr"), body, time.Time{})
	if err != nil || !c.Existing {
		t.Fatalf("rerun: %+v, %v; want the existing comment", c, err)
	}
	if n := len(e.fake.Comments(repo, e.issue)); n != 1 || e.posts() != 1 {
		t.Fatalf("rerun posted: %d comments, %d posts", n, e.posts())
	}
}

// failOnPost scripts a failure on the fake just before each POST goes out,
// so that the write, not the read before it, is refused.
type failOnPost struct {
	next   http.RoundTripper
	fake   *githubfake.Server
	status int
	header http.Header
}

func (f failOnPost) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost {
		f.fake.FailNext(1, f.status, f.header, "")
	}
	return f.next.RoundTrip(r)
}

func TestRateLimitAnswersAgainstFakeGitHub(t *testing.T) {
	ctx := context.Background()
	reset := time.Now().Add(2 * time.Minute).Unix()
	untilReset := func() time.Duration { return time.Until(time.Unix(reset, 0)) }
	cases := []struct {
		name    string
		status  int
		header  http.Header
		onWrite bool
		want    func() time.Duration
	}{
		{"403 secondary limit with retry-after", 403, http.Header{"Retry-After": {"30"}}, false, func() time.Duration { return 30 * time.Second }},
		{"403 secondary limit without headers", 403, nil, false, func() time.Duration { return github.SecondaryLimitWait }},
		{"403 primary limit: remaining 0 until reset", 403, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {fmt.Sprint(reset)}}, false, untilReset},
		{"429 with retry-after", 429, http.Header{"Retry-After": {"45"}}, false, func() time.Duration { return 45 * time.Second }},
		{"429 with remaining 0 and reset", 429, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {fmt.Sprint(reset)}}, false, untilReset},
		{"429 without headers", 429, nil, false, func() time.Duration { return github.SecondaryLimitWait }},
		{"429 on the write itself", 429, http.Header{"Retry-After": {"20"}}, true, func() time.Duration { return 20 * time.Second }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var e *env
			e = newEnv(t, func(o *github.Options) {
				if tc.onWrite {
					o.HTTPClient = &http.Client{Transport: &failOnPostLazy{env: &e, status: tc.status, header: tc.header}}
				}
			})
			if !tc.onWrite {
				e.fake.FailNext(1, tc.status, tc.header, "")
			}
			_, err := e.client.CommentOnce(ctx, acme, repo, e.issue, marker("x"), marker("x"), time.Time{})
			want := tc.want()
			got, ok := vp.RetryAfter(err)
			if !ok {
				t.Fatalf("err = %v (kind %v), want rate_limited", err, vp.KindOf(err))
			}
			if d := got - want; d < -2*time.Second || d > 2*time.Second {
				t.Fatalf("RetryAfter %v, want about %v", got, want)
			}
			var ve *vp.Error
			if !errors.As(err, &ve) || ve.Op != "github.comment" {
				t.Fatalf("err %#v: want a *vp.Error of github.comment", err)
			}
			// The tenant is blocked for every writer: the next call makes
			// no request at all.
			before := len(e.fake.Requests())
			_, err = e.client.CommentOnce(ctx, acme, repo, e.issue, marker("y"), marker("y"), time.Time{})
			if !vp.IsKind(err, vp.KindRateLimited) || len(e.fake.Requests()) != before {
				t.Fatalf("blocked tenant: %v after %d new requests", err, len(e.fake.Requests())-before)
			}
			if _, err := e.lim.Reserve(ctx, "acme", want-3*time.Second); !vp.IsKind(err, vp.KindRateLimited) {
				t.Fatalf("limiter after the answer: %v, want the tenant blocked for about %v", err, want)
			}
			// Another tenant is not held back.
			c, err := e.client.CommentOnce(ctx, beta, repo, e.issue, marker("z"), marker("z"), time.Time{})
			if err != nil || c.Existing {
				t.Fatalf("other tenant: %+v, %v", c, err)
			}
		})
	}
}

// failOnPostLazy is failOnPost for a client built before its fake, and
// for the first POST only.
type failOnPostLazy struct {
	env    **env
	status int
	header http.Header
	done   atomic.Bool
}

func (f *failOnPostLazy) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && f.done.CompareAndSwap(false, true) {
		return failOnPost{next: http.DefaultTransport, fake: (*f.env).fake, status: f.status, header: f.header}.RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestLocalFailFastIsRateLimitedAgainstFakeGitHub(t *testing.T) {
	e := newEnv(t)
	for range 250 {
		e.fake.AddComment(repo, e.issue, "someone", "hi")
	}
	// Two reads use the quota up: the second answer says 0 remain, and
	// go-github refuses the third page itself, without a request.
	e.fake.SetQuota(2)
	_, err := e.client.CommentOnce(context.Background(), acme, repo, e.issue, marker("x"), marker("x"), time.Time{})
	d, ok := vp.RetryAfter(err)
	if !ok || d < 50*time.Minute || d > time.Hour {
		t.Fatalf("err %v, RetryAfter %v: want rate-limited until the quota's hour ends", err, d)
	}
	if n := len(e.fake.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2 (the third refused locally)", n)
	}
}

func TestErrorKindsAgainstFakeGitHub(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("é", github.MaxBodyChars) // within the limit in characters, not in bytes
	cases := []struct {
		name      string
		setup     func(e *env)
		acct      github.Account
		repo      string
		number    int
		marker    string
		body      string
		kind      vp.Kind
		field     string
		msg       string // in the error text
		noRequest bool
	}{
		{name: "500", setup: func(e *env) { e.fake.FailNext(1, 500, nil, "") }, kind: vp.KindUnavailable},
		{name: "502", setup: func(e *env) { e.fake.FailNext(1, 502, nil, "<html>bad gateway</html>") }, kind: vp.KindUnavailable},
		{name: "401 bad token", acct: github.Account{Tenant: "acme", Token: tokWrong}, kind: vp.KindUnauthorized, field: "token", msg: "missing, invalid"},
		{name: "403 without permission", acct: github.Account{Tenant: "acme", Token: tokAcme, Login: githubfake.Login}, setup: func(e *env) {
			e.fake.FailNext(1, 403, nil, `{"message":"Resource not accessible by personal access token","documentation_url":"https://docs.github.com/rest/issues/comments#create-an-issue-comment"}`)
		}, kind: vp.KindForbidden, msg: "Resource not accessible"},
		{name: "404 repository", repo: "acme/nothing", kind: vp.KindNotFound},
		{name: "404 issue", number: 999, kind: vp.KindNotFound},
		{name: "422 with GitHub's message", setup: func(e *env) {
			e.fake.FailNext(1, 422, nil, `{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}]}`)
		}, kind: vp.KindInvalid, field: "body", msg: "body is too long"},
		{name: "repo not owner/name", repo: "acme", kind: vp.KindInvalid, field: "repo", noRequest: true},
		{name: "repo with a path", repo: "acme/w/../x", kind: vp.KindInvalid, field: "repo", noRequest: true},
		{name: "number 0", number: -1, kind: vp.KindInvalid, field: "number", noRequest: true},
		{name: "no marker", marker: " ", kind: vp.KindInvalid, field: "marker", noRequest: true},
		{name: "marker not in body", body: "no marker here", kind: vp.KindInvalid, field: "marker", noRequest: true},
		{name: "body over 65,536 characters", body: big + "x" + marker("m"), kind: vp.KindTooLarge, field: "body", msg: "65536", noRequest: true},
		{name: "no token", acct: github.Account{Tenant: "acme"}, kind: vp.KindUnauthorized, field: "token", noRequest: true},
		{name: "bad tenant", acct: github.Account{Tenant: "Acme!", Token: tokAcme}, kind: vp.KindInvalid, field: "tenant", noRequest: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.setup != nil {
				tc.setup(e)
			}
			a, r, n, m, b := acme, repo, e.issue, marker("m"), "hello "+marker("m")
			if tc.acct != (github.Account{}) {
				a = tc.acct
			}
			if tc.repo != "" {
				r = tc.repo
			}
			if tc.number != 0 {
				n = max(tc.number, 0)
			}
			if tc.marker != "" {
				m = tc.marker
			}
			if tc.body != "" {
				b = tc.body
			}
			_, err := e.client.CommentOnce(ctx, a, r, n, m, b, time.Time{})
			var ve *vp.Error
			if !errors.As(err, &ve) || vp.KindOf(err) != tc.kind {
				t.Fatalf("err = %v (kind %v), want %v", err, vp.KindOf(err), tc.kind)
			}
			if ve.Op != "github.comment" || ve.Field != tc.field {
				t.Errorf("op %q field %q, want github.comment and %q", ve.Op, ve.Field, tc.field)
			}
			text := err.Error() + fmt.Sprintf(" %+v %#v", err, err)
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("message %q does not say %q", err.Error(), tc.msg)
			}
			for _, tok := range []string{tokAcme, tokWrong} {
				if strings.Contains(text, tok) {
					t.Fatalf("the error shows the token: %s", text)
				}
			}
			if tc.noRequest && len(e.fake.Requests()) != 0 {
				t.Errorf("%d requests made for an invalid call", len(e.fake.Requests()))
			}
			if e.posts() != 0 {
				t.Errorf("%d posts despite the failure", e.posts())
			}
		})
	}
}

func TestNetworkFailuresAreUnavailableAgainstFakeGitHub(t *testing.T) {
	ctx := context.Background()
	t.Run("timeout", func(t *testing.T) {
		e := newEnv(t, func(o *github.Options) { o.HTTPClient = &http.Client{Timeout: 50 * time.Millisecond} })
		e.fake.Delay(500 * time.Millisecond)
		if _, err := e.client.CommentOnce(ctx, acme, repo, e.issue, marker("m"), marker("m"), time.Time{}); !vp.IsKind(err, vp.KindUnavailable) {
			t.Fatalf("err = %v, want unavailable", err)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		lim := github.NewLimiter(github.LimiterOptions{Store: openStore(t, nil)})
		c, _ := github.New(github.Options{BaseURL: "http://127.0.0.1:1/", Limiter: lim})
		if _, err := c.CommentOnce(ctx, acme, repo, 1, marker("m"), marker("m"), time.Time{}); !vp.IsKind(err, vp.KindUnavailable) {
			t.Fatalf("err = %v, want unavailable", err)
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		e := newEnv(t)
		e.fake.Delay(500 * time.Millisecond)
		ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, _, err := e.client.PullRequest(ctx, acme, repo, 1, ""); !vp.IsKind(err, vp.KindUnavailable) {
			t.Fatalf("err = %v, want unavailable", err)
		}
	})
}

func TestWritesAreSpacedAgainstFakeGitHub(t *testing.T) {
	// The real clock, three writes: about two seconds.
	e := newEnv(t)
	for i := range 3 {
		m := marker(fmt.Sprint(i))
		if _, err := e.client.CommentOnce(context.Background(), acme, repo, e.issue, m, m, time.Time{}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	var at []time.Time
	for _, r := range e.fake.Requests() {
		if r.Method == http.MethodPost {
			at = append(at, r.At)
		}
	}
	if len(at) != 3 {
		t.Fatalf("%d writes, want 3", len(at))
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < time.Second {
			t.Errorf("writes %d and %d reached GitHub %v apart, want at least 1s", i-1, i, gap)
		}
	}
}

func TestWriteBeyondMaxWaitIsRateLimitedAgainstFakeGitHub(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, func(o *github.Options) { o.MaxWait = 100 * time.Millisecond })
	if _, err := e.client.CommentOnce(ctx, acme, repo, e.issue, marker("a"), marker("a"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	// The next slot is a second away, beyond MaxWait: the caller is
	// rescheduled instead of sleeping.
	start := time.Now()
	_, err := e.client.CommentOnce(ctx, acme, repo, e.issue, marker("b"), marker("b"), time.Time{})
	if d, ok := vp.RetryAfter(err); !ok || d <= 100*time.Millisecond || d > github.DefaultSpacing+github.SpacingMargin {
		t.Fatalf("err %v, RetryAfter %v; want rate-limited until the next slot", err, d)
	}
	if time.Since(start) > 500*time.Millisecond || e.posts() != 1 {
		t.Fatalf("waited %v, %d posts", time.Since(start), e.posts())
	}
	// A context ending before the slot is treated the same way.
	long := newEnv(t, func(o *github.Options) { o.MaxWait = time.Minute })
	if _, err := long.client.CommentOnce(ctx, acme, repo, long.issue, marker("a"), marker("a"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := long.client.CommentOnce(short, acme, repo, long.issue, marker("b"), marker("b"), time.Time{}); !vp.IsKind(err, vp.KindRateLimited) {
		t.Fatalf("slot past the deadline: %v, want rate-limited", err)
	}
}
