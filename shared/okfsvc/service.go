// Package okfsvc exports a namespace as an OKF bundle (shared/okf),
// validates bundles and imports them (dry-run, merge, replace), composing
// the memory, briefing and task capabilities.
//
// What a namespace holds: its memories (their namespace), the briefing
// notes whose topic is the namespace, and the tasks whose project is the
// namespace — briefing notes and tasks have no namespace of their own, and
// these are the fields their tools already filter by. Exporting needs read
// access to the namespace, importing write access. Nothing else is read:
// no credential, token or session table is ever touched (tested), and
// entities carry no secret field.
//
// Import gives every entity a new id in the target namespace, rewrites the
// references between them (relations, supersededBy, linked memories,
// dependsOn) and returns the id map. Each entity is written in one
// transaction with a provenance record — (bundle origin, source id) → new
// id, and a digest of the source record — so importing the same bundle
// again changes nothing (its entities keep their ids; a changed record
// updates its entity), and an interrupted import resumes where it stopped.
// dry-run reports what merge would do and writes nothing. Replace is one
// transaction where the store allows it (SQLite) and a journal where it
// does not (DynamoDB); see (*Service).replace.
package okfsvc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Options configures a Service. Store, Memory and Tasks are required.
type Options struct {
	Store  store.Store
	Memory *memory.Service
	Tasks  *task.Service
	// Search keeps briefing notes (and removed tasks) in the keyword index.
	Search *search.Writer
	// Version is the exporter's version ("vantagepeers/<Version>").
	Version string
	// Limits are those of a bundle given as bytes or a file (Import,
	// Validate); one received inline carries its own (Receive).
	Limits okf.Limits
	// MemoryBudget bounds what the bundles being validated or imported at
	// once may hold, all calls together (default DefaultMemoryBudget); a
	// call waits up to BudgetWait (default DefaultBudgetWait; negative:
	// not at all) for room, else is refused as rate_limited.
	MemoryBudget int64
	BudgetWait   time.Duration
	Now          func() time.Time
}

// Service exports, validates and imports bundles.
type Service struct {
	st     store.Store
	mem    *memory.Service
	tasks  *task.Service
	search *search.Writer
	by     string
	lim    okf.Limits
	now    func() time.Time
	ids    *vp.IDs
	budget *budget
}

