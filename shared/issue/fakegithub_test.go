package issue_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/github/githubfake"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type staticCreds github.Credentials

func (c staticCreds) Credentials(_ context.Context, _ string) (github.Credentials, error) {
	return github.Credentials(c), nil
}

// githubEnv is env with the REST adapter (go-github v62) in front of a
// fake of GitHub's REST API instead of the recording GitHub.
func githubEnv(t *testing.T, st store.Store, spacing time.Duration, now func() time.Time) (*env, *githubfake.Server) {
	t.Helper()
	fake := githubfake.New(t)
	fake.AllowToken("ghs_test")
	client, err := github.New(github.Options{BaseURL: fake.URL(), Now: now,
		Limiter: github.NewLimiter(github.LimiterOptions{Store: st, Spacing: spacing, Now: now})})
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, st, github.ForTenants{Client: client, Credentials: staticCreds{Token: "ghs_test"}}), fake
}

func TestIRPPostsItsFourCommentsAgainstFakeGitHub(t *testing.T) {
	st := openSQLite(t)
	e, fake := githubEnv(t, st, -1, nil) // pacing is the limiter's tests' subject
	e.mapRepo(t, "acme/api", "sigma", "api")
	n := fake.AddIssue("acme/api", "Login fails", "steps", time.Time{})
	e.deliver(t, "issues", "d-1", issuesPayload(t, "opened", ghIssue{Repo: "acme/api", Number: n, Title: "Login fails"}, nil))
	e.drain(t)
	i := e.issue(t, "acme/api", n)
	for _, last := range []int{6, 8, 11, 13} {
		e.completeSteps(t, i.MissionID, last, "ok")
		e.drain(t)
	}
	cs := fake.Comments("acme/api", n)
	if len(cs) != 4 {
		t.Fatalf("%d comments on the fake, want 4", len(cs))
	}
	for k, prefix := range []string{"Investigating - assigned to Sigma", "Bug reproduced", "Fix ready", "Fixed and deployed"} {
		if !strings.HasPrefix(cs[k].Body, prefix) || !strings.Contains(cs[k].Body, "<!-- vantagepeers:irp:") {
			t.Errorf("comment %d = %q", k, cs[k].Body)
		}
	}
	// The crash between GitHub's answer and the job's removal: the job runs
	// again, lists the issue's comments and finds its marker.
	for _, step := range []string{"open", "T6", "T8", "T11"} {
		if err := e.issues.CommentJob(ctx(), commentJobFor(t, i, step)); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(fake.Comments("acme/api", n)); got != 4 {
		t.Fatalf("%d comments after every job ran again, want 4", got)
	}
}

func TestCommentRateLimitedIsRescheduledAgainstFakeGitHub(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		header http.Header
		want   time.Duration
	}{
		{"403 secondary limit with Retry-After", 403, http.Header{"Retry-After": {"30"}}, 30 * time.Second},
		{"429 with Retry-After (go-github v62 does not know 429)", 429, http.Header{"Retry-After": {"45"}}, 45 * time.Second},
		{"403 secondary limit without headers", 403, nil, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := time.Now()
			now := func() time.Time { return clock }
			e, fake := githubEnv(t, openSQLite(t), -1, now)
			e.mapRepo(t, "acme/api", "sigma", "api")
			n := fake.AddIssue("acme/api", "x", "", time.Time{})
			e.deliver(t, "issues", "d-1", issuesPayload(t, "opened", ghIssue{Repo: "acme/api", Number: n, Title: "x", Association: "NONE"}, nil))
			i := e.issue(t, "acme/api", n)
			i.Orchestrator = "sigma"
			job := commentJobFor(t, i, "open")
			fake.FailNext(1, tc.status, tc.header, "")
			err := e.issues.CommentJob(ctx(), job)
			if d, ok := vp.RetryAfter(err); !ok || d < tc.want-time.Second || d > tc.want {
				t.Fatalf("error %v (retry after %v, %v); want rate limited for %v", err, d, ok, tc.want)
			}
			if isPermanent(err) {
				t.Fatal("a rate limit is not permanent")
			}
			// Until the wait is over the tenant's writes wait, without a request.
			before := len(fake.Requests())
			if err := e.issues.CommentJob(ctx(), job); !vp.IsKind(err, vp.KindRateLimited) {
				t.Fatalf("during the block: %v, want rate limited", err)
			}
			if got := len(fake.Requests()); got != before {
				t.Errorf("%d requests made during the block", got-before)
			}
			clock = clock.Add(tc.want + time.Second)
			if err := e.issues.CommentJob(ctx(), job); err != nil {
				t.Fatalf("after the wait: %v", err)
			}
			if got := len(fake.Comments("acme/api", n)); got != 1 {
				t.Fatalf("%d comments, want 1", got)
			}
		})
	}
}
