package githubfake

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func contextWith(r *http.Request, a *account) context.Context {
	return context.WithValue(r.Context(), ctxKey{}, a)
}

// target finds the request's repository and, when the path has one, its
// issue. Callers hold s.mu.
func (s *Server) target(r *http.Request, wantIssue bool) (string, *repo, *issue, bool) {
	name := r.PathValue("owner") + "/" + r.PathValue("repo")
	rp := s.repos[name]
	if rp == nil {
		return name, nil, nil, false
	}
	if !wantIssue {
		return name, rp, nil, true
	}
	n, err := strconv.Atoi(r.PathValue("number"))
	if err != nil {
		return name, rp, nil, false
	}
	is := rp.issues[n]
	return name, rp, is, is != nil
}

// listComments lists an issue's comments, oldest first; since keeps
// those updated at or after it, as GitHub does.
func (s *Server) listComments(r *http.Request, _ *account) reply {
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return validation("IssueComment", "since", "invalid", "since must be an ISO 8601 timestamp")
		}
		since = t
	}
	s.mu.Lock()
	name, _, is, ok := s.target(r, true)
	var cs []FakeComment
	if ok {
		for _, c := range is.comments {
			if since.IsZero() || !c.UpdatedAt.Before(since) {
				cs = append(cs, c)
			}
		}
	}
	s.mu.Unlock()
	if !ok {
		return notFound()
	}
	page, h, bad := pagination(r, cs)
	if bad != nil {
		return *bad
	}
	out := make([]any, 0, len(page))
	for _, c := range page {
		out = append(out, s.commentJSON(name, c))
	}
	return reply{status: http.StatusOK, header: h, body: out}
}

func (s *Server) createComment(r *http.Request, a *account) reply {
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return reply{status: http.StatusBadRequest, body: errBody("Problems parsing JSON", docRest)}
	}
	if in.Body == nil || *in.Body == "" {
		return validation("IssueComment", "body", "missing_field", "")
	}
	if utf8.RuneCountInString(*in.Body) > MaxBodyChars {
		return validation("IssueComment", "body", "custom", fmt.Sprintf("body is too long (maximum is %d characters)", MaxBodyChars))
	}
	s.mu.Lock()
	name, _, is, ok := s.target(r, true)
	var c FakeComment
	if ok {
		c = s.addComment(name, is, a.login, *in.Body, time.Time{})
		s.writes = append(s.writes, Write{Method: http.MethodPost, Kind: "comment", Repo: name, Number: is.number,
			CommentID: c.ID, User: a.login, Body: c.Body})
	}
	s.mu.Unlock()
	if !ok {
		return notFound()
	}
	j := s.commentJSON(name, c)
	return reply{status: http.StatusCreated, header: http.Header{"Location": {j["url"].(string)}}, body: j}
}

func (s *Server) listIssues(r *http.Request, _ *account) reply {
	q := r.URL.Query()
	state := cmp.Or(q.Get("state"), "open")
	if state != "open" && state != "closed" && state != "all" {
		return validation("Issue", "state", "invalid", "state must be open, closed or all")
	}
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return validation("Issue", "since", "invalid", "since must be an ISO 8601 timestamp")
		}
		since = t
	}
	sort := cmp.Or(q.Get("sort"), "created")
	if sort != "created" && sort != "updated" && sort != "comments" {
		return validation("Issue", "sort", "invalid", "sort must be created, updated or comments")
	}
	desc := q.Get("direction") != "asc"
	s.mu.Lock()
	name, rp, _, ok := s.target(r, false)
	var out []map[string]any
	type row struct {
		is  *issue
		key int64
	}
	var rows []row
	if ok {
		for _, is := range rp.issues {
			if state != "all" && is.state != state || !since.IsZero() && is.updated.Before(since) {
				continue
			}
			key := is.created.Unix()
			switch sort {
			case "updated":
				key = is.updated.Unix()
			case "comments":
				key = int64(len(is.comments))
			}
			rows = append(rows, row{is, key})
		}
		// Ties (a second's resolution) are broken by number, as creation
		// order.
		slices.SortFunc(rows, func(a, b row) int {
			c := cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.is.number, b.is.number))
			if desc {
				return -c
			}
			return c
		})
		for _, rw := range rows {
			out = append(out, s.issueJSON(name, rw.is))
		}
	}
	s.mu.Unlock()
	if !ok {
		return notFound()
	}
	page, h, bad := pagination(r, out)
	if bad != nil {
		return *bad
	}
	return reply{status: http.StatusOK, header: h, body: append([]map[string]any{}, page...)}
}

