// Package githubfake is a fake of the part of GitHub's REST API that
// shared/github calls, on httptest: the documented wire protocol (paths
// under /api/v3/ as GitHub Enterprise Server serves them, token
// authentication, JSON shapes, Link pagination, ETag and 304, rate-limit
// headers and GitHub's error bodies), backed by an in-memory model, with
// inspectors and scripted failures for tests. It is a fake, not GitHub:
// tests that use it say so in their names.
package githubfake

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultQuota is the primary rate limit of a token, per hour, as GitHub
// grants a user token.
const DefaultQuota = 5000

// MaxBodyChars is GitHub's limit on a comment or issue body.
const MaxBodyChars = 65536

// Login is the user every allowed token acts as.
const Login = "vantagepeers[bot]"

// Documentation URLs as GitHub puts them in error bodies; go-github
// recognises a secondary limit by the suffix of the second.
const (
	docRest      = "https://docs.github.com/rest"
	docPrimary   = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit"
	docSecondary = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)

// Server is the fake. It is safe for concurrent use.
type Server struct {
	t   testing.TB
	srv *httptest.Server

	mu      sync.Mutex
	tokens  map[string]*account
	repos   map[string]*repo
	nextID  int64
	reqs    []Request
	fails   []failure
	delay   time.Duration
	quota   int
	userIDs int64
	writes  []Write
}

// Write is a body the fake stored: an issue opened or edited, a comment
// posted or edited. Tests parse them as Markdown.
type Write struct {
	Method    string // POST or PATCH
	Kind      string // "issue" or "comment"
	Repo      string
	Number    int   // the issue's
	CommentID int64 // a comment's
	User      string
	Title     string // an issue's, when set
	Body      string
}

// FakeComment is a stored comment.
type FakeComment struct {
	ID        int64
	Body      string
	User      string
	CreatedAt time.Time
	UpdatedAt time.Time
	URL       string
}

// FakeIssue is a stored issue (or pull request: GitHub lists both).
type FakeIssue struct {
	Number      int
	Title       string
	Body        string
	State       string
	Labels      []string
	User        string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	URL         string
	PullRequest bool
	Comments    int
}

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Query  string
	At     time.Time // arrival
	Status int
}

type account struct {
	login  string
	app    bool // a GitHub App installation token: GET /user is refused
	id     int64
	used   int
	window time.Time // start of the current hour of the quota
}

type failure struct {
	status int
	header http.Header
	body   string
}

type repo struct {
	issues map[int]*issue
	next   int // last number used
}

type issue struct {
	number                   int
	title, body, state, user string
	labels                   []string
	created, updated         time.Time
	closedAt                 *time.Time
	comments                 []FakeComment
	pr                       bool
	draft, merged            bool
	mergedAt                 *time.Time
	etagVersion              int
}

// New starts a fake, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{t: t, tokens: map[string]*account{}, repos: map[string]*repo{}, quota: DefaultQuota}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}/issues/{number}/comments", s.route(s.listComments))
	mux.HandleFunc("POST /api/v3/repos/{owner}/{repo}/issues/{number}/comments", s.route(s.createComment))
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}/issues", s.route(s.listIssues))
	mux.HandleFunc("POST /api/v3/repos/{owner}/{repo}/issues", s.route(s.createIssue))
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}/issues/{number}", s.route(s.getIssue))
	mux.HandleFunc("PATCH /api/v3/repos/{owner}/{repo}/issues/{number}", s.route(s.editIssue))
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}/pulls/{number}", s.route(s.getPull))
	mux.HandleFunc("PATCH /api/v3/repos/{owner}/{repo}/issues/comments/{id}", s.route(s.editComment))
	mux.HandleFunc("GET /api/v3/user", s.route(s.getUser))
	mux.HandleFunc("/", s.route(func(*http.Request, *account) reply { return notFound() }))
	s.srv = httptest.NewServer(s.front(mux))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base to give github.Options.BaseURL ("http://127.0.0.1:PORT/").
func (s *Server) URL() string { return s.srv.URL + "/" }

// AllowToken makes tok a valid token (of the user Login).
func (s *Server) AllowToken(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userIDs++
	s.tokens[tok] = &account{login: Login, id: 1000 + s.userIDs}
}

// AllowAppToken makes tok a valid GitHub App installation token of the app
// slug: it acts as "<slug>[bot]", and GET /user refuses it (403), as GitHub
// does.
func (s *Server) AllowAppToken(tok, slug string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userIDs++
	s.tokens[tok] = &account{login: slug + "[bot]", app: true, id: 1000 + s.userIDs}
}

