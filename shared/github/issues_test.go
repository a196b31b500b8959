package github_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestCreateIssueOnceAgainstFakeGitHub(t *testing.T) {
	ctx := context.Background()
	since := time.Now().Add(-time.Hour)
	m := marker("incident:42")
	body := "Error rate up.\n" + m
	cases := []struct {
		name         string
		seed         func(e *env) int // the number of the issue that should be found, or 0
		wantExisting bool
	}{
		{"a new marker opens an issue", func(*env) int { return 0 }, false},
		{"a closed issue with the marker is found", func(e *env) int {
			n := e.fake.AddIssue(repo, "old", "x\n"+m, time.Time{})
			e.fake.SetIssueState(repo, n, "closed")
			return n
		}, true},
		{"the marker on page 2 of 150 issues is found", func(e *env) int {
			n := e.fake.AddIssue(repo, "first", m, time.Now().Add(-30*time.Minute))
			for i := range 150 {
				e.fake.AddIssue(repo, fmt.Sprint(i), "noise", time.Time{})
			}
			return n
		}, true},
		{"an issue with the marker created before since is not searched", func(e *env) int {
			e.fake.AddIssue(repo, "ancient", m, time.Now().Add(-2*time.Hour))
			return 0
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			want := tc.seed(e)
			before := len(e.fake.Issues(repo))
			is, err := e.client.CreateIssueOnce(ctx, acme, repo, "Incident 42", body, m, []string{"incident", "p1"}, since)
			if err != nil {
				t.Fatal(err)
			}
			if is.Existing != tc.wantExisting || is.Number == 0 || is.URL == "" {
				t.Fatalf("issue %+v, want existing=%v", is, tc.wantExisting)
			}
			all := e.fake.Issues(repo)
			if tc.wantExisting {
				if is.Number != want || len(all) != before || e.posts() != 0 {
					t.Fatalf("found #%d, want #%d; %d issues (was %d), %d posts", is.Number, want, len(all), before, e.posts())
				}
			} else {
				got := all[len(all)-1]
				if got.Number != is.Number || got.Body != body || got.Title != "Incident 42" || !slices.Equal(got.Labels, []string{"incident", "p1"}) {
					t.Fatalf("opened %+v", got)
				}
			}
			for _, r := range e.fake.Requests() {
				if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/issues") && (!strings.Contains(r.Query, "state=all") || !strings.Contains(r.Query, "since=") || !strings.Contains(r.Query, "per_page=100")) {
					t.Fatalf("issues listed with %q: want state=all, since and per_page=100", r.Query)
				}
			}
			again, err := e.client.CreateIssueOnce(ctx, acme, repo, "Incident 42", body, m, nil, since)
			if err != nil || !again.Existing || again.Number != is.Number {
				t.Fatalf("second call: %+v, %v; want #%d found", again, err, is.Number)
			}
			if n := len(e.fake.Issues(repo)); n != len(all) {
				t.Fatalf("second call opened an issue: %d issues", n)
			}
		})
	}
}

func TestCreateIssueOnceValidationAgainstFakeGitHub(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	m := marker("i")
	cases := []struct {
		name, title, body string
		labels            []string
		kind              vp.Kind
		field             string
	}{
		{"no title", " ", m, nil, vp.KindInvalid, "title"},
		{"long title", strings.Repeat("t", github.MaxTitleChars+1), m, nil, vp.KindTooLarge, "title"},
		{"body without marker", "t", "body", nil, vp.KindInvalid, "marker"},
		{"body too long", "t", strings.Repeat("b", github.MaxBodyChars) + m, nil, vp.KindTooLarge, "body"},
		{"empty label", "t", m, []string{"ok", ""}, vp.KindInvalid, "labels"},
		{"long label", "t", m, []string{strings.Repeat("l", github.MaxLabelChars+1)}, vp.KindTooLarge, "labels"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.client.CreateIssueOnce(ctx, acme, repo, tc.title, tc.body, m, tc.labels, time.Time{})
			var ve *vp.Error
			if vp.KindOf(err) != tc.kind || !asVP(err, &ve) || ve.Field != tc.field || ve.Op != "github.create_issue" {
				t.Fatalf("err = %v (kind %v), want %v on %s", err, vp.KindOf(err), tc.kind, tc.field)
			}
		})
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Fatalf("%d requests for invalid calls", n)
	}
}

