package issue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/app/apptest"
	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

var (
	as       = domaintest.As
	admin    = domaintest.Admin
	wantKind = domaintest.WantKind
	pageAll  = domaintest.PageAll
	ctx      = domaintest.Ctx
)

const tenant = "acme"

// env is the product as main wires it, on one store, with a recording
// GitHub in place of the REST adapter.
type env struct {
	st       store.Store
	issues   *issue.Service
	tasks    *task.Service
	missions *mission.Service
	messages *message.Service
	outbox   *outbox.Outbox
	gh       *recordingGitHub
}

func newEnv(t testing.TB, st store.Store, gh issue.GitHub, opts ...func(*app.Ports)) *env {
	t.Helper()
	e := &env{st: st}
	p := app.Ports{Store: st}
	switch g := gh.(type) {
	case nil:
		e.gh = &recordingGitHub{}
		p.IssuesGitHub = e.gh
	case github.ForTenants:
		p.GitHub = g
	default:
		p.IssuesGitHub = gh
	}
	for _, f := range opts {
		f(&p)
	}
	a := apptest.New(t, apptest.Options{Ports: p})
	e.outbox, e.tasks, e.missions, e.messages, e.issues = a.Outbox, a.Tasks, a.Missions, a.Messages, a.Issues
	return e
}

func eachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		fn(t, newEnv(t, b.Open(t, nil), nil))
	})
}

// drain runs every due outbox job until none is left.
func (e *env) drain(t testing.TB) { domaintest.Drain(t, e.outbox) }