// New returns a Service.
func New(o Options) *Service {
	if o.Store == nil || o.Memory == nil || o.Tasks == nil {
		panic("okfsvc.New: Store, Memory and Tasks are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Limits == (okf.Limits{}) {
		o.Limits = okf.DefaultLimits
	}
	if o.MemoryBudget <= 0 {
		o.MemoryBudget = DefaultMemoryBudget
	}
	if o.BudgetWait == 0 {
		o.BudgetWait = DefaultBudgetWait
	}
	return &Service{st: o.Store, mem: o.Memory, tasks: o.Tasks, search: o.Search, by: "vantagepeers/" + o.Version,
		lim: o.Limits, now: o.Now, ids: vp.NewIDs(o.Now), budget: newBudget(o.MemoryBudget, o.BudgetWait)}
}

// WithMemoryBudget returns the service with a memory budget of its own of
// n bytes: the command line's one import by the data directory's owner
// may hold a bundle as large as a file may be.
func (s *Service) WithMemoryBudget(n int64) *Service {
	c := *s
	c.budget = newBudget(n, s.budget.wait)
	return &c
}

// Limits are the limits bundles given as bytes or a file are read with.
func (s *Service) Limits() okf.Limits { return s.lim }

// BudgetStats describes the memory budget of the Service's reads.
func (s *Service) BudgetStats() BudgetStats { return s.budget.stats() }

// read reads a bundle within the memory budget: the first pass (which
// holds nothing) measures it, then the call is admitted for what it will
// hold — its bytes and the parsed bundle, half as much again for an
// import (the remapped copies of the records, which share their text) —
// before the second pass. release ends the admission: call it once the
// bundle is no longer used.
func (s *Service) read(ctx context.Context, op string, in Received, importing bool) (*okf.Bundle, func(), error) {
	sc, err := okf.Scan(op, in.Data, in.Limits)
	if err != nil {
		return nil, nil, err
	}
	n := int64(len(in.Data)) + sc.Hold()
	if importing {
		n += sc.Hold() / 2
	}
	release, err := s.budget.acquire(ctx, op, n)
	if err != nil {
		return nil, nil, err
	}
	b, err := sc.Read()
	if err != nil {
		release()
		return nil, nil, err
	}
	return b, release, nil
}

// ---- tables

// provenance records the id an imported entity got.
type provenance struct {
	Namespace string `json:"namespace"`
	Origin    string `json:"origin"`
	Kind      string `json:"kind"`
	SourceID  string `json:"sourceId"`
	NewID     string `json:"newId"`
	// Digest is the sha256 of the source record: an unchanged record is
	// skipped, a changed one updates the entity.
	Digest string `json:"digest"`
	// Authors are the bundle's authors of the record, by field, that the
	// import did not keep as its authors (see authorship): provenance only.
	Authors    map[string]string `json:"importedAuthors,omitempty"`
	ImportedAt int64             `json:"importedAt"`
}

var provenances = table.Declare(table.Schema[provenance]{
	Entity: "okf import provenance",
	Primary: table.Key{PK: "OKFPROV#{ns}", SK: "{origin}#{kind}#{sourceId}", Pattern: "id an imported entity got, by bundle origin and source id",
		Note: "written in the entity's transaction: a second import of a bundle changes nothing"},
	Fields: func(p provenance) table.Values {
		return table.Values{"ns": p.Namespace, "origin": p.Origin, "kind": p.Kind, "sourceId": p.SourceID}
	},
})

// journal is a replace decided and being applied (applyReplace).
type journal struct {
	Namespace string `json:"namespace"`
	Gen       string `json:"gen"`
	Origin    string `json:"origin"`
	Staged    int    `json:"staged"`
	CreatedAt int64  `json:"createdAt"`
}

var journals = table.Declare(table.Schema[journal]{
	Entity:  "okf replace journal",
	Primary: table.Key{PK: "OKFREPL#{ns}", SK: "REPL", Pattern: "the replace of a namespace being applied", Note: "its presence is the decision: rolled forward by the next import"},
	Fields:  func(j journal) table.Values { return table.Values{"ns": j.Namespace} },
})

// stagedEntity is one entity of a replace's new generation, written
// before the journal and invisible to every other read.
type stagedEntity struct {
	Gen      string           `json:"gen"`
	Seq      int              `json:"seq"`
	Kind     string           `json:"kind"`
	SourceID string           `json:"sourceId"`
	Digest   string           `json:"digest"`
	Memory   *vp.Memory       `json:"memory,omitempty"`
	Note     *vp.BriefingNote `json:"note,omitempty"`
	Task     *vp.Task         `json:"task,omitempty"`
	// Authors: see provenance.Authors.
	Authors map[string]string `json:"authors,omitempty"`
	Expires int64             `json:"expires"`
}

var staging = table.Declare(table.Schema[stagedEntity]{
	Entity:  "okf replace staging",
	Primary: table.Key{PK: "OKFSTAGE#{gen}", SK: "{seq 6 digits}", Pattern: "the new generation of a replace, in order", Note: "TTL 7 days: a replace never decided leaves nothing behind"},
	Fields: func(e stagedEntity) table.Values {
		return table.Values{"gen": e.Gen, "seq 6 digits": seq6(e.Seq)}
	},
	Expires: func(e stagedEntity) int64 { return e.Expires },
})

func seq6(n int) string { return fmt.Sprintf("%06d", n) }

// Tables describes this package's keys for KEYS.md.
func Tables() []table.Doc {
	return []table.Doc{provenances.Doc(), journals.Doc(), staging.Doc(), replacements.Doc()}
}

// ---- export

// ExportResult is an exported bundle.
type ExportResult struct {
	Data     []byte       `json:"-"`
	Manifest okf.Manifest `json:"-"`
}

// Export packs namespace ns: its memories, the briefing notes of topic ns
// and the tasks of project ns.
func (s *Service) Export(ctx context.Context, p vp.Principal, ns string) (ExportResult, error) {
	const op = "export_okf_bundle"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return ExportResult{}, err
	}
	if err := vp.CheckNamespace(op, "namespace", ns, true); err != nil {
		return ExportResult{}, err
	}
	if err := p.MayRead(op, "namespace", ns); err != nil {
		return ExportResult{}, err
	}
	if j, ok, err := s.pending(ctx, op, tenant, ns); err != nil {
		return ExportResult{}, err
	} else if ok {
		return ExportResult{}, vp.Errorf(op, vp.KindConflict, "namespace", "a replace of %q (generation %s) is being applied; import any bundle into it to finish it, then export", ns, j.Gen)
	}
	ms, err := s.mem.NamespaceMemories(ctx, op, p, ns)
	if err != nil {
		return ExportResult{}, err
	}
	// Which embedder made a memory's vector is this store's state, not the
	// memory's: an embed job finishing would change the bundle (and void
	// its download link, signed for its sha256), and import clears it.
	for i := range ms {
		ms[i].Embedder = ""
	}
	notes, err := s.notesOf(ctx, op, tenant, ns)
	if err != nil {
		return ExportResult{}, err
	}
	ts, err := s.tasksOf(ctx, op, tenant, ns)
	if err != nil {
		return ExportResult{}, err
	}
	var buf bytes.Buffer
	man, err := okf.Write(&buf, okf.ExportInput{Exporter: s.by, Origin: origin(tenant, ns), Namespace: ns, Memories: ms, Notes: notes, Tasks: ts})
	if err != nil {
		return ExportResult{}, vp.Wrap(op, vp.KindInternal, err)
	}
	return ExportResult{Data: buf.Bytes(), Manifest: man}, nil
}

