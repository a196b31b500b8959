package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type createFixPatternIn struct {
	Symptom        string   `json:"symptom" jsonschema:"what the bug looks like (searched semantically), at most 8 KiB"`
	RootCause      string   `json:"rootCause" jsonschema:"why it happens"`
	Tags           []string `json:"tags" jsonschema:"categories, e.g. race-condition, credit-system"`
	Stack          []string `json:"stack" jsonschema:"technologies, e.g. next.js, convex"`
	SourceProject  string   `json:"sourceProject" jsonschema:"the project where it was found"`
	CreatedBy      string   `json:"createdBy,omitempty" jsonschema:"author orchestrator; defaults to you"`
	Severity       string   `json:"severity" jsonschema:"critical, major or minor"`
	ValidatedFix   string   `json:"validatedFix,omitempty" jsonschema:"the fix that worked, if known"`
	Files          []string `json:"files,omitempty" jsonschema:"files involved"`
	LinkedIssueIDs []string `json:"linkedIssueIds,omitempty" jsonschema:"related issue ids"`
}

type patternIDIn struct {
	PatternID string `json:"patternId" jsonschema:"the patternId create_fix_pattern returned"`
}

type addFixAttemptIn struct {
	PatternID   string `json:"patternId" jsonschema:"the pattern this attempt is for"`
	Description string `json:"description" jsonschema:"what was tried"`
	Worked      bool   `json:"worked" jsonschema:"whether it fixed the bug"`
	Why         string `json:"why" jsonschema:"why it worked or did not"`
	CreatedBy   string `json:"createdBy,omitempty" jsonschema:"author orchestrator; defaults to you"`
	Commit      string `json:"commit,omitempty" jsonschema:"git commit of the attempt"`
}

type validateFixIn struct {
	PatternID    string `json:"patternId" jsonschema:"the pattern to update"`
	ValidatedFix string `json:"validatedFix" jsonschema:"the fix that works (replaces any previous one)"`
}

type searchFixPatternsIn struct {
	Query string `json:"query" jsonschema:"the symptom you see"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many results, default 10, at most 100"`
}

type listFixPatternsIn struct {
	listing.Params
	Project string `json:"project,omitempty" jsonschema:"only patterns found in this project"`
}

func (s *server) addFixPatternTools(m *mcp.Server) {
	mem := s.opts.Memory
	if mem == nil {
		return
	}
	add(s, m, tool{Name: "create_fix_pattern", Annotations: write,
		Limits: limits{
			"symptom": maxLen(vp.MaxSymptomBytes), "rootCause": maxLen(vp.MaxFixTextBytes),
			"validatedFix": maxLen(vp.MaxFixTextBytes), "sourceProject": maxLen(vp.MaxNameBytes),
			"tags": maxItems(vp.MaxFixListItems), "tags[]": maxLen(vp.MaxFixListItemBytes), "stack": maxItems(vp.MaxFixListItems),
			"stack[]": maxLen(vp.MaxFixListItemBytes), "files": maxItems(vp.MaxFixListItems),
			"files[]": maxLen(vp.MaxFixListItemBytes), "linkedIssueIds": maxItems(vp.MaxFixListItems),
			"linkedIssueIds[]": maxLen(vp.MaxFixListItemBytes),
		},
		Description: "Document a bug once you understand it: symptom, root cause, tags, stack, project and severity, so that any project " +
			"can find it with search_fix_patterns. Example: {\"symptom\":\"Credits not deducted after video generation\"," +
			"\"rootCause\":\"Race in the credit mutation\",\"tags\":[\"race-condition\"],\"stack\":[\"convex\"],\"sourceProject\":\"reels\",\"severity\":\"critical\"}"},
		func(ctx context.Context, p vp.Principal, in createFixPatternIn) (memory.CreateResult, error) {
			return mem.CreateFixPattern(ctx, p, memory.FixPatternInput{Symptom: in.Symptom, RootCause: in.RootCause, Tags: in.Tags,
				Stack: in.Stack, SourceProject: in.SourceProject, CreatedBy: in.CreatedBy, Severity: in.Severity,
				ValidatedFix: in.ValidatedFix, Files: in.Files, LinkedIssueIDs: in.LinkedIssueIDs})
		})

	add(s, m, tool{Name: "get_fix_pattern", Annotations: readOnly,
		Description: "Fetch a fix pattern with its validated fix and its latest attempts (newest first). Example: {\"patternId\":\"fix_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in patternIDIn) (memory.FixPatternDetail, error) {
			return mem.GetFixPattern(ctx, p, in.PatternID)
		})

	add(s, m, tool{Name: "add_fix_attempt", Annotations: write,
		Limits: limits{
			"description": maxLen(vp.MaxFixTextBytes), "why": maxLen(vp.MaxFixTextBytes), "commit": maxLen(vp.MaxShortTextBytes),
		},
		Description: "Record what you tried against a known bug and whether it worked; the first attempt that works becomes the " +
			"pattern's validated fix. Example: {\"patternId\":\"fix_01jd...\",\"description\":\"Optimistic locking\",\"worked\":true," +
			"\"why\":\"No more stale reads\",\"commit\":\"abc1234\"}"},
		func(ctx context.Context, p vp.Principal, in addFixAttemptIn) (memory.AttemptResult, error) {
			return mem.AddFixAttempt(ctx, p, memory.AttemptInput{PatternID: in.PatternID, Description: in.Description, Worked: in.Worked,
				Why: in.Why, CreatedBy: in.CreatedBy, Commit: in.Commit})
		})

	add(s, m, tool{Name: "validate_fix", Annotations: idempotent,
		Limits: limits{"validatedFix": maxLen(vp.MaxFixTextBytes)},
		Description: "Set (or replace) the validated fix of a pattern explicitly. " +
			"Example: {\"patternId\":\"fix_01jd...\",\"validatedFix\":\"Optimistic locking with retry on conflict\"}"},
		func(ctx context.Context, p vp.Principal, in validateFixIn) (vp.FixPattern, error) {
			return mem.ValidateFix(ctx, p, in.PatternID, in.ValidatedFix)
		})

	add(s, m, tool{Name: "search_fix_patterns", Annotations: readOnly,
		Description: "Before fixing any bug, search known fix patterns of every project by symptom, ranked by semantic similarity. " +
			"Example: {\"query\":\"message disappears after sending in chat\",\"limit\":5}"},
		func(ctx context.Context, p vp.Principal, in searchFixPatternsIn) (memory.FixSearchResult, error) {
			return mem.SearchFixPatterns(ctx, p, memory.FixSearchInput{Query: in.Query, Limit: in.Limit})
		})

	add(s, m, tool{Name: "list_fix_patterns", Annotations: readOnly,
		Description: "Browse fix patterns newest first, optionally of one source project. Paginated: {items, nextCursor?}; " +
			"pass nextCursor back as cursor. Example: {\"project\":\"reels\",\"limit\":20}"},
		func(ctx context.Context, p vp.Principal, in listFixPatternsIn) (listing.Page[any], error) {
			return mem.ListFixPatterns(ctx, p, memory.ListFixPatternsInput{Project: in.Project, Params: in.Params})
		})
}
