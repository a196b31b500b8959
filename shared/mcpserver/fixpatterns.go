package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type createFixPatternIn struct {
	Symptom        string   `json:"symptom" jsonschema:"searched semantically"`
	RootCause      string   `json:"rootCause"`
	Tags           []string `json:"tags"`
	Stack          []string `json:"stack" jsonschema:"technologies"`
	SourceProject  string   `json:"sourceProject"`
	CreatedBy      string   `json:"createdBy,omitempty"`
	Severity       string   `json:"severity" jsonschema:"critical|major|minor"`
	ValidatedFix   string   `json:"validatedFix,omitempty"`
	Files          []string `json:"files,omitempty"`
	LinkedIssueIDs []string `json:"linkedIssueIds,omitempty"`
}

type patternIDIn struct {
	PatternID string `json:"patternId"`
}

type addFixAttemptIn struct {
	PatternID   string `json:"patternId"`
	Description string `json:"description" jsonschema:"what was tried"`
	Worked      bool   `json:"worked"`
	Why         string `json:"why"`
	CreatedBy   string `json:"createdBy,omitempty"`
	Commit      string `json:"commit,omitempty"`
}

type validateFixIn struct {
	PatternID    string `json:"patternId"`
	ValidatedFix string `json:"validatedFix"`
}

type searchFixPatternsIn struct {
	Query string `json:"query" jsonschema:"the symptom"`
	Limit int    `json:"limit,omitempty" jsonschema:"default 10, max 100"`
}

type listFixPatternsIn struct {
	listing.Params
	Project string `json:"project,omitempty" jsonschema:"the source project"`
}

func (s *server) addFixPatternTools(m *mcp.Server, mem *memory.Service) {
	add(s, m, tool{Name: "create_fix_pattern", Title: "Create fix pattern", Annotations: write,
		Limits:      memory.FixPatternInput{}.Limits(),
		Description: "Document an understood bug so any project finds it with search_fix_patterns. Example: {\"symptom\":\"Credits not deducted\",\"rootCause\":\"Race in the mutation\",\"severity\":\"critical\"}"},
		func(ctx context.Context, p vp.Principal, in createFixPatternIn) (memory.CreateResult, error) {
			return mem.CreateFixPattern(ctx, p, memory.FixPatternInput{Symptom: in.Symptom, RootCause: in.RootCause, Tags: in.Tags,
				Stack: in.Stack, SourceProject: in.SourceProject, CreatedBy: in.CreatedBy, Severity: in.Severity,
				ValidatedFix: in.ValidatedFix, Files: in.Files, LinkedIssueIDs: in.LinkedIssueIDs})
		})

	add(s, m, tool{Name: "get_fix_pattern", Title: "Get fix pattern", Annotations: readOnly,
		Description: "Fetch a fix pattern with its latest attempts. Example: {\"patternId\":\"fix_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in patternIDIn) (memory.FixPatternDetail, error) {
			return mem.GetFixPattern(ctx, p, in.PatternID)
		})

	add(s, m, tool{Name: "add_fix_attempt", Title: "Add fix attempt", Annotations: write,
		Limits:      memory.AttemptInput{}.Limits(),
		Description: "Record an attempt at a known bug; the first that works becomes the validated fix. Example: {\"patternId\":\"fix_01jd...\",\"description\":\"Optimistic locking\",\"worked\":true}"},
		func(ctx context.Context, p vp.Principal, in addFixAttemptIn) (memory.AttemptResult, error) {
			return mem.AddFixAttempt(ctx, p, memory.AttemptInput{PatternID: in.PatternID, Description: in.Description, Worked: in.Worked,
				Why: in.Why, CreatedBy: in.CreatedBy, Commit: in.Commit})
		})

	add(s, m, tool{Name: "validate_fix", Title: "Set validated fix", Annotations: idempotent,
		Limits:      memory.ValidateFixLimit(),
		Description: "Set or replace a pattern's validated fix. Example: {\"patternId\":\"fix_01jd...\",\"validatedFix\":\"Optimistic locking\"}"},
		func(ctx context.Context, p vp.Principal, in validateFixIn) (vp.FixPattern, error) {
			return mem.ValidateFix(ctx, p, in.PatternID, in.ValidatedFix)
		})

	add(s, m, tool{Name: "search_fix_patterns", Title: "Search fix patterns", Annotations: readOnly,
		Description: "Before fixing a bug, search every project's fix patterns by symptom (semantic). Example: {\"query\":\"chat message vanishes\"}"},
		func(ctx context.Context, p vp.Principal, in searchFixPatternsIn) (memory.FixSearchResult, error) {
			return mem.SearchFixPatterns(ctx, p, memory.FixSearchInput{Query: in.Query, Limit: in.Limit})
		})

	add(s, m, tool{Name: "list_fix_patterns", Title: "List fix patterns", Annotations: readOnly,
		Description: "List fix patterns, newest first. Example: {\"project\":\"shop\"}"},
		func(ctx context.Context, p vp.Principal, in listFixPatternsIn) (listing.Page[any], error) {
			return mem.ListFixPatterns(ctx, p, memory.ListFixPatternsInput{Project: in.Project, Params: in.Params})
		})
}
