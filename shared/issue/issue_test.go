package issue_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMappings(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		const n = 25
		for k := range n {
			e.mapRepo(t, fmt.Sprintf("acme/repo-%02d", k), "sigma", "p")
		}
		again := e.mapRepo(t, "ACME/repo-03", "tau", "web") // replaces, case-insensitively
		got := listAll(t, func(c string) (listing.Page[any], error) {
			return e.issues.ListMappings(ctx(), admin(tenant), issue.ListMappingsInput{Params: listing.Params{Cursor: c, Limit: ptr(7)}})
		})
		if len(got) != n {
			t.Fatalf("listed %d mappings, want %d", len(got), n)
		}
		m, err := e.issues.GetMapping(ctx(), admin(tenant), issue.RepoRef{Repo: "acme/REPO-03"})
		if err != nil || m.Orchestrator != "tau" || m.Project != "web" || m.ID != again.ID || !m.Active {
			t.Fatalf("get = %+v, %v; want the replaced mapping", m, err)
		}
		if r, err := e.issues.RemoveMapping(ctx(), admin(tenant), issue.RepoRef{Repo: "acme/repo-03"}); err != nil || !r.Removed {
			t.Fatalf("remove = %+v, %v", r, err)
		}
		if r, err := e.issues.RemoveMapping(ctx(), admin(tenant), issue.RepoRef{Repo: "acme/repo-03"}); err != nil || r.Removed {
			t.Fatalf("second remove = %+v, %v; want removed false", r, err)
		}
		_, err = e.issues.GetMapping(ctx(), admin(tenant), issue.RepoRef{Repo: "acme/repo-03"})
		wantKind(t, err, vp.KindNotFound, "repo")
		// Another tenant sees none of them.
		page, err := e.issues.ListMappings(ctx(), admin("other"), issue.ListMappingsInput{})
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("other tenant lists %d mappings (%v), want 0", len(page.Items), err)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func TestBadInputNamesTheField(t *testing.T) {
	e := newEnv(t, openSQLite(t), nil)
	for _, tc := range []struct {
		name, field string
		call        func() error
	}{
		{"repo without owner", "repo", func() error {
			_, err := e.issues.AddMapping(ctx(), admin(tenant), issue.MappingInput{Repo: "api", Orchestrator: "sigma", Project: "p"})
			return err
		}},
		{"repo with a space", "repo", func() error {
			_, err := e.issues.GetMapping(ctx(), admin(tenant), issue.RepoRef{Repo: "acme/a b"})
			return err
		}},
		{"no orchestrator", "orchestrator", func() error {
			_, err := e.issues.AddMapping(ctx(), admin(tenant), issue.MappingInput{Repo: "acme/api", Project: "p"})
			return err
		}},
		{"issue number 0", "issueNumber", func() error {
			_, err := e.issues.GetIssue(ctx(), admin(tenant), issue.IssueRef{Repo: "acme/api"})
			return err
		}},
		{"unknown status", "status", func() error {
			_, err := e.issues.UpdateStatus(ctx(), admin(tenant), issue.StatusInput{IssueRef: issue.IssueRef{Repo: "acme/api", IssueNumber: 1}, Status: "done"})
			return err
		}},
		{"short sha", "commitSha", func() error {
			_, err := e.issues.LinkCommit(ctx(), admin(tenant), issue.CommitInput{IssueRef: issue.IssueRef{Repo: "acme/api", IssueNumber: 1}, CommitSHA: "abc12"})
			return err
		}},
		{"bad PR URL", "prUrl", func() error {
			_, err := e.issues.UpdateStatus(ctx(), admin(tenant), issue.StatusInput{IssueRef: issue.IssueRef{Repo: "acme/api", IssueNumber: 1}, Status: "open", PRURL: "http://example.com/pull/1"})
			return err
		}},
		{"daily without project", "project", func() error {
			_, err := e.issues.IssueStats(ctx(), admin(tenant), issue.StatsInput{Daily: true})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { wantKind(t, tc.call(), vp.KindInvalid, tc.field) })
	}
}

func TestIssueEventsFollowGitHub(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mapRepo(t, "acme/api", "sigma", "api")
		g := ghIssue{Repo: "acme/api", Number: 3, Title: "Slow", Association: "NONE"}
		e.deliver(t, "issues", "d1", issuesPayload(t, "opened", g, nil))
		g.Title = "Slow search"
		e.deliver(t, "issues", "d2", issuesPayload(t, "edited", g, nil))
		if i := e.issue(t, "acme/api", 3); i.Title != "Slow search" || !slices.Equal(i.Labels, []string{"bug"}) {
			t.Errorf("after edited: %q %v", i.Title, i.Labels)
		}
		e.deliver(t, "issues", "d3", issuesPayload(t, "closed", g, nil))
		if i := e.issue(t, "acme/api", 3); i.Status != issue.StatusClosed || i.ClosedAt == nil {
			t.Errorf("after closed: %s", i.Status)
		}
		closed := e.issue(t, "acme/api", 3)
		if got := e.deliver(t, "issues", "d3", issuesPayload(t, "closed", g, nil)); got == issue.Accepted {
			t.Errorf("redelivered close: %s, want nothing done", got)
		}
		if again := e.issue(t, "acme/api", 3); again.UpdatedAt != closed.UpdatedAt {
			t.Errorf("a redelivered close rewrote the issue")
		}
		e.deliver(t, "issues", "d4", issuesPayload(t, "reopened", g, nil))
		if i := e.issue(t, "acme/api", 3); i.Status != issue.StatusOpen || i.ClosedAt != nil {
			t.Errorf("after reopened: %s", i.Status)
		}
		for _, name := range []string{"issues", "star", "sponsorship"} {
			if got := e.deliver(t, name, "d-"+name, issuesPayload(t, "pinned", g, nil)); got != issue.Ignored {
				t.Errorf("%s.pinned: %s, want ignored", name, got)
			}
		}
	})
}

