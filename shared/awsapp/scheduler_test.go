package awsapp_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/aws/aws-lambda-go/events"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/awsapp"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/search/opensearch/opensearchtest"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// TestSchedulerGetsTheSearchIndex: with an OpenSearch endpoint the
// scheduler checks the index at load, its coordination service writes and
// reads it, and the backfill is among its jobs; without one, neither.
func TestSchedulerGetsTheSearchIndex(t *testing.T) {
	// Every search finds the tenant's backfill marker: EnsureIndexed stops there.
	srv := opensearchtest.New(t, opensearchtest.Options{SearchResponse: `{"took":1,"timed_out":false,"hits":{"total":{"value":1,"relation":"eq"},"max_score":1,` +
		`"hits":[{"_index":"vantagepeers-search","_id":"m","_score":1,"_source":{"id":"coord-index-v1","kind":"marker"}}]}}`})

	a, logs, err := load(t, awsenv.FuncScheduler, map[string]string{awsenv.EnvSearchEndpoint: srv.URL}, awsapp.StaticSecrets{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Keyword == nil || a.Memory != nil || a.Tokens != nil || !strings.Contains(logs, `"searchIndex":true`) {
		t.Fatalf("scheduler: coord %v, memory %v, tokens %v; logs %s", a.Keyword != nil, a.Memory != nil, a.Tokens != nil, logs)
	}
	rep, err := a.Keyword.EnsureIndexed(context.Background(), "acme")
	if err != nil || !rep.AlreadyIndexed {
		t.Fatalf("EnsureIndexed through the scheduler's index: %+v, %v", rep, err)
	}
	want := []string{"HEAD /vantagepeers-search", "PUT /_search/pipeline/vantagepeers-rrf", "POST /vantagepeers-search/_search"}
	if seen := srv.Requests(); !slices.Equal(seen, want) {
		t.Errorf("requests %v, want %v", seen, want)
	}
	if names := jobNames(a); !slices.Contains(names, "search-backfill") {
		t.Errorf("jobs %v, want search-backfill among them", names)
	}

	// Without an endpoint: no index, no backfill job, no request.
	a, logs, err = load(t, awsenv.FuncScheduler, map[string]string{}, awsapp.StaticSecrets{})
	if err != nil {
		t.Fatal(err)
	}
	if names, seen := jobNames(a), srv.Requests(); slices.Contains(names, "search-backfill") || len(seen) != 0 || !strings.Contains(logs, `"searchIndex":false`) {
		t.Errorf("without an index: jobs %v, requests %v, logs %s", names, seen, logs)
	}
	// The other functions' needs are unchanged: oauth builds no index.
	_, _, err = load(t, awsenv.FuncOAuth, map[string]string{awsenv.EnvSearchEndpoint: srv.URL, awsenv.EnvMasterHash: strings.Repeat("ab", 32)}, awsapp.StaticSecrets{})
	if seen := srv.Requests(); err != nil || len(seen) != 0 {
		t.Errorf("oauth with an endpoint configured: %v, requests %v", err, seen)
	}
}

func jobNames(a *awsapp.App) []string {
	var out []string
	for _, j := range a.ScheduledJobs() {
		out = append(out, j.Name)
	}
	return out
}

// seedCredentials stores the credentials the scheduler discovers tenants
// from: n admin tokens in tenants t00..t<n-1> (one revoked), a Clerk token,
// and two OAuth clients, one elevated into tenant gamma.
func seedCredentials(t *testing.T, st store.Store, n int) (want []string) {
	t.Helper()
	ctx := context.Background()
	toks := auth.New(auth.Options{Store: st})
	want = []string{vp.DefaultTenant}
	for i := range n {
		tenant := fmt.Sprintf("t%02d", i)
		_, tok, err := toks.Create(ctx, auth.Spec{Tenant: tenant, ActsAs: []string{"alice"}})
		if err != nil {
			t.Fatal(err)
		}
		if i == 7 {
			if _, err := toks.Revoke(ctx, tok.ID); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, tenant)
	}
	// A second token of a tenant adds nothing.
	if _, _, err := toks.Create(ctx, auth.Spec{Tenant: "t00", ActsAs: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := toks.Create(ctx, auth.Spec{Tenant: "clerk-abc", ActsAs: []string{"carol"}, Kind: "clerk", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "clerk-abc")
	srv := oauth.New(oauth.Options{Store: st, Tokens: toks})
	var ids []string
	for _, name := range []string{"generic", "elevated"} {
		body := `{"client_name":"` + name + `","redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"none"}`
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/oauth/register", strings.NewReader(body)))
		if rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
			t.Fatalf("register: %d %s", rec.Code, rec.Body)
		}
		_, id, _ := strings.Cut(rec.Body.String(), `"client_id":"`)
		id, _, _ = strings.Cut(id, `"`)
		ids = append(ids, id)
	}
	if _, err := srv.Elevate(ctx, oauth.Actor{ID: "master"}, ids[1], oauth.ProfileGeneric, "gamma"); err != nil {
		t.Fatal(err)
	}
	want = append(want, "gamma")
	sort.Strings(want)
	return want
}

// TestCredentialTenants: the tenants are those of the stored tokens and
// OAuth clients, and the default one, each once; a tenant with data but
// no credential is not among them.
func TestCredentialTenants(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st := b.Open(t, nil)
		ctx := context.Background()
		if _, err := task.New(task.Options{Store: st}).CreateTask(ctx, vp.Principal{Tenant: "hidden", Orchestrators: []string{"alice"}},
			task.CreateTaskInput{Title: "no credential here", AssignedTo: "alice", Priority: "low"}); err != nil {
			t.Fatal(err)
		}
		want := seedCredentials(t, st, 45)
		got, err := awsapp.CredentialTenants(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("tenants (%d) %v\nwant (%d)    %v", len(got), got, len(want), want)
		}
	})
}

// TestScheduledSearchBackfill: on AWS the scheduler backfills the keyword
// index of every tenant that holds a credential, on the backfill's
// minutes only, once per index (a fresh container reads the markers), and
// a tenant that gets its first credential later is backfilled by the next
// run.
func TestScheduledSearchBackfill(t *testing.T) {
	ctx := context.Background()
	st := dynamotest.NewStore(t, nil)
	const n = 45
	before := task.New(task.Options{Store: st}) // data written before the index
	seedTasks := func(tenant string) {
		p := vp.Principal{Tenant: tenant, Orchestrators: []string{"alice"}}
		for i := range n {
			if _, err := before.CreateTask(ctx, p, task.CreateTaskInput{Title: fmt.Sprintf("%s heron task %d", tenant, i), AssignedTo: "alice", Priority: "low"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tenant := range []string{vp.DefaultTenant, "acme", "gamma", "delta"} {
		seedTasks(tenant)
	}
	toks := auth.New(auth.Options{Store: st})
	if _, _, err := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"alice"}}); err != nil {
		t.Fatal(err)
	}
	ocl := oauth.New(oauth.Options{Store: st, Tokens: toks})
	rec := httptest.NewRecorder()
	ocl.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/oauth/register", strings.NewReader(
		`{"client_name":"bot","redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"none"}`)))
	_, id, _ := strings.Cut(rec.Body.String(), `"client_id":"`)
	id, _, _ = strings.Cut(id, `"`)
	if _, err := ocl.Elevate(ctx, oauth.Actor{ID: "master"}, id, oauth.ProfileGeneric, "gamma"); err != nil {
		t.Fatal(err)
	}

	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(t.TempDir(), "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	var logs bytes.Buffer
	container := func() *awsapp.App {
		log := awsapp.NewLogger(&logs, slog.LevelInfo, awsenv.FuncScheduler)
		svc, err := vpapp.Build(ctx, vpapp.Ports{Groups: vpapp.Coordination, Store: st, Index: idx, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		return &awsapp.App{Function: awsenv.FuncScheduler, Store: st, Log: log, Services: svc}
	}
	tick := func(a *awsapp.App, hhmm string) string {
		t.Helper()
		logs.Reset()
		at, _ := time.Parse(time.RFC3339, "2026-03-02T"+hhmm+":00Z")
		if err := a.HandleSchedule(ctx, events.EventBridgeEvent{Time: at}); err != nil {
			t.Fatalf("%s: %v\n%s", hhmm, err, logs.String())
		}
		return logs.String()
	}
	found := func(a *awsapp.App, tenant string) int {
		t.Helper()
		res, err := a.Keyword.SearchTasks(ctx, auth.MasterPrincipal(tenant), keyword.SearchTasksInput{Query: "heron", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Items {
			if !strings.HasPrefix(h.Title, tenant+" ") {
				t.Fatalf("%s found %q", tenant, h.Title)
			}
		}
		return res.Count
	}
	backfilled := func(out string) []string {
		var ts []string
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "keyword-search backfill done") {
				_, rest, _ := strings.Cut(line, `"tenant":"`)
				tenant, _, _ := strings.Cut(rest, `"`)
				ts = append(ts, tenant)
			}
		}
		sort.Strings(ts)
		return ts
	}

	a := container()
	if out := tick(a, "10:05"); strings.Contains(out, "search-backfill") {
		t.Fatalf("backfill ran off its period:\n%s", out)
	}
	out := tick(a, "10:00")
	if got, want := backfilled(out), []string{"acme", vp.DefaultTenant, "gamma"}; !slices.Equal(got, want) {
		t.Fatalf("backfilled %v, want %v:\n%s", got, want, out)
	}
	if !strings.Contains(out, `"job":"search-backfill"`) {
		t.Errorf("no job line:\n%s", out)
	}
	// (delta is not searched here: a search indexes its tenant itself.)
	for tenant, want := range map[string]int{vp.DefaultTenant: n, "acme": n, "gamma": n} {
		if got := found(a, tenant); got != want {
			t.Errorf("%s: %d tasks found, want %d", tenant, got, want)
		}
	}
	// A fresh container reads the markers and backfills nothing again.
	if got := backfilled(tick(container(), "10:10")); len(got) != 0 {
		t.Errorf("second run backfilled %v", got)
	}
	// delta gets its first credential: the next run backfills it alone.
	if _, _, err := toks.Create(ctx, auth.Spec{Tenant: "delta", ActsAs: []string{"alice"}}); err != nil {
		t.Fatal(err)
	}
	if got := backfilled(tick(a, "10:20")); !slices.Equal(got, []string{"delta"}) {
		t.Errorf("after delta's token: backfilled %v, want [delta]", got)
	}
	if got := found(a, "delta"); got != n {
		t.Errorf("delta: %d tasks found, want %d", got, n)
	}
}