func TestPullRequestAgainstFakeGitHub(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.fake.SetPR(repo, 7, "open", true, false)
	pr, nm, err := e.client.PullRequest(ctx, acme, repo, 7, "")
	if err != nil || nm {
		t.Fatalf("first read: %v, notModified %v", err, nm)
	}
	if pr.State != "open" || !pr.Draft || pr.Merged || pr.MergedAt != nil || pr.ClosedAt != nil || pr.ETag == "" || !strings.HasSuffix(pr.HTMLURL, "/pull/7") {
		t.Fatalf("open draft: %+v", pr)
	}
	// Unchanged: 304, notModified, and GitHub does not charge for it.
	e.fake.SetQuota(1)
	again, nm, err := e.client.PullRequest(ctx, acme, repo, 7, pr.ETag)
	if err != nil || !nm || again.ETag != pr.ETag {
		t.Fatalf("conditional read: %+v, notModified %v, %v", again, nm, err)
	}
	if reqs := e.fake.Requests(); reqs[len(reqs)-1].Status != http.StatusNotModified {
		t.Fatalf("the fake answered %d", reqs[len(reqs)-1].Status)
	}
	if _, _, err := e.client.PullRequest(ctx, acme, repo, 7, ""); !vp.IsKind(err, vp.KindRateLimited) {
		t.Fatalf("unconditional read with the quota spent: %v, want rate-limited", err)
	}
	e.fake.SetQuota(5000)

	cases := []struct {
		name          string
		state         string
		merged        bool
		wantMergedAt  bool
		wantClosedAt  bool
		wantStateRead string
	}{
		{"merged", "closed", true, true, true, "closed"},
		{"closed without a merge", "closed", false, false, true, "closed"},
		{"reopened", "open", false, false, false, "open"},
	}
	etag := pr.ETag
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.fake.SetPR(repo, 7, tc.state, false, tc.merged)
			got, nm, err := e.client.PullRequest(ctx, acme, repo, 7, etag)
			if err != nil || nm {
				t.Fatalf("read after a change: %v, notModified %v", err, nm)
			}
			if got.ETag == etag || got.ETag == "" {
				t.Fatalf("ETag %q did not change (was %q)", got.ETag, etag)
			}
			if got.State != tc.wantStateRead || got.Merged != tc.merged || (got.MergedAt != nil) != tc.wantMergedAt || (got.ClosedAt != nil) != tc.wantClosedAt || got.Draft {
				t.Fatalf("%+v", got)
			}
			etag = got.ETag
		})
	}
	if _, _, err := e.client.PullRequest(ctx, acme, repo, 8, ""); !vp.IsKind(err, vp.KindNotFound) {
		t.Fatalf("missing PR: %v", err)
	}
	if _, _, err := e.client.PullRequest(ctx, acme, "bad slug", 7, ""); !vp.IsKind(err, vp.KindInvalid) {
		t.Fatalf("bad repo: %v", err)
	}
}

func asVP(err error, target **vp.Error) bool {
	e, ok := err.(*vp.Error)
	if ok {
		*target = e
	}
	return ok
}

func TestCreateIssueOnceStopsAtSinceAgainstFakeGitHub(t *testing.T) {
	e := newEnv(t)
	// 150 issues created before since but commented on since: GitHub's
	// since (last update) lists them all, newest created first; the scan
	// stops at the first one created before since instead of reading page 2.
	for i := range 150 {
		n := e.fake.AddIssue(repo, fmt.Sprint(i), "old", time.Now().Add(-3*time.Hour))
		e.fake.AddComment(repo, n, "someone", "bump")
	}
	m := marker("fresh")
	if _, err := e.client.CreateIssueOnce(context.Background(), acme, repo, "Fresh", m, m, nil, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if gets := e.fake.Count(http.MethodGet, "/issues"); gets != 1 || e.posts() != 1 {
		t.Fatalf("%d pages read and %d posts, want 1 and 1", gets, e.posts())
	}
}

func TestReopenAgainstFakeGitHub(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.fake.SetIssueState(repo, e.issue, "closed")
	if err := e.client.Reopen(ctx, acme, repo, e.issue); err != nil {
		t.Fatal(err)
	}
	for _, is := range e.fake.Issues(repo) {
		if is.Number == e.issue && is.State != "open" {
			t.Fatalf("issue %d is %s after Reopen", is.Number, is.State)
		}
	}
	before := e.posts()
	if err := e.client.Reopen(ctx, acme, repo, e.issue); err != nil {
		t.Fatal(err)
	}
	if e.posts() != before {
		t.Error("reopening an open issue wrote")
	}
	patches := 0
	for _, r := range e.fake.Requests() {
		if r.Method == http.MethodPatch {
			patches++
		}
	}
	if patches != 1 {
		t.Errorf("%d PATCH requests, want 1", patches)
	}
	if err := e.client.Reopen(ctx, acme, repo, 999); !vp.IsKind(err, vp.KindNotFound) {
		t.Errorf("unknown issue: %v", err)
	}
}
