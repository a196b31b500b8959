package errormon_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func (e *env) groups(t testing.TB) []errormon.Group {
	t.Helper()
	var out []errormon.Group
	for cursor := ""; ; {
		page, err := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{Params: listing.Params{Cursor: cursor, Fields: "full"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			out = append(out, it.(errormon.Group))
		}
		if cursor = page.NextCursor; cursor == "" {
			return out
		}
	}
}

func TestNewErrorsFileOneIssueEachAndStartTheIRP(t *testing.T) {
	e := newEnv(t)
	e.addDeployment(t, "app")
	for c := range 3 {
		for k := range 40 {
			e.src.add(cause(c, k))
		}
	}
	if n := e.scan(t, "app"); n != 120 {
		t.Fatalf("scanned %d events, want 120", n)
	}
	e.drain(t)
	gs := e.groups(t)
	if len(gs) != 3 {
		t.Fatalf("%d groups, want 3", len(gs))
	}
	issues, _ := e.gh.snapshot()
	if len(issues) != 3 {
		t.Fatalf("%d issues filed, want 3", len(issues))
	}
	for _, is := range issues {
		if !strings.HasPrefix(is.Title, "[Auto] TypeError: Cannot read properties of undefined") || !slices.Equal(is.Labels, []string{"bug", "auto-detected"}) ||
			!strings.Contains(is.Body, "occurrences | 40") || !strings.Contains(is.Body, "convex/tasks.ts") {
			t.Errorf("issue %d: %q %v\n%s", is.Number, is.Title, is.Labels, is.Body)
		}
		i, err := e.issues.GetIssue(ctx(), admin(tenant), issue.IssueRef{Repo: "acme/app", IssueNumber: is.Number})
		if err != nil || i.MissionID == "" || i.Orchestrator != "sigma" {
			t.Errorf("issue %d in VantagePeers: %+v, %v; want its IRP started for sigma", is.Number, i, err)
		}
	}
	for _, g := range gs {
		if g.Count != 40 || g.Status != errormon.StatusOngoing || g.IssueNumber == 0 || g.Algorithm == "" {
			t.Errorf("group %+v", g)
		}
	}
	// The same causes again: counted, no new issue.
	for c := range 3 {
		e.src.add(cause(c, 100), cause(c, 101))
	}
	e.scan(t, "app")
	e.drain(t)
	if issues, _ := e.gh.snapshot(); len(issues) != 3 {
		t.Fatalf("%d issues after repeats, want 3", len(issues))
	}
	for _, g := range e.groups(t) {
		if g.Count != 42 {
			t.Errorf("group %s count %d, want 42", g.ID, g.Count)
		}
	}
	page, err := e.missions.ListMissions(ctx(), admin(tenant), mission.ListMissionsInput{Status: "all"})
	if err != nil || len(page.Items) != 3 {
		t.Fatalf("%d missions (%v), want 3", len(page.Items), err)
	}
}

func TestConcurrentScansCountEachEventOnce(t *testing.T) {
	e := newEnv(t)
	e.addDeployment(t, "app")
	for c := range 5 {
		for k := range 30 {
			e.src.add(cause(c, k))
		}
	}
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.mon.Scan(ctx(), tenant, "app"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	e.scan(t, "app") // whoever lost the lease, a later scan finds nothing new
	e.drain(t)
	var total int64
	for _, g := range e.groups(t) {
		total += g.Count
	}
	if total != 150 {
		t.Fatalf("counted %d occurrences of 150", total)
	}
	if issues, _ := e.gh.snapshot(); len(issues) != 5 {
		t.Fatalf("%d issues, want 5", len(issues))
	}
}

func TestFilingRerunAfterACrashFilesOnce(t *testing.T) {
	e := newEnv(t)
	e.addDeployment(t, "app")
	e.src.add(cause(1, 1))
	e.scan(t, "app")
	e.drain(t)
	g := e.groups(t)[0]
	// The job ran, GitHub filed the issue, and the process died before the
	// group's update and the job's removal: the job runs again.
	job := outbox.Job{ID: "j", Tenant: tenant, Topic: errormon.TopicFile, Payload: []byte(`{"groupId":"` + g.ID + `"}`), Attempt: 2}
	for range 2 {
		if err := e.mon.FileJob(ctx(), job); err != nil {
			t.Fatal(err)
		}
	}
	e.drain(t)
	if issues, _ := e.gh.snapshot(); len(issues) != 1 {
		t.Fatalf("%d issues, want 1", len(issues))
	}
}

func TestRegressionReopensTheSameIssue(t *testing.T) {
	e := newEnv(t)
	e.addDeployment(t, "app")
	e.src.add(cause(1, 1))
	e.scan(t, "app")
	e.drain(t)
	g := e.groups(t)[0]
	if _, err := e.issues.UpdateStatus(ctx(), admin(tenant), issue.StatusInput{IssueRef: issue.IssueRef{Repo: "acme/app", IssueNumber: g.IssueNumber}, Status: "closed"}); err != nil {
		t.Fatal(err)
	}
	e.gh.mu.Lock()
	e.gh.issues[0].Open = false
	e.gh.mu.Unlock()
	// Occurrences after the close (cause's are a minute old: from before
	// the fix, they would not reopen it; TestLateEventsNeverReopenAFixedIssue).
	after := time.Now().Add(time.Second)
	e.src.add(at(1, 2, after), at(1, 3, after))
	e.scan(t, "app")
	e.drain(t)
	issues, comments := e.gh.snapshot()
	if len(issues) != 1 || !issues[0].Open || e.gh.reopens != 1 {
		t.Fatalf("issues %+v, reopens %d; want the one issue reopened", issues, e.gh.reopens)
	}
	// The IRP's Investigating comment is on the issue too: count the
	// regression ones.
	regressions := 0
	for _, c := range comments[g.IssueNumber] {
		if strings.HasPrefix(c, "Regression:") {
			regressions++
		}
	}
	if regressions != 1 {
		t.Fatalf("comments %q; want one Regression comment", comments[g.IssueNumber])
	}
	if g := e.groups(t)[0]; g.Regressions != 1 || g.Status != errormon.StatusOngoing || g.Count != 3 {
		t.Fatalf("group after the regression: %+v", g)
	}
	if i, _ := e.issues.GetIssue(ctx(), admin(tenant), issue.IssueRef{Repo: "acme/app", IssueNumber: g.IssueNumber}); i.Status != issue.StatusOpen {
		t.Fatalf("the issue is %s after the regression, want open", i.Status)
	}
	// It fires again while its issue is open: counted, no second regression.
	e.src.add(cause(1, 4))
	e.scan(t, "app")
	e.drain(t)
	if g := e.groups(t)[0]; g.Regressions != 1 || g.Count != 4 {
		t.Fatalf("group after one more occurrence: regressions %d count %d; want 1, 4", g.Regressions, g.Count)
	}
}

func TestHourlyCapSummarisesTheRest(t *testing.T) {
	e := newEnv(t, func(o *errormon.Options) { o.IssuesPerHour = 4 })
	e.addDeployment(t, "app")
	for c := range 7 {
		e.src.add(cause(c, 1))
	}
	e.scan(t, "app")
	e.drain(t)
	issues, comments := e.gh.snapshot()
	if len(issues) != 5 {
		t.Fatalf("%d issues, want 4 + 1 summary", len(issues))
	}
	summary := issues[len(issues)-1]
	for _, is := range issues {
		if strings.Contains(is.Title, "More new errors") {
			summary = is
		}
	}
	if !strings.Contains(summary.Title, "More new errors in app") {
		t.Fatalf("no summary issue among %+v", issues)
	}
	cs := comments[summary.Number]
	if len(cs) != 1 {
		t.Fatalf("%d comments on the summary issue, want 1 listing the errors", len(cs))
	}
	if n := len(summaryLine.FindAllString(cs[0], -1)); n != 3 {
		t.Fatalf("%d errors listed in the summary, want 3:\n%s", n, cs[0])
	}
}

func TestMissingKeyAndFailingSourceAreVisible(t *testing.T) {
	e := newEnv(t)
	if _, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: "nokey", DeploymentURL: "https://x.convex.cloud",
		DeployKeyEnvVar: "VP_DEPLOY_KEY_MISSING", GitHubRepo: "acme/app", Orchestrator: "sigma"}); err != nil {
		t.Fatal(err)
	}
	e.addDeployment(t, "app")
	e.src.fail = vp.E("convex.read", vp.KindUnavailable, "", "503 from the deployment")
	if _, err := e.mon.ScanAll(ctx(), tenant); err == nil {
		t.Fatal("ScanAll reported no failure")
	}
	list, err := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]errormon.DeploymentStatus{}
	for _, d := range list.Deployments {
		byName[d.Name] = d
	}
	if d := byName["nokey"]; d.Status != errormon.StatusNeedsKey || !strings.Contains(d.LastError, "VP_DEPLOY_KEY_MISSING") || d.NextScanAt == 0 {
		t.Errorf("nokey: %+v", d)
	}
	if d := byName["app"]; d.Status != "failing" || !strings.Contains(d.LastError, "503") {
		t.Errorf("app: %+v", d)
	}
	if strings.Contains(e.logs.String(), "secret-key-123") {
		t.Error("the deploy key reached the logs")
	}
	// Backed off: the next pass does not read the source again.
	reads := e.src.reads
	e.src.fail = nil
	_, _ = e.mon.ScanAll(ctx(), tenant)
	if e.src.reads != reads {
		t.Errorf("a backed-off deployment was scanned again at once")
	}
}