func TestFirstResponseIgnoresBotsTheAuthorAndOurComments(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mapRepo(t, "acme/api", "sigma", "api")
		g := ghIssue{Repo: "acme/api", Number: 4, Title: "x", Author: "alice"}
		e.deliver(t, "issues", "d1", issuesPayload(t, "opened", g, nil))
		comment := func(id, login, typ, body string, at time.Time) string {
			return e.deliver(t, "issue_comment", id, issuesPayload(t, "created", g, map[string]any{"comment": map[string]any{
				"body": body, "user": map[string]any{"login": login, "type": typ}, "created_at": at.Format(time.RFC3339)}}))
		}
		t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		comment("c1", "vp-bot", "User", "Investigating <!-- vantagepeers:irp:open:x -->", t0.Add(time.Minute))
		comment("c2", "dependabot[bot]", "Bot", "bump", t0.Add(2*time.Minute))
		comment("c3", "alice", "User", "more details", t0.Add(3*time.Minute))
		if i := e.issue(t, "acme/api", 4); i.FirstResponseAt != nil {
			t.Fatalf("first response set by %v", time.UnixMilli(*i.FirstResponseAt))
		}
		comment("c4", "bob", "User", "on it", t0.Add(30*time.Minute))
		comment("c5", "carol", "User", "me too", t0.Add(40*time.Minute))
		if i := e.issue(t, "acme/api", 4); i.FirstResponseAt == nil || *i.FirstResponseAt != t0.Add(30*time.Minute).UnixMilli() {
			t.Fatalf("first response = %v, want bob's at +30m", i.FirstResponseAt)
		}
	})
}

func TestTransferredIssueKeepsItsMission(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mapRepo(t, "acme/old", "sigma", "api")
		e.mapRepo(t, "acme/new", "sigma", "api")
		old := ghIssue{Repo: "acme/old", Number: 11, Title: "Moved"}
		e.deliver(t, "issues", "d1", issuesPayload(t, "opened", old, nil))
		e.drain(t)
		mission := e.issue(t, "acme/old", 11).MissionID
		moved := ghIssue{Repo: "acme/new", Number: 2, Title: "Moved"}
		// GitHub sends both; either order works, and the second is a duplicate.
		opened := issuesPayload(t, "opened", moved, map[string]any{"changes": map[string]any{
			"old_issue": old.object(), "old_repository": map[string]any{"full_name": "acme/old"}}})
		transferred := issuesPayload(t, "transferred", old, map[string]any{"changes": map[string]any{
			"new_issue": moved.object(), "new_repository": map[string]any{"full_name": "acme/new"}}})
		if got := e.deliver(t, "issues", "d2", opened); got != issue.Accepted {
			t.Fatalf("opened after transfer: %s", got)
		}
		if got := e.deliver(t, "issues", "d3", transferred); got != issue.Duplicate {
			t.Fatalf("transferred: %s, want duplicate", got)
		}
		i := e.issue(t, "acme/new", 2)
		if i.MissionID != mission || i.Status != issue.StatusInProgress {
			t.Fatalf("moved issue: mission %q status %s; want %q in_progress", i.MissionID, i.Status, mission)
		}
		if o := e.issue(t, "acme/old", 11); o.TransferredTo != "acme/new#2" || o.MissionID != "" {
			t.Fatalf("old record: %+v", o)
		}
		e.assertOneMission(t, "api", 1)
		e.completeSteps(t, mission, 6, "reproduced")
		e.drain(t)
		if n := len(e.gh.commentsOn("acme/old", 11)); n != 1 {
			t.Errorf("%d comments on the old place, want 1 (open)", n)
		}
		if cs := e.gh.commentsOn("acme/new", 2); len(cs) != 1 || !strings.HasPrefix(cs[0], "Bug reproduced") {
			t.Errorf("comments on the new place = %q, want the T6 one", cs)
		}
	})
}

