// Package github is VantagePeers' adapter to GitHub's REST API (over
// go-github v62): idempotent writes (a comment, an issue) that an outbox job
// may repeat after a crash without posting twice, a conditional read of a
// pull request, a store-backed limiter that keeps every process of a tenant
// within GitHub's content-creation limits, and the per-tenant credentials
// (webhook secret and token).
//
// Errors are *vp.Error values with a kind the outbox understands: a rate
// limit is vp.KindRateLimited with the wait GitHub asked for, a dependency
// failure vp.KindUnavailable, both retried; everything else is final.
package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Options configures a Client.
type Options struct {
	// BaseURL is "" for api.github.com, otherwise a GitHub Enterprise
	// Server (or fake) base such as "http://127.0.0.1:PORT/"; requests go
	// under its /api/v3/.
	BaseURL string
	// HTTPClient sends the requests; nil is a client with a 10 s timeout.
	HTTPClient *http.Client
	// Limiter paces the writes of each tenant. Writes fail without it;
	// reads do not use it.
	Limiter *Limiter
	// MaxWait is the longest a write waits in-process for its slot
	// (default 2 s). A slot further away, or past the context's deadline,
	// fails as vp.KindRateLimited so that the caller (an outbox job) is
	// rescheduled instead of holding a worker asleep.
	MaxWait time.Duration
	// Now is the clock that turns GitHub's reset times into waits
	// (default time.Now).
	Now func() time.Time
}

// DefaultMaxWait is Options.MaxWait's default.
const DefaultMaxWait = 2 * time.Second

// Account is who writes: the tenant (the limiter's key) and its GitHub
// token. The token is sent in the Authorization header and nowhere else:
// no error or log line carries it. Login is the account the token acts
// as, when the credentials say ("<app-slug>[bot]" for a GitHub App's
// installation token, which GitHub does not tell); "" asks GitHub once.
type Account struct {
	Tenant string
	Token  string
	Login  string
}

// Comment is a comment found or posted by CommentOnce.
type Comment struct {
	ID  int64
	URL string
	// Existing: a comment carrying the marker was already there and
	// nothing was posted.
	Existing bool
}

// Issue is an issue found or opened by CreateIssueOnce.
type Issue struct {
	Number int
	URL    string
	// Author is the login of the account that opened it (the bot's).
	Author string
	// Existing: an issue carrying the marker was already there and
	// nothing was opened.
	Existing bool
}

// PullRequest is what the domain reads of a pull request.
type PullRequest struct {
	State    string // "open" or "closed"
	Draft    bool
	Merged   bool // closed by a merge (a closed PR that is not merged was abandoned)
	MergedAt *time.Time
	ClosedAt *time.Time
	HTMLURL  string
	// ETag is the entity tag to send back as the next read's etag.
	ETag string
}

// Client calls GitHub. It is safe for concurrent use.
type Client struct {
	base    *gogithub.Client
	limiter *Limiter
	maxWait time.Duration
	now     func() time.Time
	logins  logins
}