func TestOwnPipelineIsNeverFiled(t *testing.T) {
	e := newEnv(t)
	e.addDeployment(t, "app")
	ev := cause(1, 1)
	ev.Function = "error-monitor"
	e.src.add(ev)
	e.scan(t, "app")
	e.drain(t)
	if len(e.groups(t)) != 0 {
		t.Fatal("the monitor grouped an error about itself")
	}
}

func TestListAndGetErrors(t *testing.T) {
	e := newEnv(t)
	e.addDeployment(t, "app")
	e.addDeployment(t, "web")
	const n = 23
	for c := range n {
		e.src.add(cause(c, 1))
	}
	e.scan(t, "app")
	for _, lim := range []int{5, 200} {
		got := 0
		for cursor := ""; ; {
			page, err := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{Deployment: "app", Params: listing.Params{Cursor: cursor, Limit: &lim}})
			if err != nil {
				t.Fatal(err)
			}
			got += len(page.Items)
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		if got != n {
			t.Errorf("limit %d: listed %d errors, want %d", lim, got, n)
		}
	}
	if page, _ := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{Deployment: "web"}); len(page.Items) != 0 {
		t.Errorf("web lists %d errors, want 0", len(page.Items))
	}
	g := e.groups(t)[0]
	got, err := e.mon.GetError(ctx(), admin(tenant), errormon.ErrorRef{ErrorID: g.ID})
	if err != nil || got.Stack == "" || got.Sample == "" {
		t.Fatalf("get_error: %+v, %v", got, err)
	}
	_, err = e.mon.GetError(ctx(), admin("other"), errormon.ErrorRef{ErrorID: g.ID})
	wantKind(t, err, vp.KindNotFound, "errorId")
}

