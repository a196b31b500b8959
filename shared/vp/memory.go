package vp

import (
	"slices"
	"strings"
)

// Memory types. The seed documents two lists (the API reference and the
// capabilities pages); the product accepts their union.
var MemoryTypes = []string{
	"fact", "decision", "feedback", "project", "architecture", "note", "warning",
	"procedure", "episode", "observation", "user", "reference",
}

// MemoryTypeEpisode is the type of memories written by store_episode.
const MemoryTypeEpisode = "episode"

// Relation types between memories. "updates" supersedes its target.
const (
	RelationUpdates     = "updates"
	RelationReferences  = "references"
	RelationContradicts = "contradicts"
	RelationExtends     = "extends"
)

// RelationTypes lists every relation type.
var RelationTypes = []string{RelationUpdates, RelationReferences, RelationContradicts, RelationExtends}

// Episode severities: low, medium, high, critical; the
// tools reference's minor and major are accepted as low and high.
var EpisodeSeverities = []string{"low", "medium", "high", "critical"}

// FixSeverities are the severities of a fix pattern.
var FixSeverities = []string{"critical", "major", "minor"}

// Limits of memories, episodes and fix patterns. A memory is one store item
// (DynamoDB items are at most 400 KB), so content stays well under it.
const (
	MaxMemoryContentBytes = 100_000
	MaxNamespaceBytes     = 256
	MaxRelations          = 20
	MaxEpisodeFieldBytes  = 16 << 10
	MaxQueryBytes         = 4 << 10
	MaxSearchLimit        = 100
	MaxFixTextBytes       = 32 << 10 // rootCause, validatedFix, attempt description and why
	MaxSymptomBytes       = 8 << 10
	MaxFixListItems       = 50 // tags, stack, files, linkedIssueIds
	MaxFixListItemBytes   = 512
)

// Relation links a memory to another memory of the same tenant.
type Relation struct {
	TargetID string `json:"targetId"`
	Type     string `json:"type" jsonschema:"updates (supersedes the target)|references|contradicts|extends"`
}

// Episode is the structured payload of an episode memory.
type Episode struct {
	Context  string `json:"context"`
	Goal     string `json:"goal"`
	Action   string `json:"action"`
	Outcome  string `json:"outcome"`
	Insight  string `json:"insight" jsonschema:"the lesson"`
	Severity string `json:"severity" jsonschema:"low|medium|high|critical (minor=low, major=high)"`
}

// Memory is a typed, namespaced piece of knowledge. IsLatest is false once
// the memory is superseded (an "updates" relation from a newer memory names
// it) or soft-deleted; either way it leaves every search and list.
type Memory struct {
	ID           string     `json:"_id"`
	CreationTime int64      `json:"_creationTime"`
	Namespace    string     `json:"namespace"`
	Type         string     `json:"type"`
	Content      string     `json:"content"`
	CreatedBy    string     `json:"createdBy"`
	Relations    []Relation `json:"relations,omitempty"`
	IsLatest     bool       `json:"isLatest"`
	// TTL is the ISO 8601 instant the memory expires at, as given;
	// ExpiresAt is the same instant in Unix ms.
	TTL          string   `json:"ttl,omitempty"`
	ExpiresAt    int64    `json:"expiresAt,omitempty"`
	Episode      *Episode `json:"episode,omitempty"`
	SupersededBy string   `json:"supersededBy,omitempty"`
	SupersededAt int64    `json:"supersededAt,omitempty"`
	DeletedAt    int64    `json:"deletedAt,omitempty"`
	// Embedder names the embedder of the memory's vector ("" until the
	// embedding job ran).
	Embedder  string `json:"embedder,omitempty"`
	UpdatedAt int64  `json:"updatedAt"`
}

// Live reports whether the memory takes part in searches and lists at
// nowMS: latest, not deleted, not expired.
func (m Memory) Live(nowMS int64) bool {
	return m.IsLatest && m.DeletedAt == 0 && (m.ExpiresAt == 0 || m.ExpiresAt > nowMS)
}

// FixPattern documents a bug: its symptom (searched semantically), root
// cause and validated fix. Patterns are shared by the whole tenant.
type FixPattern struct {
	ID             string   `json:"_id"`
	CreationTime   int64    `json:"_creationTime"`
	Symptom        string   `json:"symptom"`
	RootCause      string   `json:"rootCause"`
	ValidatedFix   string   `json:"validatedFix,omitempty"`
	Files          []string `json:"files,omitempty"`
	Tags           []string `json:"tags"`
	Stack          []string `json:"stack"`
	SourceProject  string   `json:"sourceProject"`
	LinkedIssueIDs []string `json:"linkedIssueIds,omitempty"`
	Severity       string   `json:"severity"`
	CreatedBy      string   `json:"createdBy"`
	AttemptCount   int      `json:"attemptCount"`
	ValidatedAt    int64    `json:"validatedAt,omitempty"`
	Embedder       string   `json:"embedder,omitempty"`
	UpdatedAt      int64    `json:"updatedAt"`
}

// FixAttempt is one documented attempt at fixing a pattern's bug.
type FixAttempt struct {
	ID           string `json:"_id"`
	CreationTime int64  `json:"_creationTime"`
	PatternID    string `json:"patternId"`
	Description  string `json:"description"`
	Commit       string `json:"commit,omitempty"`
	Worked       bool   `json:"worked"`
	Why          string `json:"why"`
	CreatedBy    string `json:"createdBy"`
}

// NormalizeEpisodeSeverity maps a severity onto EpisodeSeverities, accepting
// the tools reference's minor (low) and major (high); ok is false for
// anything else.
func NormalizeEpisodeSeverity(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "minor":
		return "low", true
	case "major":
		return "high", true
	}
	return s, slices.Contains(EpisodeSeverities, s)
}

// CheckNamespace validates a memory namespace: case-sensitive text of at
// most MaxNamespaceBytes without '#' or control characters and without
// surrounding spaces ("global", "project/vp", "orchestrator/alice").
func CheckNamespace(op, field, ns string, required bool) error {
	if err := CheckText(op, field, ns, MaxNamespaceBytes, required); err != nil {
		return err
	}
	if ns != strings.TrimSpace(ns) {
		return Errorf(op, KindInvalid, field, "%q has leading or trailing spaces", ns)
	}
	for _, r := range ns {
		if r == '#' || r < 0x20 || r == 0x7f {
			return Errorf(op, KindInvalid, field, "%q may not contain '#' or control characters (use paths like project/vp)", ns)
		}
	}
	return nil
}