// New returns a Client.
func New(o Options) (*Client, error) {
	const op = "github.New"
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	gh := gogithub.NewClient(hc)
	if o.BaseURL != "" {
		u, err := url.Parse(o.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, vp.Errorf(op, vp.KindInvalid, "BaseURL", "%q is not an http(s) URL", o.BaseURL)
		}
		if gh, err = gh.WithEnterpriseURLs(o.BaseURL, o.BaseURL); err != nil {
			return nil, vp.Wrap(op, vp.KindInvalid, err)
		}
	}
	// GitHub refuses requests without a User-Agent and asks that it name
	// the application.
	gh.UserAgent = "vantagepeers (go-github/v62)"
	c := &Client{base: gh, limiter: o.Limiter, maxWait: o.MaxWait, now: o.Now}
	if c.maxWait <= 0 {
		c.maxWait = DefaultMaxWait
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// api returns a go-github client that sends a's token. It is a fresh copy
// for every call, on purpose: go-github remembers the limits it has seen and
// fails fast on them, but per process, for the token it was built with, and
// v62 also takes a secondary limit's wait from x-ratelimit-reset (up to an
// hour) when GitHub sent no retry-after. The limiter is the memory of limits
// that every process shares; go-github's is kept only within one call.
func (c *Client) api(a Account) *gogithub.Client { return c.base.WithAuthToken(a.Token) }

// CommentOnce posts body on issue (or pull request) number of repo
// ("owner/name") unless a comment of the bot's own account ending with
// marker is already there: a rerun after a crash between the post and the
// caller's commit posts nothing. It reads only the comments updated since
// since (the caller passes a time safely before its job's first attempt;
// zero reads them all), so its cost does not grow with the issue's
// history. Two concurrent calls with the same marker could both post: the
// caller (an outbox job under its lease) must not run them at once.
func (c *Client) CommentOnce(ctx context.Context, a Account, repo string, number int, marker, body string, since time.Time) (Comment, error) {
	const op = "github.comment"
	owner, name, err := c.checkComment(op, a, repo, number, marker, body)
	if err != nil {
		return Comment{}, err
	}
	// A tenant blocked beyond what this call would wait makes no request
	// at all, not even the reads.
	if err := c.blocked(ctx, op, a.Tenant); err != nil {
		return Comment{}, err
	}
	found, err := c.findComment(ctx, op, a, owner, name, number, marker, since)
	if err != nil || found != nil {
		return commentOf(found, true), err
	}
	if err := c.pace(ctx, op, a.Tenant); err != nil {
		return Comment{}, err
	}
	cm, resp, err := c.api(a).Issues.CreateComment(ctx, owner, name, number, &gogithub.IssueComment{Body: &body})
	if err != nil {
		return Comment{}, c.fail(ctx, op, a, resp, err)
	}
	return commentOf(cm, false), nil
}

// checkComment checks a comment write before any request: the account and
// repository, the issue number, and the body ending with its marker.
func (c *Client) checkComment(op string, a Account, repo string, number int, marker, body string) (owner, name string, err error) {
	owner, name, err = c.checkWrite(op, a, repo)
	if err == nil {
		err = checkNumber(op, "number", number)
	}
	if err == nil {
		err = checkBody(op, body, marker)
	}
	return owner, name, err
}

func commentOf(cm *gogithub.IssueComment, existing bool) Comment {
	if cm == nil {
		return Comment{}
	}
	return Comment{ID: cm.GetID(), URL: cm.GetHTMLURL(), Existing: existing}
}

// findComment returns the bot's comment ending with marker among those
// updated since since, or nil.
func (c *Client) findComment(ctx context.Context, op string, a Account, owner, name string, number int, marker string, since time.Time) (*gogithub.IssueComment, error) {
	bot, err := c.botLogin(ctx, op, a)
	if err != nil {
		return nil, err
	}
	gh := c.api(a)
	opts := &gogithub.IssueListCommentsOptions{ListOptions: gogithub.ListOptions{PerPage: 100}}
	if !since.IsZero() {
		opts.Since = &since
	}
	for page := 1; ; {
		opts.Page = page
		list, resp, err := gh.Issues.ListComments(ctx, owner, name, number, opts)
		if err != nil {
			return nil, c.fail(ctx, op, a, resp, err)
		}
		for _, cm := range list {
			if byBot(cm.GetUser(), bot) && hasMarker(cm.GetBody(), marker) {
				return cm, nil
			}
		}
		if resp.NextPage <= page {
			return nil, nil
		}
		page = resp.NextPage
	}
}

// SetComment makes the bot's comment ending with marker on issue number
// say body, creating it once and editing it in place afterwards: the
// comment id if the caller remembers one (0: none), else the bot's
// comment found among those updated since since, else a new one. A
// remembered comment that is gone is looked for and, failing that,
// posted again. It returns the comment (Existing when it was there
// before). The caller must not run two SetComment of one marker at once.
func (c *Client) SetComment(ctx context.Context, a Account, repo string, number int, id int64, marker, body string, since time.Time) (Comment, error) {
	const op = "github.set_comment"
	owner, name, err := c.checkComment(op, a, repo, number, marker, body)
	if err != nil {
		return Comment{}, err
	}
	if err := c.blocked(ctx, op, a.Tenant); err != nil {
		return Comment{}, err
	}
	gh := c.api(a)
	if id > 0 {
		cm, err := c.editComment(ctx, op, a, owner, name, id, body)
		if !vp.IsKind(err, vp.KindNotFound) {
			return commentOf(cm, true), err
		}
	}
	found, err := c.findComment(ctx, op, a, owner, name, number, marker, since)
	if err != nil {
		return Comment{}, err
	}
	if found != nil {
		if found.GetBody() == body {
			return commentOf(found, true), nil
		}
		cm, err := c.editComment(ctx, op, a, owner, name, found.GetID(), body)
		return commentOf(cm, true), err
	}
	if err := c.pace(ctx, op, a.Tenant); err != nil {
		return Comment{}, err
	}
	cm, resp, err := gh.Issues.CreateComment(ctx, owner, name, number, &gogithub.IssueComment{Body: &body})
	if err != nil {
		return Comment{}, c.fail(ctx, op, a, resp, err)
	}
	return commentOf(cm, false), nil
}

func (c *Client) editComment(ctx context.Context, op string, a Account, owner, name string, id int64, body string) (*gogithub.IssueComment, error) {
	if err := c.pace(ctx, op, a.Tenant); err != nil {
		return nil, err
	}
	cm, resp, err := c.api(a).Issues.EditComment(ctx, owner, name, id, &gogithub.IssueComment{Body: &body})
	if err != nil {
		return nil, c.fail(ctx, op, a, resp, err)
	}
	return cm, nil
}

// CreateIssueOnce opens an issue on repo unless one (open or closed) that
// the bot's own account opened since since already ends its body with
// marker: an outsider's issue carrying the marker is never adopted. since bounds the
// search: GitHub lists issues newest first, and the scan stops at the first
// one created before since (zero: the whole repository). The caller passes
// a time safely before the first attempt of its job. Pull requests, which
// GitHub lists with the issues, are searched too.
func (c *Client) CreateIssueOnce(ctx context.Context, a Account, repo, title, body, marker string, labels []string, since time.Time) (Issue, error) {
	const op = "github.create_issue"
	owner, name, err := c.checkWrite(op, a, repo)
	if err == nil {
		err = checkTitle(op, title)
	}
	if err == nil {
		err = checkBody(op, body, marker)
	}
	if err == nil {
		err = checkLabels(op, labels)
	}
	if err != nil {
		return Issue{}, err
	}
	if err := c.blocked(ctx, op, a.Tenant); err != nil {
		return Issue{}, err
	}
	bot, err := c.botLogin(ctx, op, a)
	if err != nil {
		return Issue{}, err
	}
	gh := c.api(a)
	// GitHub's since filters on the last update, which is never before the
	// creation: every issue created since since is listed.
	opts := &gogithub.IssueListByRepoOptions{State: "all", Sort: "created", Direction: "desc", Since: since,
		ListOptions: gogithub.ListOptions{PerPage: 100}}
scan:
	for page := 1; ; {
		opts.Page = page
		list, resp, err := gh.Issues.ListByRepo(ctx, owner, name, opts)
		if err != nil {
			return Issue{}, c.fail(ctx, op, a, resp, err)
		}
		for _, is := range list {
			if byBot(is.GetUser(), bot) && hasMarker(is.GetBody(), marker) {
				return Issue{Number: is.GetNumber(), URL: is.GetHTMLURL(), Author: is.GetUser().GetLogin(), Existing: true}, nil
			}
			if !since.IsZero() && is.GetCreatedAt().Before(since) {
				break scan
			}
		}
		if resp.NextPage <= page {
			break
		}
		page = resp.NextPage
	}
	if err := c.pace(ctx, op, a.Tenant); err != nil {
		return Issue{}, err
	}
	req := &gogithub.IssueRequest{Title: &title, Body: &body}
	if len(labels) > 0 {
		req.Labels = &labels
	}
	is, resp, err := gh.Issues.Create(ctx, owner, name, req)
	if err != nil {
		return Issue{}, c.fail(ctx, op, a, resp, err)
	}
	return Issue{Number: is.GetNumber(), URL: is.GetHTMLURL(), Author: is.GetUser().GetLogin()}, nil
}

// Reopen reopens a closed issue (a regression of the error it reports);
// an open issue is left as it is. It is a paced write.
func (c *Client) Reopen(ctx context.Context, a Account, repo string, number int) error {
	const op = "github.reopen"
	owner, name, err := c.checkWrite(op, a, repo)
	if err == nil && number < 1 {
		err = vp.Errorf(op, vp.KindInvalid, "number", "must be an issue number ≥ 1, got %d", number)
	}
	if err != nil {
		return err
	}
	if err := c.blocked(ctx, op, a.Tenant); err != nil {
		return err
	}
	gh := c.api(a)
	is, resp, err := gh.Issues.Get(ctx, owner, name, number)
	if err != nil {
		return c.fail(ctx, op, a, resp, err)
	}
	if is.GetState() == "open" {
		return nil
	}
	if err := c.pace(ctx, op, a.Tenant); err != nil {
		return err
	}
	state := "open"
	_, resp, err = gh.Issues.Edit(ctx, owner, name, number, &gogithub.IssueRequest{State: &state})
	if err != nil {
		return c.fail(ctx, op, a, resp, err)
	}
	return nil
}

// PullRequest reads pull request number of repo. With the etag of a
// previous read it is a conditional request: an unchanged PR answers 304,
// which GitHub does not count against the rate limit, and PullRequest
// returns notModified with only ETag set (the caller keeps what it read).
func (c *Client) PullRequest(ctx context.Context, a Account, repo string, number int, etag string) (pr PullRequest, notModified bool, err error) {
	const op = "github.pull_request"
	if err := checkAccount(op, a); err != nil {
		return PullRequest{}, false, err
	}
	owner, name, err := splitRepo(op, repo)
	if err != nil {
		return PullRequest{}, false, err
	}
	if err := checkNumber(op, "number", number); err != nil {
		return PullRequest{}, false, err
	}
	gh := c.api(a)
	// The owner and name need no escaping: ValidRepo admits only
	// characters that are literal in a URL path.
	req, err := gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/pulls/%d", owner, name, number), nil)
	if err != nil {
		return PullRequest{}, false, vp.Wrap(op, vp.KindInternal, err)
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	var p gogithub.PullRequest
	resp, err := gh.Do(ctx, req, &p)
	// go-github reports a 304 as an *ErrorResponse (it is not a 2xx).
	if resp != nil && resp.Response != nil && resp.StatusCode == http.StatusNotModified {
		tag := resp.Header.Get("ETag")
		if tag == "" {
			tag = etag
		}
		return PullRequest{ETag: tag}, true, nil
	}
	if err != nil {
		return PullRequest{}, false, c.fail(ctx, op, a, resp, err)
	}
	pr = PullRequest{State: p.GetState(), Draft: p.GetDraft(), Merged: p.GetMerged(), HTMLURL: p.GetHTMLURL(), ETag: resp.Header.Get("ETag")}
	if p.MergedAt != nil {
		t := p.MergedAt.Time
		pr.MergedAt = &t
	}
	if p.ClosedAt != nil {
		t := p.ClosedAt.Time
		pr.ClosedAt = &t
	}
	return pr, false, nil
}

// checkWrite checks what every write needs: an account, a limiter and a
// repository.
func (c *Client) checkWrite(op string, a Account, repo string) (owner, name string, err error) {
	if err := checkAccount(op, a); err != nil {
		return "", "", err
	}
	if c.limiter == nil {
		return "", "", vp.E(op, vp.KindInternal, "", "the GitHub client has no Limiter: writes need one (github.Options.Limiter)")
	}
	return splitRepo(op, repo)
}

// waitBudget is the longest a write may wait now: MaxWait, and never past
// the context's deadline (a job that would wake up with no time left to
// write is better rescheduled).
func (c *Client) waitBudget(ctx context.Context) time.Duration {
	d := c.maxWait
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl))
	}
	return max(d, 0)
}

