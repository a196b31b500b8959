package github_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/github/githubfake"
)

// TestCommentOnceReadsStayConstantAgainstFakeGitHub: a job reads only the
// comments updated since it was enqueued, so the cost of one comment does
// not grow with the issue's history (it did: 1, 3 and 10 pages for 0, 250
// and 1,000 comments already there; so the n-th comment of an issue cost
// about n/100 reads).
func TestCommentOnceReadsStayConstantAgainstFakeGitHub(t *testing.T) {
	ctx := context.Background()
	var reads []int
	for _, old := range []int{0, 250, 1000} {
		e := newEnv(t)
		for k := range old {
			e.fake.AddCommentAt(repo, e.issue, "someone", fmt.Sprint("comment ", k), time.Now().Add(-24*time.Hour))
		}
		enqueued := time.Now().Add(-time.Minute)
		before := e.fake.Count(http.MethodGet, "/comments")
		body := "Fix ready.\n\n" + marker("T8")
		if c, err := e.client.CommentOnce(ctx, acme, repo, e.issue, marker("T8"), body, enqueued); err != nil || c.Existing {
			t.Fatalf("with %d old comments: %+v, %v", old, c, err)
		}
		// The retry after a crash still finds it.
		if c, err := e.client.CommentOnce(ctx, acme, repo, e.issue, marker("T8"), body, enqueued); err != nil || !c.Existing {
			t.Fatalf("retry with %d old comments: %+v, %v; want the existing comment", old, c, err)
		}
		reads = append(reads, e.fake.Count(http.MethodGet, "/comments")-before)
		for _, r := range e.fake.Requests() {
			if strings.HasSuffix(r.Path, "/comments") && r.Method == http.MethodGet && !strings.Contains(r.Query, "since=") {
				t.Fatalf("comments listed without since: %q", r.Query)
			}
		}
	}
	if reads[0] != 2 || reads[1] != reads[0] || reads[2] != reads[0] {
		t.Fatalf("comment pages read for two calls with 0, 250 and 1,000 older comments: %v; want 2 each", reads)
	}
}

// TestSetCommentEditsInPlaceAgainstFakeGitHub: one comment, created once,
// then edited, by id or, after a crash that lost the id, found by marker
// among the bot's own.
func TestSetCommentEditsInPlaceAgainstFakeGitHub(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	since := time.Now().Add(-time.Hour)
	m := marker("errsummary-list")
	e.fake.AddComment(repo, e.issue, "mallory", "forged\n\n"+m)
	first, err := e.client.SetComment(ctx, acme, repo, e.issue, 0, m, "one\n\n"+m, since)
	if err != nil || first.Existing {
		t.Fatalf("first: %+v, %v; want a new comment (the outsider's does not count)", first, err)
	}
	if _, err := e.client.SetComment(ctx, acme, repo, e.issue, first.ID, m, "one two\n\n"+m, since); err != nil {
		t.Fatal(err)
	}
	// The id was lost (a crash before the caller's commit): found by marker.
	again, err := e.client.SetComment(ctx, acme, repo, e.issue, 0, m, "one two three\n\n"+m, since)
	if err != nil || again.ID != first.ID || !again.Existing {
		t.Fatalf("without the id: %+v, %v; want comment %d edited", again, err, first.ID)
	}
	// The same body again writes nothing.
	patches := e.fake.Count(http.MethodPatch, "")
	if _, err := e.client.SetComment(ctx, acme, repo, e.issue, 0, m, "one two three\n\n"+m, since); err != nil {
		t.Fatal(err)
	}
	cs := e.fake.Comments(repo, e.issue)
	if len(cs) != 2 || cs[1].User != githubfake.Login || cs[1].Body != "one two three\n\n"+m || cs[0].Body != "forged\n\n"+m {
		t.Fatalf("comments: %+v; want the outsider's untouched and one of the bot's", cs)
	}
	if e.posts() != 1 || patches != 2 || e.fake.Count(http.MethodPatch, "") != 2 {
		t.Fatalf("%d posts and %d patches (then %d); want 1 and 2, and no patch of an unchanged body", e.posts(), patches, e.fake.Count(http.MethodPatch, ""))
	}
	// A remembered comment that was deleted is posted again.
	e2 := newEnv(t)
	c, err := e2.client.SetComment(ctx, acme, repo, e2.issue, 999_999, m, "x\n\n"+m, since)
	if err != nil || c.Existing || len(e2.fake.Comments(repo, e2.issue)) != 1 {
		t.Fatalf("a remembered id that is gone: %+v, %v", c, err)
	}
}
