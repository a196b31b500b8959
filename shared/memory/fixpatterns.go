package memory

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Fix patterns are shared by the whole tenant (cross-project learning: a
// bug fixed in one project is found from every other), so they have no
// namespace; any principal of the tenant may read and write them. Attempts
// live in the pattern's partition (sort key ATT#<id>), so get_fix_pattern
// is one query.

// FixPatternInput is a fix pattern to create.
type FixPatternInput struct {
	Symptom        string
	RootCause      string
	Tags           []string
	Stack          []string
	SourceProject  string
	CreatedBy      string
	Severity       string
	ValidatedFix   string
	Files          []string
	LinkedIssueIDs []string
}

// CreateResult reports a created fix pattern.
type CreateResult struct {
	PatternID    string `json:"patternId"`
	CreationTime int64  `json:"_creationTime"`
}

// CreateFixPattern stores a fix pattern; its text is searchable at once and
// its symptom is embedded by a job.
func (s *Service) CreateFixPattern(ctx context.Context, p vp.Principal, in FixPatternInput) (CreateResult, error) {
	const op = "create_fix_pattern"
	tenant, err := tenantOf(op, p)
	if err != nil {
		return CreateResult{}, err
	}
	lim := in.Limits()
	if err := lim.Symptom.Text(op, in.Symptom, true); err != nil {
		return CreateResult{}, err
	}
	if err := lim.RootCause.Text(op, in.RootCause, true); err != nil {
		return CreateResult{}, err
	}
	if err := lim.ValidatedFix.Text(op, in.ValidatedFix, false); err != nil {
		return CreateResult{}, err
	}
	if err := vp.CheckName(op, "sourceProject", in.SourceProject, true); err != nil {
		return CreateResult{}, err
	}
	for _, l := range []struct {
		lim vp.Limit
		v   []string
	}{{lim.Tags, in.Tags}, {lim.Stack, in.Stack}, {lim.Files, in.Files}, {lim.LinkedIssueIDs, in.LinkedIssueIDs}} {
		if err := l.lim.List(op, l.v); err != nil {
			return CreateResult{}, err
		}
	}
	if !slices.Contains(vp.FixSeverities, in.Severity) {
		return CreateResult{}, vp.Errorf(op, vp.KindInvalid, "severity", "%q is not a severity; use one of %s", in.Severity, strings.Join(vp.FixSeverities, ", "))
	}
	if err := vp.CheckName(op, "createdBy", in.CreatedBy, false); err != nil {
		return CreateResult{}, err
	}
	createdBy, err := p.ActAs(op, "createdBy", in.CreatedBy)
	if err != nil {
		return CreateResult{}, err
	}
	now := s.nowMS()
	f := vp.FixPattern{
		ID: s.ids.New("fix"), CreationTime: now, Symptom: in.Symptom, RootCause: in.RootCause,
		ValidatedFix: in.ValidatedFix, Files: in.Files, Tags: nonNil(in.Tags), Stack: nonNil(in.Stack),
		SourceProject: in.SourceProject, LinkedIssueIDs: in.LinkedIssueIDs, Severity: in.Severity,
		CreatedBy: createdBy, UpdatedAt: now,
	}
	if f.ValidatedFix != "" {
		f.ValidatedAt = now
	}
	it, err := fixItem(op, tenant, f)
	if err != nil {
		return CreateResult{}, err
	}
	job := s.embedJob(tenant, RefFixPattern, f.ID)
	ops := []store.Op{store.Put(it, store.IfNotExists)}
	jobOps, inTx, err := s.jobOps(job)
	if err != nil {
		return CreateResult{}, vp.Wrap(op, vp.KindInternal, err)
	}
	ops = append(ops, jobOps...)
	// Text first, then the store (see StoreMemory for why this order).
	if err := s.idx.Upsert(ctx, fixDoc(tenant, f)); err != nil {
		return CreateResult{}, vp.Wrap(op, vp.KindInternal, err)
	}
	if err := s.st.Write(ctx, ops...); err != nil {
		return CreateResult{}, records.Err(op, err)
	}
	s.afterCommit(ctx, job, inTx)
	return CreateResult{PatternID: f.ID, CreationTime: f.CreationTime}, nil
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// fixDoc indexes a pattern: the symptom as title, the rest as text.
func fixDoc(tenant string, f vp.FixPattern) search.Doc {
	parts := []string{f.RootCause, f.ValidatedFix, strings.Join(f.Tags, " "), strings.Join(f.Stack, " "),
		strings.Join(f.Files, " "), f.SourceProject}
	return search.Doc{
		Tenant: tenant, ID: f.ID, Kind: KindFixPattern, Type: f.Severity, Owner: f.CreatedBy,
		Title: f.Symptom, Text: strings.Join(parts, "\n"), CreatedAt: f.CreationTime,
	}
}

// FixPatternDetail is a pattern with its attempts, newest first.
type FixPatternDetail struct {
	vp.FixPattern
	Attempts []vp.FixAttempt `json:"attempts"`
}

// maxAttemptsShown bounds the attempts get_fix_pattern returns (attemptCount
// is the total).
const maxAttemptsShown = 200

// GetFixPattern returns a pattern and its latest attempts.
func (s *Service) GetFixPattern(ctx context.Context, p vp.Principal, id string) (FixPatternDetail, error) {
	const op = "get_fix_pattern"
	tenant, err := tenantOf(op, p)
	if err != nil {
		return FixPatternDetail{}, err
	}
	if err := checkID(op, "patternId", id); err != nil {
		return FixPatternDetail{}, err
	}
	f, _, err := get[vp.FixPattern](ctx, s, op, "patternId", "fix pattern", id, fixKey(tenant, id))
	if err != nil {
		return FixPatternDetail{}, err
	}
	q := fixAttempts.Query(tenant, store.Primary, table.Values{"fixId": id})
	q.SKPrefix, q.Reverse, q.Limit = fixAttempts.SK(store.Primary, nil), true, maxAttemptsShown
	rows, err := s.st.Query(ctx, q)
	if err != nil {
		return FixPatternDetail{}, records.Err(op, err)
	}
	d := FixPatternDetail{FixPattern: f, Attempts: make([]vp.FixAttempt, 0, len(rows))}
	for _, it := range rows {
		a, err := records.Decode[vp.FixAttempt](op, it)
		if err != nil {
			return FixPatternDetail{}, err
		}
		d.Attempts = append(d.Attempts, a)
	}
	return d, nil
}

// AttemptInput is one fix attempt.
type AttemptInput struct {
	PatternID   string
	Description string
	Worked      bool
	Why         string
	CreatedBy   string
	Commit      string
}

// AttemptResult reports add_fix_attempt.
type AttemptResult struct {
	AttemptID string `json:"attemptId"`
	PatternID string `json:"patternId"`
	// ValidatedFixSet is true when this attempt worked and became the
	// pattern's validatedFix (it had none).
	ValidatedFixSet bool `json:"validatedFixSet"`
	AttemptCount    int  `json:"attemptCount"`
}

// AddFixAttempt records an attempt and, when it worked and the pattern has
// no validated fix yet, makes its description the validated fix — in one
// transaction with the pattern's attempt count.
func (s *Service) AddFixAttempt(ctx context.Context, p vp.Principal, in AttemptInput) (AttemptResult, error) {
	const op = "add_fix_attempt"
	tenant, err := tenantOf(op, p)
	if err != nil {
		return AttemptResult{}, err
	}
	if err := checkID(op, "patternId", in.PatternID); err != nil {
		return AttemptResult{}, err
	}
	lim := in.Limits()
	if err := lim.Description.Text(op, in.Description, true); err != nil {
		return AttemptResult{}, err
	}
	if err := lim.Why.Text(op, in.Why, true); err != nil {
		return AttemptResult{}, err
	}
	if err := lim.Commit.Text(op, in.Commit, false); err != nil {
		return AttemptResult{}, err
	}
	if err := vp.CheckName(op, "createdBy", in.CreatedBy, false); err != nil {
		return AttemptResult{}, err
	}
	createdBy, err := p.ActAs(op, "createdBy", in.CreatedBy)
	if err != nil {
		return AttemptResult{}, err
	}
	a := vp.FixAttempt{
		ID: s.ids.New("fxa"), CreationTime: s.nowMS(), PatternID: in.PatternID, Description: in.Description,
		Commit: in.Commit, Worked: in.Worked, Why: in.Why, CreatedBy: createdBy,
	}
	ai, err := attemptItem(op, tenant, a)
	if err != nil {
		return AttemptResult{}, err
	}
	var f vp.FixPattern
	var set bool
	err = table.Retry(ctx, op, "patternId", in.PatternID, func() error {
		var it store.Item
		var err error
		f, it, err = get[vp.FixPattern](ctx, s, op, "patternId", "fix pattern", in.PatternID, fixKey(tenant, in.PatternID))
		if err != nil {
			return err
		}
		f.AttemptCount++
		f.UpdatedAt = a.CreationTime
		set = in.Worked && f.ValidatedFix == ""
		if set {
			f.ValidatedFix, f.ValidatedAt = in.Description, a.CreationTime
			if err := s.idx.Upsert(ctx, fixDoc(tenant, f)); err != nil {
				return vp.Wrap(op, vp.KindInternal, err)
			}
		}
		next, err := fixItem(op, tenant, f)
		if err != nil {
			return err
		}
		return s.st.Write(ctx, store.Put(next, store.IfVersion(it.Version)), store.Put(ai, store.IfNotExists))
	})
	if err != nil {
		return AttemptResult{}, err
	}
	return AttemptResult{AttemptID: a.ID, PatternID: f.ID, ValidatedFixSet: set, AttemptCount: f.AttemptCount}, nil
}

// ValidateFix sets (or replaces) a pattern's validated fix.
func (s *Service) ValidateFix(ctx context.Context, p vp.Principal, id, fix string) (vp.FixPattern, error) {
	const op = "validate_fix"
	tenant, err := tenantOf(op, p)
	if err != nil {
		return vp.FixPattern{}, err
	}
	if err := checkID(op, "patternId", id); err != nil {
		return vp.FixPattern{}, err
	}
	if err := ValidateFixLimit().Text(op, fix, true); err != nil {
		return vp.FixPattern{}, err
	}
	var f vp.FixPattern
	err = table.Retry(ctx, op, "patternId", id, func() error {
		var it store.Item
		var err error
		f, it, err = get[vp.FixPattern](ctx, s, op, "patternId", "fix pattern", id, fixKey(tenant, id))
		if err != nil {
			return err
		}
		now := s.nowMS()
		f.ValidatedFix, f.ValidatedAt, f.UpdatedAt = fix, now, now
		next, err := fixItem(op, tenant, f)
		if err != nil {
			return err
		}
		if err := s.idx.Upsert(ctx, fixDoc(tenant, f)); err != nil {
			return vp.Wrap(op, vp.KindInternal, err)
		}
		return s.st.Write(ctx, store.Put(next, store.IfVersion(it.Version)))
	})
	if err != nil {
		return vp.FixPattern{}, err
	}
	return f, nil
}

// FixSearchInput is search_fix_patterns' query.
type FixSearchInput struct {
	Query string
	Limit int
}

// FixHit is a pattern with its similarity score.
type FixHit struct {
	vp.FixPattern
	Score float64 `json:"score"`
}

// FixSearchResult is search_fix_patterns' result, best first.
type FixSearchResult struct {
	Results []FixHit `json:"results"`
	Count   int      `json:"count"`
}

// SearchFixPatterns ranks the tenant's patterns (all projects) by semantic
// similarity of their symptom to the query.
func (s *Service) SearchFixPatterns(ctx context.Context, p vp.Principal, in FixSearchInput) (FixSearchResult, error) {
	const op = "search_fix_patterns"
	tenant, err := tenantOf(op, p)
	if err != nil {
		return FixSearchResult{}, err
	}
	if err := checkQuery(op, in.Query); err != nil {
		return FixSearchResult{}, err
	}
	limit := clampSearchLimit(in.Limit)
	f := search.Filter{Tenant: tenant, Kinds: []string{KindFixPattern}, NowMS: s.nowMS()}
	var qv *search.Vector
	hits, err := s.rank(ctx, op, in.Query, &qv, f, modeVector, min(limit*overFetch, maxFetch))
	if err != nil {
		return FixSearchResult{}, err
	}
	got, err := hydrate(ctx, s, tenant, hits, limit, fixKey, func(vp.FixPattern) bool { return true })
	if err != nil {
		return FixSearchResult{}, records.Err(op, err)
	}
	res := FixSearchResult{Results: make([]FixHit, 0, len(got))}
	for _, g := range got {
		res.Results = append(res.Results, FixHit{FixPattern: g.v, Score: g.score})
	}
	res.Count = len(res.Results)
	return res, nil
}

// ListFixPatternsInput filters list_fix_patterns.
type ListFixPatternsInput struct {
	Project string
	Params  listing.Params
}

var fixLiteKeys = []string{"symptom", "severity", "sourceProject"}

// ListFixPatterns lists patterns newest first, optionally of one source
// project.
func (s *Service) ListFixPatterns(ctx context.Context, p vp.Principal, in ListFixPatternsInput) (listing.Page[any], error) {
	const op = "list_fix_patterns"
	tenant, err := tenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	if err := vp.CheckName(op, "project", in.Project, false); err != nil {
		return listing.Page[any]{}, err
	}
	q := fixPatterns.Query(tenant, store.GSI2, nil)
	if in.Project != "" {
		q = fixPatterns.Query(tenant, store.GSI1, table.Values{"project": in.Project})
	}
	q.Reverse = true
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op + "\x00" + in.Project, Params: in.Params, Query: q, LiteKeys: fixLiteKeys,
	}, func(it store.Item) (vp.FixPattern, bool, error) {
		f, err := records.Decode[vp.FixPattern](op, it)
		return f, err == nil, err
	})
}