// AllowTokenAs makes tok a valid token of the user login.
func (s *Server) AllowTokenAs(tok, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userIDs++
	s.tokens[tok] = &account{login: login, id: 1000 + s.userIDs}
}

// SetQuota sets every token's primary rate limit per hour (default
// DefaultQuota); a token that has used it is answered 403 with
// x-ratelimit-remaining 0 until its hour ends.
func (s *Server) SetQuota(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quota = n
}

// AddRepo creates repo ("owner/name"); the requests on a repository the
// fake does not have are answered 404, as GitHub does.
func (s *Server) AddRepo(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(name)
}

// AddIssue stores an open issue created at created (zero: now) and returns
// its number.
func (s *Server) AddIssue(repoName, title, body string, created time.Time) int {
	return s.AddIssueBy(repoName, Login, title, body, created)
}

// AddIssueBy is AddIssue by user (an outsider, say).
func (s *Server) AddIssueBy(repoName, user, title, body string, created time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if created.IsZero() {
		created = now()
	}
	r := s.repo(repoName)
	r.next++
	r.issues[r.next] = &issue{number: r.next, title: title, body: body, state: "open", user: user, created: created, updated: created}
	return r.next
}

// SetIssueState opens or closes issue n, which must exist.
func (s *Server) SetIssueState(repoName string, n int, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.repo(repoName).issues[n]
	if is == nil || state != "open" && state != "closed" {
		s.t.Fatalf("githubfake: SetIssueState(%s, %d, %q): no such issue, or not open/closed", repoName, n, state)
	}
	t := now()
	is.state, is.updated, is.closedAt = state, t, nil
	if state == "closed" {
		is.closedAt = &t
	}
}

// AddComment stores a comment by user on issue n, which must exist.
func (s *Server) AddComment(repoName string, n int, user, body string) FakeComment {
	return s.AddCommentAt(repoName, n, user, body, time.Time{})
}

// AddCommentAt is AddComment of a comment created (and last updated) at
// at (zero: now).
func (s *Server) AddCommentAt(repoName string, n int, user, body string, at time.Time) FakeComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.repo(repoName).issues[n]
	if is == nil {
		s.t.Fatalf("githubfake: %s has no issue %d", repoName, n)
	}
	return s.addComment(repoName, is, user, body, at)
}

func (s *Server) addComment(repoName string, is *issue, user, body string, at time.Time) FakeComment {
	s.nextID++
	t := now()
	if !at.IsZero() {
		t = at.UTC().Truncate(time.Second)
	}
	c := FakeComment{ID: s.nextID, Body: body, User: user, CreatedAt: t, UpdatedAt: t,
		URL: fmt.Sprintf("%s%s/issues/%d#issuecomment-%d", s.URL(), repoName, is.number, s.nextID)}
	is.comments = append(is.comments, c)
	is.updated = t
	return c
}

// Comments returns the comments of issue n, oldest first.
func (s *Server) Comments(repoName string, n int) []FakeComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.repo(repoName).issues[n]; is != nil {
		return slices.Clone(is.comments)
	}
	return nil
}

// Issues returns the issues and pull requests of repo, by number.
func (s *Server) Issues(repoName string) []FakeIssue {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(repoName)
	var out []FakeIssue
	for n := 1; n <= r.next; n++ {
		if is := r.issues[n]; is != nil {
			out = append(out, FakeIssue{Number: is.number, Title: is.title, Body: is.body, State: is.state,
				Labels: slices.Clone(is.labels), User: is.user, CreatedAt: is.created, UpdatedAt: is.updated,
				URL: s.htmlURL(repoName, is), PullRequest: is.pr, Comments: len(is.comments)})
		}
	}
	return out
}

// SetPR creates or updates pull request n of repo: state "open" or
// "closed", and merged (closed by a merge) or not. Every call changes its
// ETag, as any change on GitHub does.
func (s *Server) SetPR(repoName string, n int, state string, draft, merged bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if state != "open" && state != "closed" || merged && state != "closed" || n < 1 {
		s.t.Fatalf("githubfake: SetPR(%s, %d, %q, merged=%v): a PR is open or closed, and merged only when closed", repoName, n, state, merged)
	}
	r := s.repo(repoName)
	t := now()
	is := r.issues[n]
	if is == nil {
		is = &issue{number: n, title: fmt.Sprintf("PR %d", n), user: Login, created: t}
		r.issues[n] = is
		r.next = max(r.next, n)
	}
	is.pr, is.state, is.draft, is.merged, is.updated = true, state, draft, merged, t
	is.etagVersion++
	is.closedAt, is.mergedAt = nil, nil
	if state == "closed" {
		is.closedAt = &t
	}
	if merged {
		is.mergedAt = &t
	}
}