func TestBadDeploymentsNameTheField(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		in    errormon.DeploymentInput
		field string
	}{
		{errormon.DeploymentInput{Name: "a", DeploymentURL: "ftp://x", DeployKeyEnvVar: "VP_DEPLOY_KEY_K", GitHubRepo: "a/b", Orchestrator: "o"}, "deploymentUrl"},
		{errormon.DeploymentInput{Name: "a", DeploymentURL: "https://x.convex.cloud", DeployKeyEnvVar: "1BAD", GitHubRepo: "a/b", Orchestrator: "o"}, "deployKeyEnvVar"},
		{errormon.DeploymentInput{Name: "a", DeploymentURL: "https://x.convex.cloud", DeployKeyEnvVar: "VP_DEPLOY_KEY_K", GitHubRepo: "nope", Orchestrator: "o"}, "githubRepo"},
		{errormon.DeploymentInput{Name: "a", Source: "cloudwatch", GitHubRepo: "a/b", Orchestrator: "o"}, "logGroups"},
		{errormon.DeploymentInput{Name: "a", Source: "sentry", GitHubRepo: "a/b", Orchestrator: "o"}, "source"},
	} {
		_, err := e.mon.AddDeployment(ctx(), admin(tenant), tc.in)
		wantKind(t, err, vp.KindInvalid, tc.field)
	}
	_, err := e.mon.RemoveDeployment(ctx(), admin(tenant), errormon.DeploymentRef{Name: "ghost"})
	wantKind(t, err, vp.KindNotFound, "name")
}

// TestAScanThatLostItsLeaseCountsNothing: a scan whose lease ran out (and
// another scan took over) while it read must not add its page's counts.
func TestAScanThatLostItsLeaseCountsNothing(t *testing.T) {
	e := newEnv(t)
	e.addDeployment(t, "app")
	e.src.add(cause(1, 1), cause(1, 2))
	e.src.gate = make(chan struct{})
	done := make(chan error, 1)
	go func() { _, err := e.mon.Scan(ctx(), tenant, "app"); done <- err }()
	// While it reads, another process takes the deployment over: its lease
	// moves (as a new scan's would after the first's ran out).
	for {
		e.src.mu.Lock()
		r := e.src.reads
		e.src.mu.Unlock()
		if r > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	d, it, err := errormon.Deployments.Get(ctx(), e.st, "test", "name", "app", errormon.Deployments.KeyOf(tenant, map[string]string{"name": "app"}))
	if err != nil {
		t.Fatal(err)
	}
	d.LeaseUntil += 1
	next, _ := errormon.Deployments.Item("test", tenant, d)
	if err := e.st.Write(ctx(), store.Put(next, store.IfVersion(it.Version))); err != nil {
		t.Fatal(err)
	}
	close(e.src.gate)
	if err := <-done; !vp.IsKind(err, vp.KindConflict) {
		t.Fatalf("scan after losing its lease: %v, want a conflict", err)
	}
	if gs := e.groups(t); len(gs) != 0 {
		t.Fatalf("the scan that lost its lease counted %d groups", len(gs))
	}
}