// issueRef is "owner/repo#NNN", the form fix patterns name issues by.
var issueRef = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}#[1-9][0-9]{0,9}$`)

// LinkIssue adds an issue ("owner/repo#NNN") to a pattern's
// linkedIssueIds; linking one already there changes nothing.
func (s *Service) LinkIssue(ctx context.Context, p vp.Principal, patternID, issueID string) (vp.FixPattern, error) {
	const op = "link_issue_to_pattern"
	tenant, err := tenantOf(op, p)
	if err != nil {
		return vp.FixPattern{}, err
	}
	if err := checkID(op, "patternId", patternID); err != nil {
		return vp.FixPattern{}, err
	}
	if !issueRef.MatchString(issueID) {
		return vp.FixPattern{}, vp.Errorf(op, vp.KindInvalid, "issueId", "must be owner/repo#NNN, e.g. acme/api#282; got %q", issueID)
	}
	var f vp.FixPattern
	err = table.Retry(ctx, op, "patternId", patternID, func() error {
		var it store.Item
		var err error
		f, it, err = get[vp.FixPattern](ctx, s, op, "patternId", "fix pattern", patternID, fixKey(tenant, patternID))
		if err != nil || slices.ContainsFunc(f.LinkedIssueIDs, func(id string) bool { return strings.EqualFold(id, issueID) }) {
			return err
		}
		if len(f.LinkedIssueIDs) >= vp.MaxFixListItems {
			return vp.Errorf(op, vp.KindTooLarge, "issueId", "pattern %s already links %d issues; the limit is %d", patternID, len(f.LinkedIssueIDs), vp.MaxFixListItems)
		}
		f.LinkedIssueIDs = append(f.LinkedIssueIDs, issueID)
		f.UpdatedAt = s.nowMS()
		next, err := fixItem(op, tenant, f)
		if err != nil {
			return err
		}
		return s.st.Write(ctx, store.Put(next, store.IfVersion(it.Version)))
	})
	if err != nil {
		return vp.FixPattern{}, err
	}
	return f, nil
}