// Writes returns every body the fake stored through the API (issues opened
// or edited, comments posted or edited), in order.
func (s *Server) Writes() []Write {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.writes)
}

// Count returns how many requests with method whose path ends with
// suffix the fake received ("GET", "/comments", say).
func (s *Server) Count(method, suffix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.reqs {
		if r.Method == method && strings.HasSuffix(r.Path, suffix) {
			n++
		}
	}
	return n
}

// Requests returns the requests received so far, in the order they ended.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// FailNext answers the next n requests (after authentication) with status,
// header and body instead of serving them. An empty body is GitHub's for
// that status: for 403 and 429 the secondary rate limit's, which go-github
// recognises by its documentation_url.
func (s *Server) FailNext(n int, status int, header http.Header, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails = append(s.fails, failure{status: status, header: header.Clone(), body: body})
	}
}

// Delay makes every request wait d before it is served.
func (s *Server) Delay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// repo returns the named repository, creating it. Callers hold s.mu.
func (s *Server) repo(name string) *repo {
	if !strings.Contains(name, "/") {
		s.t.Fatalf("githubfake: %q is not owner/name", name)
	}
	r := s.repos[name]
	if r == nil {
		r = &repo{issues: map[int]*issue{}}
		s.repos[name] = r
	}
	return r
}

func (s *Server) htmlURL(repoName string, is *issue) string {
	kind := "issues"
	if is.pr {
		kind = "pull"
	}
	return fmt.Sprintf("%s%s/%s/%d", s.URL(), repoName, kind, is.number)
}

// GitHub's timestamps have a resolution of a second.
func now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// ---- the HTTP side

type ctxKey struct{}

// front records every request, applies the delay, authenticates, and
// serves the scripted failures before the routes.
func (s *Server) front(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The request is recorded before it is served and its status when
		// the header is written, so that a client that has read an answer
		// always finds its request in Requests.
		s.mu.Lock()
		idx := len(s.reqs)
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, At: time.Now()})
		s.mu.Unlock()
		rec := &statusWriter{ResponseWriter: w, record: func(status int) {
			s.mu.Lock()
			s.reqs[idx].Status = status
			s.mu.Unlock()
		}}
		defer func() {
			if rec.status == 0 || rec.status == 499 {
				rec.record(max(rec.status, http.StatusOK))
			}
		}()
		s.mu.Lock()
		delay := s.delay
		s.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				rec.status = 499 // the client went away, as nginx logs it
				return
			}
		}
		auth := r.Header.Get("Authorization")
		tok, ok := strings.CutPrefix(auth, "token ")
		if !ok {
			tok, _ = strings.CutPrefix(auth, "Bearer ")
		}
		s.mu.Lock()
		acct := s.tokens[tok]
		var f *failure
		if acct != nil && len(s.fails) > 0 {
			f = &s.fails[0]
			s.fails = s.fails[1:]
		}
		s.mu.Unlock()
		switch {
		case auth == "":
			write(rec, reply{status: http.StatusUnauthorized, body: errBody("Requires authentication", docRest)})
		case acct == nil:
			write(rec, reply{status: http.StatusUnauthorized, body: errBody("Bad credentials", docRest)})
		case f != nil:
			s.writeFailure(rec, acct, *f)
		default:
			next.ServeHTTP(rec, r.WithContext(contextWith(r, acct)))
		}
	})
}

func (s *Server) writeFailure(w http.ResponseWriter, acct *account, f failure) {
	// GitHub sends the primary limit's headers on every answer, a
	// secondary limit's included; the scripted headers override them.
	s.mu.Lock()
	s.rateHeaders(w.Header(), acct, false)
	s.mu.Unlock()
	for k, v := range f.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	body := f.body
	if body == "" {
		b, _ := json.Marshal(defaultFailure(f.status))
		body = string(b)
	}
	w.WriteHeader(f.status)
	_, _ = w.Write([]byte(body))
}

func defaultFailure(status int) map[string]any {
	switch {
	case status == http.StatusForbidden || status == http.StatusTooManyRequests:
		return errBody("You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", docSecondary)
	case status >= 500:
		return errBody("Server Error", "")
	}
	return errBody(http.StatusText(status), docRest)
}