// blocked fails with vp.KindRateLimited when the tenant's next write slot
// is further away than this call may wait, before any request is made.
func (c *Client) blocked(ctx context.Context, op, tenant string) error {
	wait, err := c.limiter.due(ctx, tenant)
	if err != nil {
		return vp.Wrap(op, vp.KindOf(err), err)
	}
	if wait > c.waitBudget(ctx) {
		return rateLimited(op, tenant, wait, nil)
	}
	return nil
}

// pace takes the tenant's next write slot and sleeps until it.
func (c *Client) pace(ctx context.Context, op, tenant string) error {
	wait, err := c.limiter.Reserve(ctx, tenant, c.waitBudget(ctx))
	if err != nil {
		if d, ok := vp.RetryAfter(err); ok {
			return rateLimited(op, tenant, d, err)
		}
		return vp.Wrap(op, vp.KindOf(err), err)
	}
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		// The slot is lost, which only delays the tenant's next write.
		return vp.Unavailable(op, ctx.Err())
	}
}

func rateLimited(op, tenant string, wait time.Duration, err error) error {
	e := vp.RateLimited(op, wait, err)
	e.Msg = fmt.Sprintf("tenant %s must wait %v before its next GitHub write", tenant, wait.Round(time.Millisecond))
	return e
}