func (s *Server) createIssue(r *http.Request, a *account) reply {
	var in struct {
		Title  *string  `json:"title"`
		Body   *string  `json:"body"`
		Labels []string `json:"labels"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return reply{status: http.StatusBadRequest, body: errBody("Problems parsing JSON", docRest)}
	}
	if in.Title == nil || strings.TrimSpace(*in.Title) == "" {
		return validation("Issue", "title", "missing_field", "")
	}
	body := ""
	if in.Body != nil {
		body = *in.Body
	}
	if utf8.RuneCountInString(body) > MaxBodyChars {
		return validation("Issue", "body", "custom", fmt.Sprintf("body is too long (maximum is %d characters)", MaxBodyChars))
	}
	s.mu.Lock()
	name, rp, _, ok := s.target(r, false)
	var j map[string]any
	if ok {
		t := now()
		rp.next++
		is := &issue{number: rp.next, title: *in.Title, body: body, state: "open", user: a.login,
			labels: slices.Clone(in.Labels), created: t, updated: t}
		rp.issues[is.number] = is
		j = s.issueJSON(name, is)
		s.writes = append(s.writes, Write{Method: http.MethodPost, Kind: "issue", Repo: name, Number: is.number,
			User: a.login, Title: is.title, Body: is.body})
	}
	s.mu.Unlock()
	if !ok {
		return notFound()
	}
	return reply{status: http.StatusCreated, header: http.Header{"Location": {j["url"].(string)}}, body: j}
}

func (s *Server) getIssue(r *http.Request, _ *account) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	name, _, is, ok := s.target(r, true)
	if !ok {
		return notFound()
	}
	return reply{status: http.StatusOK, body: s.issueJSON(name, is)}
}

// editIssue changes an issue's state ("open" or "closed"), title or body.
func (s *Server) editIssue(r *http.Request, a *account) reply {
	var in struct {
		State *string `json:"state"`
		Title *string `json:"title"`
		Body  *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return reply{status: http.StatusBadRequest, body: errBody("Problems parsing JSON", docRest)}
	}
	if in.State != nil && *in.State != "open" && *in.State != "closed" {
		return validation("Issue", "state", "invalid", "")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name, _, is, ok := s.target(r, true)
	if !ok {
		return notFound()
	}
	if in.State != nil {
		is.state = *in.State
	}
	if in.Title != nil {
		is.title = *in.Title
	}
	if in.Body != nil {
		is.body = *in.Body
	}
	if in.Title != nil || in.Body != nil {
		s.writes = append(s.writes, Write{Method: http.MethodPatch, Kind: "issue", Repo: name, Number: is.number,
			User: a.login, Title: is.title, Body: is.body})
	}
	is.updated = now()
	return reply{status: http.StatusOK, body: s.issueJSON(name, is)}
}

// editComment changes a comment's body. Only its author may (GitHub also
// lets maintainers; the bot edits only its own).
func (s *Server) editComment(r *http.Request, a *account) reply {
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return reply{status: http.StatusBadRequest, body: errBody("Problems parsing JSON", docRest)}
	}
	if in.Body == nil || *in.Body == "" {
		return validation("IssueComment", "body", "missing_field", "")
	}
	if utf8.RuneCountInString(*in.Body) > MaxBodyChars {
		return validation("IssueComment", "body", "custom", fmt.Sprintf("body is too long (maximum is %d characters)", MaxBodyChars))
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return notFound()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name, rp, _, ok := s.target(r, false)
	if !ok {
		return notFound()
	}
	for _, is := range rp.issues {
		for k := range is.comments {
			c := &is.comments[k]
			if c.ID != id {
				continue
			}
			if c.User != a.login {
				return reply{status: http.StatusForbidden, body: errBody("You must be the author of this comment to edit it.", docRest)}
			}
			c.Body, c.UpdatedAt = *in.Body, now()
			is.updated = c.UpdatedAt
			s.writes = append(s.writes, Write{Method: http.MethodPatch, Kind: "comment", Repo: name, Number: is.number,
				CommentID: id, User: a.login, Body: c.Body})
			return reply{status: http.StatusOK, body: s.commentJSON(name, *c)}
		}
	}
	return notFound()
}

// getUser answers who the token acts as; an installation token of a
// GitHub App is refused, as GitHub refuses it.
func (s *Server) getUser(_ *http.Request, a *account) reply {
	if a.app {
		return reply{status: http.StatusForbidden, body: errBody("Resource not accessible by integration", docRest)}
	}
	return reply{status: http.StatusOK, body: userJSON(a.login)}
}

func (s *Server) getPull(r *http.Request, _ *account) reply {
	s.mu.Lock()
	name, _, is, ok := s.target(r, true)
	ok = ok && is.pr
	var j map[string]any
	var tag string
	if ok {
		tag = etag(name, is)
		j = s.pullJSON(name, is)
	}
	s.mu.Unlock()
	if !ok {
		return notFound()
	}
	h := http.Header{"Etag": {tag}}
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, tag) {
		return reply{status: http.StatusNotModified, header: h}
	}
	return reply{status: http.StatusOK, header: h, body: j}
}

// ---- GitHub's JSON shapes

func (s *Server) apiURL(format string, args ...any) string {
	return s.srv.URL + "/api/v3/" + fmt.Sprintf(format, args...)
}

func userJSON(login string) map[string]any {
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(login))
	return map[string]any{"login": login, "id": h.Sum32() % 1_000_000, "type": typ}
}

func timeJSON(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func (s *Server) commentJSON(repoName string, c FakeComment) map[string]any {
	return map[string]any{
		"id": c.ID, "node_id": fmt.Sprintf("IC_%d", c.ID),
		"url":      s.apiURL("repos/%s/issues/comments/%d", repoName, c.ID),
		"html_url": c.URL, "body": c.Body, "user": userJSON(c.User),
		"created_at": timeJSON(&c.CreatedAt), "updated_at": timeJSON(&c.UpdatedAt), "author_association": "NONE",
	}
}

func (s *Server) issueJSON(repoName string, is *issue) map[string]any {
	labels := make([]any, 0, len(is.labels))
	for _, l := range is.labels {
		labels = append(labels, map[string]any{"name": l})
	}
	j := map[string]any{
		"id": 100000 + is.number, "node_id": fmt.Sprintf("I_%d", is.number), "number": is.number,
		"url":      s.apiURL("repos/%s/issues/%d", repoName, is.number),
		"html_url": s.htmlURL(repoName, is), "title": is.title, "body": is.body, "state": is.state,
		"labels": labels, "user": userJSON(is.user), "comments": len(is.comments),
		"created_at": timeJSON(&is.created), "updated_at": timeJSON(&is.updated), "closed_at": timeJSON(is.closedAt),
	}
	if is.pr {
		j["pull_request"] = map[string]any{
			"url":       s.apiURL("repos/%s/pulls/%d", repoName, is.number),
			"html_url":  s.htmlURL(repoName, is),
			"merged_at": timeJSON(is.mergedAt),
		}
	}
	return j
}

func (s *Server) pullJSON(repoName string, is *issue) map[string]any {
	return map[string]any{
		"id": 200000 + is.number, "node_id": fmt.Sprintf("PR_%d", is.number), "number": is.number,
		"url":      s.apiURL("repos/%s/pulls/%d", repoName, is.number),
		"html_url": s.htmlURL(repoName, is), "title": is.title, "body": is.body, "state": is.state,
		"draft": is.draft, "merged": is.merged, "merged_at": timeJSON(is.mergedAt), "closed_at": timeJSON(is.closedAt),
		"user": userJSON(is.user), "created_at": timeJSON(&is.created), "updated_at": timeJSON(&is.updated),
	}
}