// reply is what a route answers; route writes it with the rate headers.
type reply struct {
	status int
	header http.Header
	body   any // nil: no body
}

// route wraps a handler: it charges the token's quota and refuses the
// request once the quota is spent, except a conditional read that is
// answered 304, which GitHub neither charges nor refuses. A write is
// refused before it is applied.
func (s *Server) route(h func(*http.Request, *account) reply) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		acct := r.Context().Value(ctxKey{}).(*account)
		s.mu.Lock()
		s.roll(acct)
		spent := acct.used >= s.quota
		s.mu.Unlock()
		limited := reply{status: http.StatusForbidden, body: errBody(fmt.Sprintf("API rate limit exceeded for user ID %d.", acct.id), docPrimary)}
		var rep reply
		switch {
		case spent && r.Method != http.MethodGet:
			rep = limited
		default:
			rep = h(r, acct)
			if spent && rep.status != http.StatusNotModified {
				rep = limited
			}
		}
		s.mu.Lock()
		s.rateHeaders(w.Header(), acct, rep.status != http.StatusNotModified && !spent)
		s.mu.Unlock()
		for k, v := range rep.header {
			w.Header()[k] = v
		}
		write(w, rep)
	}
}

// roll starts a new quota hour when the last one is over. Callers hold s.mu.
func (s *Server) roll(a *account) {
	if t := time.Now(); a.window.IsZero() || !t.Before(a.window.Add(time.Hour)) {
		a.window, a.used = t, 0
	}
}

// rateHeaders sets the x-ratelimit-* headers, charging one request when
// charge. Callers hold s.mu.
func (s *Server) rateHeaders(h http.Header, a *account, charge bool) {
	s.roll(a)
	if charge {
		a.used++
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.quota))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(s.quota-a.used, 0)))
	h.Set("X-RateLimit-Used", strconv.Itoa(a.used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(a.window.Add(time.Hour).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
}

func write(w http.ResponseWriter, rep reply) {
	if rep.body == nil {
		w.WriteHeader(rep.status)
		return
	}
	b, err := json.Marshal(rep.body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(rep.status)
	_, _ = w.Write(b)
}

func errBody(msg, doc string) map[string]any {
	m := map[string]any{"message": msg}
	if doc != "" {
		m["documentation_url"] = doc
	}
	return m
}

func notFound() reply {
	return reply{status: http.StatusNotFound, body: errBody("Not Found", docRest)}
}

func validation(resource, field, code, msg string) reply {
	e := map[string]any{"resource": resource, "field": field, "code": code}
	if msg != "" {
		e["message"] = msg
	}
	return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
		"message": "Validation Failed", "errors": []any{e}, "documentation_url": docRest}}
}

type statusWriter struct {
	http.ResponseWriter
	status int
	record func(status int)
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.record(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// pagination answers page and per_page as GitHub does: per_page 30 by
// default and at most 100, and a Link header with the next, last, first
// and prev pages that exist, keeping the request's other parameters.
func pagination[T any](r *http.Request, items []T) ([]T, http.Header, *reply) {
	q := r.URL.Query()
	per, page := 30, 1
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			rep := validation("", "per_page", "invalid", "per_page must be a positive integer")
			return nil, nil, &rep
		}
		per = min(n, 100)
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			rep := validation("", "page", "invalid", "page must be a positive integer")
			return nil, nil, &rep
		}
		page = n
	}
	last := max((len(items)+per-1)/per, 1)
	from := min((page-1)*per, len(items))
	out := items[from:min(from+per, len(items))]
	link := func(p int, rel string) string {
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(per))
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: q.Encode()}
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(min(page-1, last), "prev"))
	}
	h := http.Header{}
	if len(links) > 0 {
		h.Set("Link", strings.Join(links, ", "))
	}
	return out, h, nil
}

// etag is the pull request's entity tag, weak as GitHub's are.
func etag(repoName string, is *issue) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s#%d@%d", repoName, is.number, is.etagVersion))
	return fmt.Sprintf(`W/"%x"`, sum[:16])
}

// etagMatch compares an If-None-Match header with tag, weakly (RFC 9110:
// If-None-Match uses the weak comparison), with "*" and lists.
func etagMatch(header, tag string) bool {
	strip := func(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "W/") }
	for _, c := range strings.Split(header, ",") {
		if strings.TrimSpace(c) == "*" || strip(c) == strip(tag) {
			return true
		}
	}
	return false
}
