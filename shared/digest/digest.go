// Package digest is the improvisation digest (platform spec §14.9): an
// advisory, read-only scan of the tasks, messages and memories created in
// a window for claims of durable artifacts (commit SHAs, #NNN references,
// Convex ids, decisive verbs) that do not cite their sources with a
// "VP-Sources:" footer. It writes nothing and blocks nothing.
package digest

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Bounds of the scan.
const (
	DefaultWindowDays = 7
	MaxWindowDays     = 90
	// MaxScanned is how many records of one category a digest reads at
	// most; past it the result says truncated.
	MaxScanned = 10000
	// MaxSamples caps the samples of a result.
	MaxSamples = 50
	// MaxOrchestrators bounds the orchestrators filter.
	MaxOrchestrators = 100
	// MaxExcerptChars bounds a sample's excerpt (in characters).
	MaxExcerptChars = 200
)

// Categories of flagged records.
const (
	CategoryTask    = "task"
	CategoryMessage = "message"
	CategoryMemory  = "memory"
)

// Options configures New.
type Options struct {
	Store store.Store
	Now   func() time.Time
}

// Service computes digests.
type Service struct {
	st         store.Store
	now        func() time.Time
	maxScanned int // MaxScanned; lowered by tests
}

// New returns a digest service over o.Store.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{st: o.Store, now: o.Now, maxScanned: MaxScanned}
}

// Input selects the window and, optionally, the orchestrators.
type Input struct {
	// WindowDays is the look-back in days, 1..90; nil means 7.
	WindowDays *int
	// Orchestrators, when set, scopes the digest to these authors.
	Orchestrators []string
}

// Limits bound improvisation_digest's arguments.
type Limits struct{ WindowDays, Orchestrators vp.Limit }

// Limits are improvisation_digest's limits.
func (Input) Limits() Limits {
	return Limits{
		WindowDays:    vp.Between("windowDays", 1, MaxWindowDays),
		Orchestrators: vp.MaxItems("orchestrators", MaxOrchestrators, vp.MaxNameBytes),
	}
}

// Sample is one flagged record.
type Sample struct {
	Category     string   `json:"category"`
	ID           string   `json:"id"`
	Orchestrator string   `json:"orchestrator"`
	CreatedAt    int64    `json:"createdAt"`
	Excerpt      string   `json:"excerpt"`
	Tokens       []string `json:"tokens"`
}

// Result is a digest. Counts with no hit are omitted; samples are newest
// first, at most 50; total counts every flagged record.
type Result struct {
	WindowDays       int            `json:"windowDays"`
	Since            int64          `json:"since"`
	CountsByOrch     map[string]int `json:"countsByOrch"`
	CountsByCategory map[string]int `json:"countsByCategory"`
	Samples          []Sample       `json:"samples"`
	Total            int            `json:"total"`
	// Truncated: some category had more than 10,000 records in the window;
	// only the newest were read.
	Truncated bool `json:"truncated,omitempty"`
}

// cronRE recognises scheduled-job authors.
var cronRE = regexp.MustCompile(`(?i)^cron-`)

// excluded reports an author whose records are never flagged: the system
// (webhook ingestion, IRP missions and notices all write as it) and
// scheduled jobs.
func excluded(author string) bool {
	return strings.EqualFold(author, vp.SystemCaller) || cronRE.MatchString(author)
}

// Digest scans the window ending now.
func (s *Service) Digest(ctx context.Context, p vp.Principal, in Input) (Result, error) {
	const op = "improvisation_digest"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return Result{}, err
	}
	days := DefaultWindowDays
	if in.WindowDays != nil {
		days = *in.WindowDays
		if l := in.Limits().WindowDays; float64(days) < l.Min || float64(days) > l.Max {
			return Result{}, vp.Errorf(op, vp.KindInvalid, l.Field, "windowDays must be between %v and %v (got %d)", l.Min, l.Max, days)
		}
	}
	if l := in.Limits().Orchestrators; len(in.Orchestrators) > l.Items {
		return Result{}, vp.Errorf(op, vp.KindInvalid, l.Field, "at most %d orchestrators (got %d)", l.Items, len(in.Orchestrators))
	}
	var only map[string]bool
	for _, o := range in.Orchestrators {
		if err := vp.CheckName(op, "orchestrators", o, true); err != nil {
			return Result{}, err
		}
		if only == nil {
			only = map[string]bool{}
		}
		only[vp.NormalizeOrchestrator(o)] = true
	}
	now := s.now()
	since := now.Add(-time.Duration(days) * 24 * time.Hour)
	sc := &scan{ctx: ctx, st: s.st, max: s.maxScanned, since: since.UnixMilli(), nowMS: now.UnixMilli(), only: only, p: p,
		res: Result{WindowDays: days, Since: since.UnixMilli(), CountsByOrch: map[string]int{}, CountsByCategory: map[string]int{}}}
	if err := sc.tasks(tenant); err != nil {
		return Result{}, records.Err(op, err)
	}
	if err := sc.messages(tenant); err != nil {
		return Result{}, records.Err(op, err)
	}
	if err := sc.memories(tenant); err != nil {
		return Result{}, records.Err(op, err)
	}
	slices.SortFunc(sc.samples, newestFirst)
	sc.res.Samples = sc.samples[:min(len(sc.samples), MaxSamples)]
	if sc.res.Samples == nil {
		sc.res.Samples = []Sample{}
	}
	return sc.res, nil
}