func TestCompletedTaskLinksTheIssueItNames(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mapRepo(t, "acme/api", "sigma", "api")
		for _, n := range []int{282, 2820, 283} {
			e.deliver(t, "issues", fmt.Sprint("d", n), issuesPayload(t, "opened", ghIssue{Repo: "acme/api", Number: n, Title: "x", Association: "NONE"}, nil))
		}
		create := func(title, project string) vp.Task {
			tk, err := e.tasks.CreateTask(ctx(), as(tenant, "sigma"), task.CreateTaskInput{Title: title, Project: project, AssignedTo: "sigma", Priority: "high"})
			if err != nil {
				t.Fatal(err)
			}
			return tk
		}
		fix := create("Fix #282 — credit race condition", "api")
		other := create("FIXES ACME/API#283 in the docs", "elsewhere")
		unmapped := create("Fix #282 for another project", "no-mapping")
		for tk, note := range map[string]string{fix.ID: "fixed in 3f2a9c1e and 77aa0b9", other.ID: "wrote docs", unmapped.ID: "fixed 3f2a9c1"} {
			if _, err := e.tasks.CompleteTask(ctx(), as(tenant, "sigma"), task.CompleteTaskInput{TaskID: tk, CompletionNote: note}); err != nil {
				t.Fatal(err)
			}
		}
		e.drain(t)
		i := e.issue(t, "acme/api", 282)
		if i.Status != issue.StatusFixed || !slices.Equal(i.LinkedTaskIDs, []string{fix.ID}) || !slices.Equal(i.CommitSHAs, []string{"3f2a9c1e", "77aa0b9"}) {
			t.Fatalf("#282 = status %s tasks %v shas %v; want fixed, [%s], two SHAs", i.Status, i.LinkedTaskIDs, i.CommitSHAs, fix.ID)
		}
		if i := e.issue(t, "acme/api", 2820); len(i.LinkedTaskIDs) != 0 || i.Status != issue.StatusOpen {
			t.Errorf("#2820 was touched by a #282 task: %+v", i)
		}
		if i := e.issue(t, "acme/api", 283); !slices.Equal(i.LinkedTaskIDs, []string{other.ID}) || i.Status != issue.StatusOpen {
			t.Errorf("#283 = %v %s; want linked by owner/repo#N and still open (no fix in the note)", i.LinkedTaskIDs, i.Status)
		}
	})
}

func TestReferences(t *testing.T) {
	for _, tc := range []struct {
		title string
		want  []issue.Reference
	}{
		{"Fix #282 — credit race", []issue.Reference{{"", 282}}},
		{"fixes Owner/Repo#12 and #13", []issue.Reference{{"owner/repo", 12}, {"", 13}}},
		{"#2820 then #282, #282 again", []issue.Reference{{"", 2820}, {"", 282}}},
		{"a#282 is not one, nor #0 or ##5 or #12abc", nil},
		{"[#142] T6 — Write Missing Tests", []issue.Reference{{"", 142}}},
	} {
		if got := issue.References(tc.title); !slices.Equal(got, tc.want) {
			t.Errorf("References(%q) = %v, want %v", tc.title, got, tc.want)
		}
	}
	for note, want := range map[string][]string{
		"fixed in 3F2A9C1":                                       {"3f2a9c1"},
		"deadbeef and 1234567 and ok":                            nil,
		"commit 0123456789abcdef0123456789abcdef01234567 pushed": {"0123456789abcdef0123456789abcdef01234567"},
	} {
		if got := issue.CommitSHAs(note); !slices.Equal(got, want) {
			t.Errorf("CommitSHAs(%q) = %v, want %v", note, got, want)
		}
	}
}