// origin names the source of a bundle without revealing it.
func origin(tenant, ns string) string {
	h := sha256.Sum256([]byte("vantagepeers\x00" + tenant + "\x00" + ns))
	return hex.EncodeToString(h[:12])
}

func (s *Service) notesOf(ctx context.Context, op, tenant, ns string) ([]vp.BriefingNote, error) {
	return queryAll[vp.BriefingNote](ctx, s.st, op, briefing.Notes.Query(tenant, store.GSI2, table.Values{"topic": ns}))
}

func (s *Service) tasksOf(ctx context.Context, op, tenant, ns string) ([]vp.Task, error) {
	return queryAll[vp.Task](ctx, s.st, op, task.Table.Query(tenant, store.GSI4, table.Values{"project": ns}))
}

// queryAll reads a whole partition.
func queryAll[T any](ctx context.Context, st store.Store, op string, q store.Query) ([]T, error) {
	q.Limit = 500
	var out []T
	for {
		items, err := st.Query(ctx, q)
		if err != nil {
			return nil, records.Err(op, err)
		}
		for _, it := range items {
			v, err := records.Decode[T](op, it)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if len(items) < q.Limit {
			return out, nil
		}
		pos := store.PositionOf(items[len(items)-1], q.Index)
		q.After = &pos
	}
}

// ---- validate

// Report describes a valid bundle.
type Report struct {
	Valid     bool           `json:"valid"`
	Foreign   bool           `json:"foreign,omitempty"`
	Format    string         `json:"format,omitempty"`
	Schema    int            `json:"schemaVersion,omitempty"`
	Exporter  string         `json:"exporter,omitempty"`
	Namespace string         `json:"namespace,omitempty"`
	Counts    map[string]int `json:"counts"`
	External  []string       `json:"external,omitempty"`
	Bytes     int            `json:"bytes"`
}

// Validate reads a bundle without writing anything, with the Service's
// limits (those of a file).
func (s *Service) Validate(ctx context.Context, p vp.Principal, data []byte) (Report, error) {
	return s.ValidateReceived(ctx, p, Received{Data: data, Limits: s.lim})
}

// ValidateReceived reads a bundle as received (with the limits of its
// transport) without writing anything.
func (s *Service) ValidateReceived(ctx context.Context, p vp.Principal, in Received) (Report, error) {
	const op = "validate_okf_bundle"
	if _, err := vp.TenantOf(op, p); err != nil {
		return Report{}, err
	}
	b, release, err := s.read(ctx, op, in, false)
	if err != nil {
		return Report{}, err
	}
	defer release()
	return ReportOf(b, len(in.Data)), nil
}

// ReportOf describes bundle b, read from n bytes.
func ReportOf(b *okf.Bundle, n int) Report {
	r := Report{Valid: true, Foreign: b.Foreign(), Bytes: n}
	if b.Foreign() {
		r.Counts = map[string]int{okf.KindMemory: len(b.Docs), okf.KindBriefing: 0, okf.KindTask: 0}
		return r
	}
	m := b.Manifest
	r.Format, r.Schema, r.Exporter, r.Namespace, r.Counts, r.External = m.Format, m.SchemaVersion, m.Exporter, m.Namespace, m.Counts, m.External
	return r
}
