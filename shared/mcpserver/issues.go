package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type issueRefIn struct {
	Repo        string `json:"repo"`
	IssueNumber int    `json:"issueNumber"`
}

func (r issueRefIn) ref() issue.IssueRef {
	return issue.IssueRef{Repo: r.Repo, IssueNumber: r.IssueNumber}
}

type addMappingIn struct {
	Repo         string `json:"repo"`
	Orchestrator string `json:"orchestrator" jsonschema:"who handles its issues"`
	Project      string `json:"project"`
	Active       *bool  `json:"active,omitempty" jsonschema:"default true; false records issues without starting missions"`
}

type listIssuesIn struct {
	listing.Params
	Project string `json:"project,omitempty"`
	Status  string `json:"status,omitempty" jsonschema:"open|in_progress|fixed|verified|closed"`
}

type updateIssueStatusIn struct {
	issueRefIn
	Status  string `json:"status" jsonschema:"open|in_progress|fixed|verified|closed"`
	PRURL   string `json:"prUrl,omitempty" jsonschema:"external issue: the fixing PR, watched hourly"`
	Watcher string `json:"watcher,omitempty" jsonschema:"told when that PR is merged or closed; default you"`
}

type linkCommitIn struct {
	issueRefIn
	CommitSHA string `json:"commitSha" jsonschema:"7-40 hex"`
	FixedBy   string `json:"fixedBy,omitempty"`
}

type verifyIssueIn struct {
	issueRefIn
	VerifiedBy string `json:"verifiedBy"`
}

type issueStatsIn struct {
	Project string `json:"project,omitempty"`
	Daily   bool   `json:"daily,omitempty" jsonschema:"also the daily MTTR snapshots (needs project)"`
}

type linkIssueToPatternIn struct {
	PatternID string `json:"patternId"`
	IssueID   string `json:"issueId" jsonschema:"owner/repo#NNN"`
}

// IssueTools are the GitHub issue tools over is; mem, when set, links
// issues to fix patterns. None when is is nil.
func IssueTools(is *issue.Service, mem *memory.Service) Toolset {
	if is == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addIssueTools(m, is, mem) }}
}

func (s *server) addIssueTools(m *mcp.Server, is *issue.Service, mem *memory.Service) {
	add(s, m, tool{Name: "add_repo_mapping", Title: "Add repo mapping", Annotations: idempotent,
		Description: "Map a GitHub repo to the orchestrator and project handling its issues: each opened issue starts an issue-resolution-v2 mission. Example: {\"repo\":\"acme/api\",\"orchestrator\":\"alice\",\"project\":\"api\"}"},
		func(ctx context.Context, p vp.Principal, in addMappingIn) (issue.Mapping, error) {
			return is.AddMapping(ctx, p, issue.MappingInput{Repo: in.Repo, Orchestrator: in.Orchestrator, Project: in.Project, Active: in.Active})
		})
	add(s, m, tool{Name: "get_repo_mapping", Title: "Get repo mapping", Annotations: readOnly,
		Description: "Fetch a repo mapping. Example: {\"repo\":\"acme/api\"}"},
		func(ctx context.Context, p vp.Principal, in issue.RepoRef) (issue.Mapping, error) {
			return is.GetMapping(ctx, p, in)
		})
	add(s, m, tool{Name: "list_repo_mappings", Title: "List repo mappings", Annotations: readOnly,
		Description: "List repo mappings, newest first. Example: {\"limit\":50}"},
		func(ctx context.Context, p vp.Principal, in issue.ListMappingsInput) (listing.Page[any], error) {
			return is.ListMappings(ctx, p, in)
		})
	add(s, m, tool{Name: "remove_repo_mapping", Title: "Remove repo mapping", Annotations: destructive,
		Description: "Delete a repo mapping; its issues stay. Example: {\"repo\":\"acme/api\"}"},
		func(ctx context.Context, p vp.Principal, in issue.RepoRef) (issue.RemoveResult, error) {
			return is.RemoveMapping(ctx, p, in)
		})
	add(s, m, tool{Name: "list_issues", Title: "List issues", Annotations: readOnly,
		Description: "List GitHub issues of mapped repos, newest first, as {count, issues, nextCursor?}. Example: {\"project\":\"api\",\"status\":\"open\"}"},
		func(ctx context.Context, p vp.Principal, in listIssuesIn) (issue.List, error) {
			return is.ListIssues(ctx, p, issue.ListInput{Params: in.Params, Project: in.Project, Status: in.Status})
		})
	add(s, m, tool{Name: "get_issue", Title: "Get issue", Annotations: readOnly,
		Description: "Fetch an issue with its mission, linked tasks and commits. Example: {\"repo\":\"acme/api\",\"issueNumber\":42}"},
		func(ctx context.Context, p vp.Principal, in issueRefIn) (issue.Issue, error) {
			return is.GetIssue(ctx, p, in.ref())
		})
	add(s, m, tool{Name: "update_issue_status", Title: "Update issue status", Annotations: idempotent,
		Description: "Move an issue: open → in_progress → fixed → verified → closed (closed only reopens). " +
			"Example: {\"repo\":\"acme/api\",\"issueNumber\":42,\"status\":\"fixed\"}"},
		func(ctx context.Context, p vp.Principal, in updateIssueStatusIn) (issue.Issue, error) {
			return is.UpdateStatus(ctx, p, issue.StatusInput{IssueRef: in.ref(), Status: in.Status, PRURL: in.PRURL, Watcher: in.Watcher})
		})
	add(s, m, tool{Name: "link_commit_to_issue", Title: "Link commit to issue", Annotations: idempotent,
		Description: "Record a commit on an issue. Example: {\"repo\":\"acme/api\",\"issueNumber\":42,\"commitSha\":\"3f2a9c1\"}"},
		func(ctx context.Context, p vp.Principal, in linkCommitIn) (issue.Issue, error) {
			return is.LinkCommit(ctx, p, issue.CommitInput{IssueRef: in.ref(), CommitSHA: in.CommitSHA, FixedBy: in.FixedBy})
		})
	add(s, m, tool{Name: "verify_issue", Title: "Verify issue", Annotations: idempotent,
		Description: "Mark a fixed issue verified. Example: {\"repo\":\"acme/api\",\"issueNumber\":42,\"verifiedBy\":\"bob\"}"},
		func(ctx context.Context, p vp.Principal, in verifyIssueIn) (issue.Issue, error) {
			return is.Verify(ctx, p, issue.VerifyInput{IssueRef: in.ref(), VerifiedBy: in.VerifiedBy})
		})
	add(s, m, tool{Name: "issue_stats", Title: "Issue statistics", Annotations: readOnly,
		Description: "Issue counts by status; daily:true adds resolution-time snapshots. Example: {\"project\":\"api\",\"daily\":true}"},
		func(ctx context.Context, p vp.Principal, in issueStatsIn) (issue.Stats, error) {
			return is.IssueStats(ctx, p, issue.StatsInput{Project: in.Project, Daily: in.Daily})
		})
	if mem != nil {
		add(s, m, tool{Name: "link_issue_to_pattern", Title: "Link issue to fix pattern", Annotations: idempotent,
			Description: "Add an issue to a fix pattern's linkedIssueIds. Example: {\"patternId\":\"fix_1\",\"issueId\":\"acme/api#42\"}"},
			func(ctx context.Context, p vp.Principal, in linkIssueToPatternIn) (vp.FixPattern, error) {
				return mem.LinkIssue(ctx, p, in.PatternID, in.IssueID)
			})
	}
}