// scan is one digest in progress.
type scan struct {
	ctx          context.Context
	st           store.Store
	max          int
	since, nowMS int64
	only         map[string]bool
	p            vp.Principal
	res          Result
	samples      []Sample
}

// consider flags one record.
func (sc *scan) consider(category, id, author string, createdAt int64, text string) {
	if createdAt < sc.since || excluded(author) || (sc.only != nil && !sc.only[author]) {
		return
	}
	toks := Flag(text)
	if len(toks) == 0 {
		return
	}
	sc.res.Total++
	sc.res.CountsByOrch[author]++
	sc.res.CountsByCategory[category]++
	sc.samples = append(sc.samples, Sample{Category: category, ID: id, Orchestrator: author, CreatedAt: createdAt,
		Excerpt: excerpt(text), Tokens: toks})
	// Keep memory bounded: only the newest samples can be returned.
	if len(sc.samples) >= 4*MaxSamples {
		slices.SortFunc(sc.samples, newestFirst)
		sc.samples = sc.samples[:MaxSamples]
	}
}

// walk reads q newest first, at most budget items, calling fn on each; it
// returns the budget left and marks the result truncated when it ran out.
func (sc *scan) walk(q store.Query, budget *int, fn func(store.Item) error) error {
	q.Reverse = true
	return records.Scan(sc.ctx, sc.st, q, func(it store.Item) (bool, error) {
		if *budget <= 0 {
			sc.res.Truncated = true
			return false, nil
		}
		*budget--
		return true, fn(it)
	})
}

// tasks: every status partition of the tenant-wide status index, whose
// sort key starts with updatedAt (≥ createdAt), bounded below by the window.
func (sc *scan) tasks(tenant string) error {
	const op = "improvisation_digest"
	budget := sc.max
	for _, status := range vp.TaskStatuses {
		q := task.Table.Query(tenant, store.GSI2, table.Values{"status": status})
		q.SKFrom = table.Millis(sc.since)
		err := sc.walk(q, &budget, func(it store.Item) error {
			t, err := records.Decode[vp.Task](op, it)
			if err != nil {
				return err
			}
			sc.consider(CategoryTask, t.ID, t.CreatedBy, t.CreationTime, joinText(t.Title, t.Description, t.CompletionNote, t.BlockedBy, t.CancelReason))
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// messages: the tenant's message index, sorted by time-ordered id.
func (sc *scan) messages(tenant string) error {
	const op = "improvisation_digest"
	budget := sc.max
	q := message.Messages.Query(tenant, store.GSI3, nil)
	q.SKFrom = vp.IDFloor("msg", time.UnixMilli(sc.since))
	return sc.walk(q, &budget, func(it store.Item) error {
		m, err := records.Decode[vp.Message](op, it)
		if err != nil {
			return err
		}
		sc.consider(CategoryMessage, m.ID, m.From, m.CreatedAt, m.Content)
		return nil
	})
}

// memories: live memories and episodes the caller may read.
func (sc *scan) memories(tenant string) error {
	const op = "improvisation_digest"
	budget := sc.max
	for _, q := range memory.LiveQueries(tenant) {
		q.SKFrom = vp.IDFloor("mem", time.UnixMilli(sc.since))
		err := sc.walk(q, &budget, func(it store.Item) error {
			m, err := records.Decode[vp.Memory](op, it)
			if err != nil {
				return err
			}
			if !m.Live(sc.nowMS) || !sc.p.CanRead(m.Namespace) {
				return nil
			}
			sc.consider(CategoryMemory, m.ID, m.CreatedBy, m.CreationTime, m.Content)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// newestFirst orders samples by creation time, then id, descending.
func newestFirst(a, b Sample) int {
	if c := cmp.Compare(b.CreatedAt, a.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

func joinText(parts ...string) string {
	var b strings.Builder
	for _, s := range parts {
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(s)
	}
	return b.String()
}

// excerpt is the start of text, whitespace collapsed, at most 200
// characters (an ellipsis marks a cut).
func excerpt(text string) string {
	s := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(s) <= MaxExcerptChars {
		return s
	}
	r := []rune(s)
	return string(r[:MaxExcerptChars-1]) + "…"
}