func TestListIssuesAndStats(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mapRepo(t, "acme/api", "sigma", "api")
		e.mapRepo(t, "acme/web", "tau", "web")
		const n = 23
		for k := 1; k <= n; k++ {
			e.deliver(t, "issues", fmt.Sprint("a", k), issuesPayload(t, "opened", ghIssue{Repo: "acme/api", Number: k, Title: "x", Association: "NONE"}, nil))
		}
		for k := 1; k <= 4; k++ {
			e.deliver(t, "issues", fmt.Sprint("w", k), issuesPayload(t, "opened", ghIssue{Repo: "acme/web", Number: k, Title: "y", Association: "NONE"}, nil))
		}
		for k := 1; k <= 5; k++ {
			if _, err := e.issues.UpdateStatus(ctx(), admin(tenant), issue.StatusInput{IssueRef: issue.IssueRef{Repo: "acme/api", IssueNumber: k}, Status: "fixed"}); err != nil {
				t.Fatal(err)
			}
		}
		count := func(in issue.ListInput) int {
			total := 0
			for cursor := ""; ; {
				in.Cursor, in.Limit = cursor, ptr(6)
				page, err := e.issues.ListIssues(ctx(), admin(tenant), in)
				if err != nil {
					t.Fatal(err)
				}
				if page.Count != len(page.Issues) {
					t.Fatalf("count %d for %d issues", page.Count, len(page.Issues))
				}
				total += page.Count
				if cursor = page.NextCursor; cursor == "" {
					return total
				}
			}
		}
		for _, tc := range []struct {
			in   issue.ListInput
			want int
		}{
			{issue.ListInput{}, n + 4},
			{issue.ListInput{Project: "api"}, n},
			{issue.ListInput{Project: "api", Status: "fixed"}, 5},
			{issue.ListInput{Status: "open"}, n - 5 + 4},
		} {
			if got := count(tc.in); got != tc.want {
				t.Errorf("list_issues %+v: %d issues, want %d", tc.in, got, tc.want)
			}
		}
		st, err := e.issues.IssueStats(ctx(), admin(tenant), issue.StatsInput{Project: "api"})
		if err != nil {
			t.Fatal(err)
		}
		if st.Counts["open"] != n-5 || st.Counts["fixed"] != 5 || st.Counts["closed"] != 0 || st.Total != n {
			t.Errorf("stats = %+v", st)
		}
		if _, err := e.issues.SnapshotAll(ctx(), tenant); err != nil {
			t.Fatal(err)
		}
		st, err = e.issues.IssueStats(ctx(), admin(tenant), issue.StatsInput{Project: "api", Daily: true})
		if err != nil || len(st.Snapshots) != 1 || st.Snapshots[0].TotalIssues != n || st.Snapshots[0].ResolvedIssues != 5 {
			t.Fatalf("daily = %+v, %v; want one snapshot of %d issues, 5 resolved", st.Snapshots, err, n)
		}
	})
}

func TestSnapshotFigures(t *testing.T) {
	pivot := issue.DefaultPivot
	at := func(d time.Duration) *int64 { v := pivot.Add(d).UnixMilli(); return &v }
	opened := func(d time.Duration) int64 { return pivot.Add(d).UnixMilli() }
	issues := []issue.Issue{
		// before the pivot: 1 resolved in 4 days
		{OpenedAt: opened(-10 * 24 * time.Hour), Status: "closed", ClosedAt: at(-6 * 24 * time.Hour), FirstResponseAt: at(-9 * 24 * time.Hour)},
		{OpenedAt: opened(-5 * 24 * time.Hour), Status: "open"},
		// after: 10, 20 and 60 minutes
		{OpenedAt: opened(time.Hour), Status: "closed", ClosedAt: at(time.Hour + 10*time.Minute), FirstResponseAt: at(time.Hour + 2*time.Minute)},
		{OpenedAt: opened(2 * time.Hour), Status: "verified", FixedAt: at(2*time.Hour + 20*time.Minute), FirstResponseAt: at(2*time.Hour + 4*time.Minute)},
		{OpenedAt: opened(3 * time.Hour), Status: "fixed", FixedAt: at(4 * time.Hour)},
	}
	sn := issue.ComputeSnapshot("api", issues, pivot, pivot.Add(24*time.Hour))
	check := func(name string, got *float64, want float64) {
		if got == nil || *got != want {
			t.Errorf("%s = %v, want %v", name, deref(got), want)
		}
	}
	check("medianTimeToFix", sn.MedianTimeToFix, 40) // 10, 20, 60, 5760
	check("fastest", sn.FastestResolution, 10)
	check("slowest", sn.SlowestResolution, 4*24*60)
	check("avg", sn.AvgTimeToFix, (10+20+60+4*24*60)/4.0)
	check("medianTimeToFirstResponse", sn.MedianTimeToFirstResponse, 4)
	check("before median", sn.BeforeVantageOS.MedianTimeToFix, 4*24*60)
	check("after median", sn.AfterVantageOS.MedianTimeToFix, 20)
	if sn.TotalIssues != 5 || sn.ResolvedIssues != 4 || sn.NeverAnswered != 2 || sn.BeforeVantageOS.TotalIssues != 2 || sn.AfterVantageOS.ResolvedIssues != 3 {
		t.Errorf("counts = %+v", sn)
	}
}