func (e *env) mapRepo(t testing.TB, repo, orchestrator, project string) issue.Mapping {
	t.Helper()
	m, err := e.issues.AddMapping(ctx(), admin(tenant), issue.MappingInput{Repo: repo, Orchestrator: orchestrator, Project: project})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// deliveries mints delivery dedup records the way the webhooks package
// does (its Delivery.Seen), so these tests do not depend on it.
type dedupRecord struct {
	ID string `json:"id"`
}

var deliveryTable = table.Declare(table.Schema[dedupRecord]{
	Entity:  "test delivery",
	Primary: table.Key{PK: "TESTWHD#{id}", SK: "D"},
	Fields:  func(r dedupRecord) table.Values { return table.Values{"id": r.ID} },
})

func event(t testing.TB, name, delivery string, body []byte) issue.Event {
	t.Helper()
	it, err := deliveryTable.Item("test", tenant, dedupRecord{ID: delivery})
	if err != nil {
		t.Fatal(err)
	}
	key := it.Key
	return issue.Event{Tenant: tenant, Name: name, Body: body, Seen: store.Put(it, store.IfNotExists),
		IsRedelivery: func(err error) bool {
			ce, ok := err.(*store.ConditionError)
			return ok && ce.Key == key
		}}
}

// deliver sends one event and returns its outcome.
func (e *env) deliver(t testing.TB, name, delivery string, body []byte) string {
	t.Helper()
	out, err := e.issues.HandleEvent(ctx(), event(t, name, delivery, body))
	if err != nil {
		t.Fatalf("%s %s: %v", name, delivery, err)
	}
	return out
}

func (e *env) deliverErr(t testing.TB, name, delivery string, body []byte) error {
	t.Helper()
	_, err := e.issues.HandleEvent(ctx(), event(t, name, delivery, body))
	return err
}

// ghIssue is GitHub's issue object, the fields these tests vary.
type ghIssue struct {
	Repo, Title, Body, Author, Association, State string
	Number                                        int
	CreatedAt                                     time.Time
}

func (g ghIssue) object() map[string]any {
	if g.Association == "" {
		g.Association = "OWNER"
	}
	if g.State == "" {
		g.State = "open"
	}
	if g.Author == "" {
		g.Author = "octocat"
	}
	if g.CreatedAt.IsZero() {
		g.CreatedAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	}
	return map[string]any{
		"number": g.Number, "title": g.Title, "body": g.Body, "state": g.State,
		"html_url":           fmt.Sprintf("https://github.com/%s/issues/%d", g.Repo, g.Number),
		"user":               map[string]any{"login": g.Author, "type": "User"},
		"author_association": g.Association, "created_at": g.CreatedAt.Format(time.RFC3339),
		"labels": []any{map[string]any{"name": "bug"}},
	}
}

func issuesPayload(t testing.TB, action string, g ghIssue, extra map[string]any) []byte {
	t.Helper()
	p := map[string]any{"action": action, "issue": g.object(), "repository": map[string]any{"full_name": g.Repo},
		"sender": map[string]any{"login": g.Author, "type": "User"}}
	for k, v := range extra {
		p[k] = v
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (e *env) issue(t testing.TB, repo string, n int) issue.Issue {
	t.Helper()
	i, err := e.issues.GetIssue(ctx(), admin(tenant), issue.IssueRef{Repo: repo, IssueNumber: n})
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// recordingGitHub records comments by issue, and like the REST adapter
// skips one whose marker is already there.
type recordingGitHub struct {
	mu       sync.Mutex
	comments map[string][]string // "repo#n" -> bodies
	posts    int
	prs      map[string]issue.PullRequest
	fail     error
	loginErr error
}

func (g *recordingGitHub) CommentOnce(_ context.Context, _ string, repo string, number int, marker, body string, _ time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fail != nil {
		return g.fail
	}
	if g.comments == nil {
		g.comments = map[string][]string{}
	}
	k := fmt.Sprintf("%s#%d", repo, number)
	for _, c := range g.comments[k] {
		if strings.Contains(c, marker) {
			return nil
		}
	}
	g.comments[k] = append(g.comments[k], body)
	g.posts++
	return nil
}

func (g *recordingGitHub) PullRequest(_ context.Context, _ string, repo string, number int, etag string) (issue.PullRequest, bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	pr, ok := g.prs[fmt.Sprintf("%s#%d", repo, number)]
	if !ok {
		return issue.PullRequest{}, false, vp.E("github.pr", vp.KindNotFound, "number", "no such PR")
	}
	if pr.ETag == etag {
		return issue.PullRequest{}, true, nil
	}
	return pr, false, nil
}

func (g *recordingGitHub) commentsOn(repo string, n int) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.comments[fmt.Sprintf("%s#%d", repo, n)]...)
}

func listAll(t *testing.T, page func(cursor string) (listing.Page[any], error)) []any {
	return pageAll(t, page)
}

func commentJobFor(t testing.TB, i issue.Issue, step string) outbox.Job {
	t.Helper()
	b, err := json.Marshal(map[string]any{"repo": i.Repo, "number": i.IssueNumber, "step": step,
		"orchestrator": i.Orchestrator, "issueId": i.ID, "at": time.Now().UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	return outbox.Job{ID: "job-" + step, Tenant: tenant, Topic: issue.TopicComment, Payload: b, Attempt: 1}
}

func finishedJob(t testing.TB, missionID, title string) outbox.Job {
	t.Helper()
	b, err := json.Marshal(task.Finished{Tenant: tenant, TaskID: "tsk_x", MissionID: missionID, OldStatus: vp.TaskInProgress,
		NewStatus: vp.TaskDone, Title: title, Project: "api"})
	if err != nil {
		t.Fatal(err)
	}
	return outbox.Job{ID: "ev-1", Tenant: tenant, Topic: task.TopicFinished, Payload: b, Attempt: 1}
}

func isPermanent(err error) bool { return outbox.IsPermanent(err) }

func openSQLite(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func missionList(project string) mission.ListMissionsInput {
	return mission.ListMissionsInput{Project: project, Status: "all"}
}

func openSQLiteF(f *testing.F) store.Store {
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(f.TempDir(), "vp.db")})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = st.Close() })
	return st
}
