package errormon_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/app/apptest"
	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const tenant = "acme"

var (
	admin    = domaintest.Admin
	wantKind = domaintest.WantKind
	ctx      = domaintest.Ctx
)

// env is the monitor wired as main wires it, on SQLite, with a source
// and a GitHub kept in memory.
type env struct {
	st       store.Store
	mon      *errormon.Service
	issues   *issue.Service
	missions *mission.Service
	outbox   *outbox.Outbox
	src      *memSource
	gh       *memGitHub
	logs     *bytes.Buffer
	keys     keyMap
}

// keyMap are a tenant's deploy keys by name, with their bindings.
type keyMap map[string]errormon.DeployKey

func (k keyMap) Key(_ context.Context, _ string, d errormon.Deployment) (errormon.DeployKey, error) {
	return k[d.DeployKeyEnvVar], nil
}

func (k keyMap) HowToSet(tenant, name, url string) string {
	return "set keys[" + tenant + "/" + name + "] for " + url
}

func newEnv(t testing.TB, opts ...func(*errormon.Options)) *env {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return newEnvOn(t, st, &memGitHub{}, &memSource{}, opts...)
}

// newEnvOn is newEnv on a given store: two of them on one store are two
// processes (or a restart) sharing the data.
func newEnvOn(t testing.TB, st store.Store, gh *memGitHub, src *memSource, opts ...func(*errormon.Options)) *env {
	t.Helper()
	e := &env{st: st, src: src, gh: gh, logs: &bytes.Buffer{}, keys: keyMap{"VP_DEPLOY_KEY_APP": {Key: "prod:happy-otter-123|secret-key-123"}}}
	a := apptest.New(t, apptest.Options{Ports: app.Ports{Store: st, IssuesGitHub: gh, ErrorsGitHub: gh, DeployKeys: e.keys,
		ErrorSources: map[string]source.Source{errormon.SourceConvex: src, errormon.SourceCloudWatch: src},
		TuneErrors: func(o *errormon.Options) {
			o.Logger = slog.New(slog.NewJSONHandler(e.logs, nil)) // the monitor's log only
			for _, f := range opts {
				f(o)
			}
		}}})
	e.mon, e.issues, e.missions, e.outbox = a.Errors, a.Issues, a.Missions, a.Outbox
	return e
}

func (e *env) addDeployment(t testing.TB, name string) {
	t.Helper()
	if _, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: name, DeploymentURL: "https://happy-otter-123.convex.cloud",
		DeployKeyEnvVar: "VP_DEPLOY_KEY_APP", GitHubRepo: "acme/app", Orchestrator: "sigma"}); err != nil {
		t.Fatal(err)
	}
}

// drain runs every due outbox job until none is left.
func (e *env) drain(t testing.TB) { domaintest.Drain(t, e.outbox) }

func (e *env) scan(t testing.TB, name string) int {
	t.Helper()
	n, err := e.mon.Scan(ctx(), tenant, name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// cause makes the k-th occurrence of error cause c: its ids, numbers and
// line numbers vary, the cause does not.
func cause(c, k int) source.Event {
	return source.Event{ID: fmt.Sprintf("exec-%d-%d", c, k), Time: time.Now().Add(-time.Minute),
		Function: fmt.Sprintf("tasks:handler%d", c), Type: "TypeError",
		Message: fmt.Sprintf("Cannot read properties of undefined (reading 'field%d')", c),
		Stack:   fmt.Sprintf("TypeError: x\n    at handler%d (convex/tasks.ts:%d:7)", c, 10+k), Raw: "raw"}
}

// memSource serves its events in order; the cursor is the index of the
// next one. Read pauses on gate when set (to hold a scan open).
type memSource struct {
	mu     sync.Mutex
	events []source.Event
	fail   error
	reads  int
	gate   chan struct{}
	keys   []string
}

func (m *memSource) add(es ...source.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, es...)
}

func (m *memSource) Read(ctx context.Context, t source.Target, cursor string, _ time.Time, max int) (source.Page, error) {
	m.mu.Lock()
	m.reads++
	m.keys = append(m.keys, t.Key)
	gate, fail := m.gate, m.fail
	m.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if fail != nil {
		return source.Page{}, fail
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	at, _ := strconv.Atoi(cursor)
	end := min(at+max, len(m.events))
	return source.Page{Events: append([]source.Event(nil), m.events[at:end]...), Cursor: strconv.Itoa(end), More: end < len(m.events)}, nil
}

// memGitHub is GitHub for both capabilities: issues (found by marker
// before filing), comments (by marker), reopening.
type memGitHub struct {
	mu       sync.Mutex
	issues   []ghIssue
	comments map[int][]string
	creates  int
	reopens  int
	edits    int
	fail     error
}

type ghIssue struct {
	Number       int
	Title, Body  string
	Labels       []string
	Open         bool
	CreatedAtSec int64
}

func (g *memGitHub) CreateIssueOnce(_ context.Context, _, repo, title, body, marker string, labels []string, _ time.Time) (int, string, string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fail != nil {
		return 0, "", "", g.fail
	}
	for _, is := range g.issues {
		if strings.HasSuffix(is.Body, marker) {
			return is.Number, fmt.Sprintf("https://github.com/%s/issues/%d", repo, is.Number), memBot, nil
		}
	}
	n := len(g.issues) + 1
	g.issues = append(g.issues, ghIssue{Number: n, Title: title, Body: body, Labels: labels, Open: true})
	g.creates++
	return n, fmt.Sprintf("https://github.com/%s/issues/%d", repo, n), memBot, nil
}

// memBot is the login memGitHub's issues are opened by.
const memBot = "vantagepeers[bot]"

func (g *memGitHub) CommentOnce(_ context.Context, _, _ string, number int, marker, body string, _ time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.comments == nil {
		g.comments = map[int][]string{}
	}
	for _, c := range g.comments[number] {
		if strings.HasSuffix(c, marker) {
			return nil
		}
	}
	g.comments[number] = append(g.comments[number], body)
	return nil
}

// SetComment edits the comment ending with marker in place (by id: its
// index + 1 on the issue), or posts it.
func (g *memGitHub) SetComment(_ context.Context, _, _ string, number int, id int64, marker, body string, _ time.Time) (int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fail != nil {
		return 0, g.fail
	}
	if g.comments == nil {
		g.comments = map[int][]string{}
	}
	cs := g.comments[number]
	for k, c := range cs {
		if int64(k+1) == id || id == 0 && strings.HasSuffix(c, marker) {
			cs[k] = body
			g.edits++
			return int64(k + 1), nil
		}
	}
	g.comments[number] = append(cs, body)
	return int64(len(cs) + 1), nil
}

func (g *memGitHub) Reopen(_ context.Context, _, _ string, number int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k := range g.issues {
		if g.issues[k].Number == number && !g.issues[k].Open {
			g.issues[k].Open = true
			g.reopens++
		}
	}
	return nil
}

func (g *memGitHub) PullRequest(context.Context, string, string, int, string) (issue.PullRequest, bool, error) {
	return issue.PullRequest{}, false, vp.E("github.pr", vp.KindNotFound, "number", "no PRs here")
}

func (g *memGitHub) snapshot() ([]ghIssue, map[int][]string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cs := map[int][]string{}
	for k, v := range g.comments {
		cs[k] = append([]string(nil), v...)
	}
	return append([]ghIssue(nil), g.issues...), cs
}
