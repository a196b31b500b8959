package memory

import "github.com/vantagepeers/vantagepeers/shared/vp"

// The limits of the memory tools' arguments, declared once: the checks
// read them and tools/list advertises them. Namespaces are bounded by
// vp.CheckNamespace, ids by vp.CheckName.

// StoreLimits bound store_memory's arguments.
type StoreLimits struct {
	Content, Relations vp.Limit
	Episode            EpisodeLimits
}

// EpisodeLimits bound an episode's fields.
type EpisodeLimits struct{ Context, Goal, Action, Outcome, Insight vp.Limit }

// episodeLimits are the episode fields' limits under prefix: "" where they
// are arguments of their own (store_episode, and the errors of both
// tools), "episode." inside store_memory.
func episodeLimits(prefix string) EpisodeLimits {
	field := func(name string) vp.Limit { return vp.MaxBytes(prefix+name, vp.MaxEpisodeFieldBytes) }
	return EpisodeLimits{Context: field("context"), Goal: field("goal"), Action: field("action"), Outcome: field("outcome"), Insight: field("insight")}
}

// Limits are store_memory's limits.
func (StoreInput) Limits() StoreLimits {
	return StoreLimits{
		Content:   vp.MaxBytes("content", vp.MaxMemoryContentBytes),
		Relations: vp.MaxItems("relations", vp.MaxRelations, 0),
		Episode:   episodeLimits("episode."),
	}
}

// Limits are store_episode's limits.
func (EpisodeInput) Limits() EpisodeLimits { return episodeLimits("") }

// SearchLimits bound the searches' arguments; a limit out of range is
// clamped (clampSearchLimit), not refused.
type SearchLimits struct{ Query, Limit vp.Limit }

// Limits are recall's and hybrid_search's limits.
func (SearchInput) Limits() SearchLimits {
	return SearchLimits{Query: vp.MaxBytes("query", vp.MaxQueryBytes), Limit: vp.Between("limit", 1, vp.MaxSearchLimit)}
}

// FixPatternLimits bound create_fix_pattern's arguments.
type FixPatternLimits struct {
	Symptom, RootCause, ValidatedFix, SourceProject, Tags, Stack, Files, LinkedIssueIDs vp.Limit
}

// Limits are create_fix_pattern's limits; sourceProject is a name
// (vp.CheckName).
func (FixPatternInput) Limits() FixPatternLimits {
	list := func(field string) vp.Limit { return vp.MaxItems(field, vp.MaxFixListItems, vp.MaxFixListItemBytes) }
	return FixPatternLimits{
		Symptom:        vp.MaxBytes("symptom", vp.MaxSymptomBytes),
		RootCause:      vp.MaxBytes("rootCause", vp.MaxFixTextBytes),
		ValidatedFix:   ValidateFixLimit(),
		SourceProject:  vp.MaxBytes("sourceProject", vp.MaxNameBytes),
		Tags:           list("tags"),
		Stack:          list("stack"),
		Files:          list("files"),
		LinkedIssueIDs: list("linkedIssueIds"),
	}
}

// ValidateFixLimit bounds a validated fix (create_fix_pattern, validate_fix).
func ValidateFixLimit() vp.Limit { return vp.MaxBytes("validatedFix", vp.MaxFixTextBytes) }

// AttemptLimits bound add_fix_attempt's texts.
type AttemptLimits struct{ Description, Why, Commit vp.Limit }

// Limits are add_fix_attempt's limits.
func (AttemptInput) Limits() AttemptLimits {
	return AttemptLimits{
		Description: vp.MaxBytes("description", vp.MaxFixTextBytes),
		Why:         vp.MaxBytes("why", vp.MaxFixTextBytes),
		Commit:      vp.MaxBytes("commit", vp.MaxShortTextBytes),
	}
}