func TestPRMonitorTellsTheWatcher(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.gh.prs = map[string]issue.PullRequest{
			"other/lib#77": {State: "open", ETag: `"v1"`},
			"other/lib#78": {State: "open", ETag: `"v1"`},
		}
		for k, n := range []int{77, 78} {
			_, err := e.issues.UpdateStatus(ctx(), as(tenant, "pi"), issue.StatusInput{
				IssueRef: issue.IssueRef{Repo: "other/lib", IssueNumber: 10 + k}, Status: "in_progress",
				PRURL: fmt.Sprintf("https://github.com/other/lib/pull/%d", n)})
			if err != nil {
				t.Fatal(err)
			}
		}
		if n, err := e.issues.MonitorPRs(ctx(), tenant); err != nil || n != 0 {
			t.Fatalf("first poll: %d changed, %v", n, err)
		}
		e.gh.prs["other/lib#77"] = issue.PullRequest{State: "closed", Merged: true, ETag: `"v2"`}
		e.gh.prs["other/lib#78"] = issue.PullRequest{State: "closed", Merged: false, ETag: `"v2"`}
		if n, err := e.issues.MonitorPRs(ctx(), tenant); err != nil || n != 2 {
			t.Fatalf("second poll: %d changed, %v; want 2", n, err)
		}
		if i := e.issue(t, "other/lib", 10); i.PRStatus != "merged" || !i.External {
			t.Errorf("#10 PR status %s external %v", i.PRStatus, i.External)
		}
		if i := e.issue(t, "other/lib", 11); i.PRStatus != "closed" {
			t.Errorf("#11 PR status %s, want closed (closed without merging is not a merge)", i.PRStatus)
		}
		if n, err := e.issues.MonitorPRs(ctx(), tenant); err != nil || n != 0 {
			t.Fatalf("third poll: %d changed, %v; merged and closed PRs are no longer watched", n, err)
		}
		inbox, err := e.messages.Check(ctx(), as(tenant, "pi"), message.CheckInput{})
		if err != nil || inbox.Count != 2 {
			t.Fatalf("pi's inbox: %d messages (%v), want 2", inbox.Count, err)
		}
		joined := inbox.Messages[0].Content + inbox.Messages[1].Content
		if !strings.Contains(joined, "pull/77 for other/lib#10 was merged") || !strings.Contains(joined, "pull/78 for other/lib#11 was closed without merging") {
			t.Errorf("messages = %q", joined)
		}
	})
}

func TestPullRequestWebhookUpdatesAtOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		if _, err := e.issues.UpdateStatus(ctx(), as(tenant, "pi"), issue.StatusInput{
			IssueRef: issue.IssueRef{Repo: "other/lib", IssueNumber: 5}, Status: "in_progress",
			PRURL: "https://github.com/other/lib/pull/9"}); err != nil {
			t.Fatal(err)
		}
		body := []byte(`{"action":"closed","repository":{"full_name":"other/lib"},"pull_request":{"number":9,` +
			`"html_url":"https://github.com/other/lib/pull/9","state":"closed","merged":true}}`)
		if got := e.deliver(t, "pull_request", "p1", body); got != issue.Accepted {
			t.Fatalf("pull_request.closed: %s", got)
		}
		if got := e.deliver(t, "pull_request", "p1", body); got != issue.Ignored && got != issue.Duplicate {
			t.Fatalf("redelivery: %s", got)
		}
		if i := e.issue(t, "other/lib", 5); i.PRStatus != "merged" {
			t.Fatalf("PR status %s, want merged", i.PRStatus)
		}
		inbox, _ := e.messages.Check(ctx(), as(tenant, "pi"), message.CheckInput{})
		if inbox.Count != 1 {
			t.Fatalf("pi got %d messages, want 1", inbox.Count)
		}
	})
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
