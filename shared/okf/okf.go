// Package okf is the VantagePeers bundle format: an OKF v0.2 folder (Open
// Knowledge Format — Markdown files with YAML front matter, a root index.md
// carrying okf_version and an append-only log.md) packed as a
// deterministic .tar.gz, with a machine layer inside the folder that OKF
// itself lacks (OKF has no manifest, no checksums, no ids beyond paths):
//
//	index.md                     okf_version "0.2", links to every concept
//	log.md                       dated, append-only entries
//	memories/<type>/<slug>.md    one per memory (type = the memory's type)
//	briefings/<topic>/<slug>.md  one per briefing note
//	tasks/<status>/<slug>.md     one per task
//	data/memories.jsonl          every field of every memory, one per line
//	data/briefings.jsonl         likewise for briefing notes
//	data/tasks.jsonl             likewise for tasks
//	data/manifest.json           format id, schema version, exporter,
//	                             namespace, counts, sha256 of every file
//
// The Markdown is for people and other OKF tools; the JSON Lines are the
// lossless truth an import reads. A bundle without data/manifest.json is a
// foreign OKF bundle: its Markdown concepts become memories (Read fills
// Bundle.Docs).
//
// The package is pure: Write and Read touch no store. Read refuses, naming
// the entry and the limit, whatever could hurt the reader: paths that
// escape the folder, links and devices, oversize entries, too many
// entries, a gzip bomb (decompressed bytes are capped while reading, and
// the refusal names the entry where the cap was crossed),
// duplicates, checksum mismatches, unknown versions, malformed JSON Lines
// (file and line) and references to ids neither in the bundle nor
// declared external.
package okf

import (
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Format identifiers written into the manifest.
const (
	FormatID      = "vantagepeers-okf-bundle"
	SchemaVersion = 1
	OKFVersion    = "0.2"
)

// Paths of the reserved files.
const (
	ManifestPath  = "data/manifest.json"
	MemoriesPath  = "data/memories.jsonl"
	BriefingsPath = "data/briefings.jsonl"
	TasksPath     = "data/tasks.jsonl"
	IndexPath     = "index.md"
	LogPath       = "log.md"
)

// Kinds of entity a bundle carries (manifest counts, provenance keys).
const (
	KindMemory   = "memory"
	KindBriefing = "briefing"
	KindTask     = "task"
)

// Manifest is data/manifest.json.
type Manifest struct {
	Format        string `json:"format"`
	SchemaVersion int    `json:"schemaVersion"`
	OKFVersion    string `json:"okfVersion"`
	// Exporter is "<producer>/<version>" (OKF's actor notation).
	Exporter string `json:"exporter"`
	// Origin identifies where the entities come from (a digest of the
	// exporting tenant and namespace, which it does not reveal): with a
	// source id it keys the provenance that makes an import idempotent.
	Origin    string `json:"origin"`
	Namespace string `json:"namespace"`
	// GeneratedAt is the latest change among the entities (RFC 3339), not
	// the time of the export: exporting the same data twice gives the same
	// bytes.
	GeneratedAt string         `json:"generatedAt"`
	Counts      map[string]int `json:"counts"`
	// External lists ids the entities refer to that are not in the bundle
	// (a relation to a memory of another namespace): an import keeps such
	// a reference when the id exists in the target tenant, else drops it.
	External []string `json:"external,omitempty"`
	// Files maps every other file of the bundle to its sha256 (hex).
	Files map[string]string `json:"files"`
}

// Bundle is a bundle's content.
type Bundle struct {
	Manifest Manifest
	Memories []vp.Memory
	Notes    []vp.BriefingNote
	Tasks    []vp.Task
	// Docs are the concepts of a foreign bundle (no machine layer).
	Docs []Doc
}

// Foreign reports a bundle read without a machine layer.
func (b *Bundle) Foreign() bool { return b.Manifest.Format == "" }

// Doc is one Markdown concept of a foreign bundle.
type Doc struct {
	Path  string
	Type  string
	Title string
	Body  string
	// Meta holds the front matter's scalar keys as read.
	Meta map[string]string
}

// Limits bound what Read accepts.
type Limits struct {
	// MaxCompressed bounds the .tar.gz itself.
	MaxCompressed int64
	// MaxTotal bounds the decompressed bytes (the tar stream).
	MaxTotal int64
	// MaxFile bounds one entry.
	MaxFile int64
	// MaxEntries bounds the number of entries.
	MaxEntries int
}

// DefaultLimits are the limits of a bundle read from a file (the CLI, the
// path of a local server): a bundle of a few thousand memories fits; a zip
// bomb does not.
var DefaultLimits = Limits{
	MaxCompressed: 64 << 20,
	MaxTotal:      256 << 20,
	MaxFile:       16 << 20,
	MaxEntries:    50_000,
}

// InlineLimits are the limits of a bundle carried in a tool call: at most
// 4 MiB of base64 (3 MiB of .tar.gz), which may expand to 64 MiB in all.
// Anyone holding a token can send one, so its expansion is bounded by what
// a legitimate bundle of that size holds (an export compresses about 5 to
// 10 times), not by what the server could survive once.
var InlineLimits = Limits{
	MaxCompressed: 3 << 20,
	MaxTotal:      64 << 20,
	MaxFile:       16 << 20,
	MaxEntries:    50_000,
}

// MaxFrontMatter bounds the front matter of a concept of a bundle with a
// machine layer: only the front matter of such a file is read (its body is
// hashed as it streams by), so it is held at most this long.
const MaxFrontMatter = 64 << 10

// ids returns the set of entity ids of b.
func (b *Bundle) ids() map[string]string {
	out := make(map[string]string, len(b.Memories)+len(b.Notes)+len(b.Tasks))
	for _, m := range b.Memories {
		out[m.ID] = KindMemory
	}
	for _, n := range b.Notes {
		out[n.ID] = KindBriefing
	}
	for _, t := range b.Tasks {
		out[t.ID] = KindTask
	}
	return out
}

// MemoryRefs returns every memory id m refers to (relations, supersededBy).
func MemoryRefs(m vp.Memory) []string {
	var out []string
	for _, r := range m.Relations {
		out = append(out, r.TargetID)
	}
	if m.SupersededBy != "" {
		out = append(out, m.SupersededBy)
	}
	return out
}
