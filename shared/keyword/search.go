package keyword

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Keyword search over messages, tasks, briefing notes and components.
//
// Each write commits an index job with its change (search.Writer) and runs
// it right after the commit, so a search right after the write finds it;
// the job (IndexJob, indexjob.go) reads the entity back and indexes it
// through one document builder per kind (message.Doc, task.Doc,
// briefing.Doc, component.Doc), and the outbox retries it when the index
// fails or the process dies first. The store stays the source of truth: a
// search reads every hit back by primary key, drops what is gone and
// checks the filters again on the stored entity, so a stale document can
// cost a hit but never returns a row that no longer matches.
//
// Each kind has its own index partition, "<tenant>/<kind>" (a tenant id
// cannot contain "/", so no partition is another tenant's): BM25
// statistics then describe one corpus (chat volume does not skew memory
// or task ranking) and a query only scores its own kind's postings.

// Kinds of the coordination documents (search.Doc.Kind).
const (
	KindMessage   = message.Kind
	KindTask      = task.Kind
	KindBriefing  = briefing.Kind
	KindComponent = component.Kind
)

// Keyword search limits.
const (
	DefaultKeywordLimit = 10
	MaxKeywordLimit     = 50
	keywordOverFetch    = 3
	keywordMaxFetch     = 1000
)

// indexPartition is the search tenant of a kind's documents.
func indexPartition(tenant, kind string) string { return tenant + "/" + kind }

// IsKeywordPartition reports whether a search tenant is one of the keyword
// partitions above rather than a tenant's memories. The embedded binary
// warms only memories at start: a message partition can hold most of the
// index (100k messages: 2.8 s of CPU and ~200 MB per process), and keyword
// search loads it on first use.
func IsKeywordPartition(searchTenant string) bool { return strings.Contains(searchTenant, "/") }

// ---- searches

// KeywordResult is what the keyword searches return, best first.
type KeywordResult[T any] struct {
	Items []T `json:"items"`
	Count int `json:"count"`
}

// MessageHit is a message with its BM25 score.
type MessageHit struct {
	vp.Message
	Score float64 `json:"score"`
}

// TaskHit is a task with its BM25 score.
type TaskHit struct {
	vp.Task
	Score float64 `json:"score"`
}

// BriefingHit is a briefing note with its BM25 score.
type BriefingHit struct {
	vp.BriefingNote
	Score float64 `json:"score"`
}

// ComponentHit is a component with its BM25 score.
type ComponentHit struct {
	vp.Component
	Score float64 `json:"score"`
}

// limitLimit bounds the limit of every keyword search: out of range it is
// clamped, not refused. The other arguments are queries, names and
// texts bounded as everywhere (vp.CheckText, vp.CheckName).
func limitLimit() vp.Limit { return vp.Between("limit", 1, MaxKeywordLimit) }

// Limits are search_messages_by_keyword's limits.
func (SearchMessagesInput) Limits() vp.Limit { return limitLimit() }

// Limits are search_tasks_by_keyword's limits.
func (SearchTasksInput) Limits() vp.Limit { return limitLimit() }

// Limits are search_briefing_notes_by_keyword's limits.
func (SearchBriefingsInput) Limits() vp.Limit { return limitLimit() }

// Limits are search_components' limits.
func (SearchComponentsInput) Limits() vp.Limit { return limitLimit() }

// SearchMessagesInput is search_messages_by_keyword's arguments.
type SearchMessagesInput struct {
	Query   string
	From    string
	Channel string
	Limit   int
}

// SearchMessages is BM25 search over message content, optionally from one
// sender or on one channel (as list_messages spells it).
func (s *Service) SearchMessages(ctx context.Context, p vp.Principal, in SearchMessagesInput) (KeywordResult[MessageHit], error) {
	const op = "search_messages_by_keyword"
	if err := vp.CheckName(op, "from", in.From, false); err != nil {
		return KeywordResult[MessageHit]{}, err
	}
	if err := vp.CheckText(op, "channel", in.Channel, vp.MaxChannelBytes, false); err != nil {
		return KeywordResult[MessageHit]{}, err
	}
	from, channel := vp.NormalizeOrchestrator(in.From), message.NormalizeChannel(in.Channel)
	f := search.Filter{Owner: from}
	if channel != "" {
		f.Types = []string{channel}
	}
	return keywordSearch(ctx, s, p, keywordQuery[vp.Message, MessageHit]{
		op: op, kind: KindMessage, query: in.Query, limit: in.Limit, filter: f, key: plainKey(message.Key),
		keep: func(m vp.Message) bool {
			return (from == "" || m.From == from) && (channel == "" || m.Channel == channel)
		},
		hit: func(m vp.Message, sc float64) MessageHit { return MessageHit{m, sc} },
	})
}

// SearchTasksInput is search_tasks_by_keyword's arguments.
type SearchTasksInput struct {
	Query      string
	Status     any // a status, an array of them, or open|active|all
	AssignedTo string
	Project    string
	MissionID  string
	Limit      int
}

// SearchTasks is BM25 search over task titles (weighted) and descriptions.
func (s *Service) SearchTasks(ctx context.Context, p vp.Principal, in SearchTasksInput) (KeywordResult[TaskHit], error) {
	const op = "search_tasks_by_keyword"
	var statuses []string
	if in.Status != nil {
		var err error
		if statuses, err = vp.ParseStatuses(op, in.Status, vp.TaskStatuses, task.StatusAliases()); err != nil {
			return KeywordResult[TaskHit]{}, err
		}
	}
	var errs vp.Errs
	errs.Add(vp.CheckName(op, "assignedTo", in.AssignedTo, false))
	errs.Add(vp.CheckText(op, "project", in.Project, vp.MaxShortTextBytes, false))
	errs.Add(vp.CheckName(op, "missionId", in.MissionID, false))
	if err := errs.First(); err != nil {
		return KeywordResult[TaskHit]{}, err
	}
	assignee := vp.NormalizeOrchestrator(in.AssignedTo)
	f := search.Filter{Types: statuses, Owner: assignee}
	// A namespace pattern ending in "/" is a prefix: such a project is
	// matched on the stored task only.
	if in.Project != "" && !strings.HasSuffix(in.Project, "/") {
		f.Namespaces = []string{in.Project}
	}
	return keywordSearch(ctx, s, p, keywordQuery[vp.Task, TaskHit]{
		op: op, kind: KindTask, query: in.Query, limit: in.Limit, filter: f, key: plainKey(task.Key),
		keep: func(t vp.Task) bool {
			return (statuses == nil || slices.Contains(statuses, t.Status)) && (assignee == "" || t.AssignedTo == assignee) &&
				(in.Project == "" || t.Project == in.Project) && (in.MissionID == "" || t.MissionID == in.MissionID)
		},
		hit: func(t vp.Task, sc float64) TaskHit { return TaskHit{t, sc} },
	})
}

// SearchBriefingsInput is search_briefing_notes_by_keyword's arguments.
type SearchBriefingsInput struct {
	Query string
	Topic string
	Limit int
}

// SearchBriefingNotes is BM25 search over briefing titles (weighted),
// content and decisions, optionally of one topic.
func (s *Service) SearchBriefingNotes(ctx context.Context, p vp.Principal, in SearchBriefingsInput) (KeywordResult[BriefingHit], error) {
	const op = "search_briefing_notes_by_keyword"
	topic := strings.TrimSpace(in.Topic)
	if err := vp.CheckKeyText(op, "topic", topic, vp.MaxShortTextBytes, false); err != nil {
		return KeywordResult[BriefingHit]{}, err
	}
	var f search.Filter
	if topic != "" {
		f.Types = []string{topic}
	}
	return keywordSearch(ctx, s, p, keywordQuery[vp.BriefingNote, BriefingHit]{
		op: op, kind: KindBriefing, query: in.Query, limit: in.Limit, filter: f, key: plainKey(briefingKey),
		keep: func(n vp.BriefingNote) bool { return topic == "" || n.Topic == topic },
		hit:  func(n vp.BriefingNote, sc float64) BriefingHit { return BriefingHit{n, sc} },
	})
}

// SearchComponentsInput is search_components' arguments.
type SearchComponentsInput struct {
	Query string
	Type  string
	Limit int
}

// SearchComponents is BM25 search over component names (weighted), teams
// and front-matter descriptions, optionally of one type.
func (s *Service) SearchComponents(ctx context.Context, p vp.Principal, in SearchComponentsInput) (KeywordResult[ComponentHit], error) {
	const op = "search_components"
	var f search.Filter
	if in.Type != "" {
		if err := component.CheckType(op, in.Type); err != nil {
			return KeywordResult[ComponentHit]{}, err
		}
		f.Types = []string{in.Type}
	}
	return keywordSearch(ctx, s, p, keywordQuery[vp.Component, ComponentHit]{
		op: op, kind: KindComponent, query: in.Query, limit: in.Limit, filter: f, key: component.KeyOfDoc,
		keep: func(c vp.Component) bool { return in.Type == "" || c.Type == in.Type },
		hit:  func(c vp.Component, sc float64) ComponentHit { return ComponentHit{c, sc} },
	})
}

// keywordQuery describes one keyword search: the index filter (tenant and
// kind are added), how a hit's id becomes a store key, the same filter
// applied to the stored entity, and the result row.
type keywordQuery[T, H any] struct {
	op, kind, query string
	limit           int
	filter          search.Filter
	key             func(tenant, id string) (store.Key, bool)
	keep            func(T) bool
	hit             func(T, float64) H
}

func plainKey(k func(tenant, id string) store.Key) func(string, string) (store.Key, bool) {
	return func(tenant, id string) (store.Key, bool) { return k(tenant, id), true }
}

func briefingKey(tenant, id string) store.Key {
	return briefing.Notes.KeyOf(tenant, table.Values{"id": id})
}

// keywordSearch ranks with BM25 and hydrates: each hit is read back from
// the store, in rank order, and kept only if it still exists and passes
// keep. When hits are dropped it asks the index for more (up to
// keywordMaxFetch candidates).
func keywordSearch[T, H any](ctx context.Context, s *Service, p vp.Principal, q keywordQuery[T, H]) (KeywordResult[H], error) {
	tenant, err := vp.TenantOf(q.op, p)
	if err != nil {
		return KeywordResult[H]{}, err
	}
	if err := vp.CheckText(q.op, "query", q.query, vp.MaxQueryBytes, true); err != nil {
		return KeywordResult[H]{}, err
	}
	if s.idx == nil {
		return KeywordResult[H]{}, vp.E(q.op, vp.KindConflict, "", "search is not configured on this server (no search index); use the list_* tools instead")
	}
	// A tenant no backfill has reached yet (one only the master token
	// names, say) is indexed on its first searches, within a budget each;
	// afterwards this is a map lookup. A failure or an unfinished backfill
	// costs completeness, not the search.
	bctx, cancel := context.WithTimeout(ctx, s.searchBackfill)
	_, err = s.EnsureIndexed(bctx, tenant)
	cancel()
	if err != nil {
		s.log.WarnContext(ctx, "backfilling the keyword index before a search", "tenant", tenant, "err", err)
	}
	limit := q.limit
	switch {
	case limit <= 0:
		limit = DefaultKeywordLimit
	case float64(limit) > limitLimit().Max:
		limit = int(limitLimit().Max)
	}
	f := q.filter
	f.Tenant, f.Kinds = indexPartition(tenant, q.kind), []string{q.kind}
	res := KeywordResult[H]{Items: []H{}}
	seen := map[string]bool{}
	for fetch := limit * keywordOverFetch; ; fetch *= 4 {
		k := min(fetch, keywordMaxFetch)
		hits, err := s.idx.Text(ctx, q.query, f, k)
		if errors.Is(err, search.ErrEmptyQuery) {
			return KeywordResult[H]{}, vp.Errorf(q.op, vp.KindInvalid, "query", "%q has no searchable words; search for words", q.query)
		}
		if err != nil {
			return KeywordResult[H]{}, vp.Wrap(q.op, vp.KindInternal, err)
		}
		fresh := hits[:0:0]
		for _, h := range hits {
			if !seen[h.ID] {
				seen[h.ID] = true
				fresh = append(fresh, h)
			}
		}
		if err := hydrateHits(ctx, s, tenant, fresh, limit, q, &res); err != nil {
			return KeywordResult[H]{}, records.Err(q.op, err)
		}
		if len(res.Items) >= limit || len(hits) < k || k >= keywordMaxFetch {
			break
		}
	}
	res.Count = len(res.Items)
	return res, nil
}

// hydrateHits reads hits back in concurrent rounds of about the number of
// rows still wanted, appending those keep accepts to res in rank order.
func hydrateHits[T, H any](ctx context.Context, s *Service, tenant string, hits []search.Hit, want int, q keywordQuery[T, H], res *KeywordResult[H]) error {
	for len(hits) > 0 && len(res.Items) < want {
		n := min(len(hits), want-len(res.Items)+2)
		round := hits[:n]
		hits = hits[n:]
		vals := make([]*T, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for i, h := range round {
			k, ok := q.key(tenant, h.ID)
			if !ok {
				continue // not a document this search wrote
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				it, err := s.st.Get(ctx, k)
				if errors.Is(err, store.ErrNotFound) {
					return // deleted; the index lags behind
				}
				if err != nil {
					errs[i] = err
					return
				}
				v, err := records.Decode[T](q.op, it)
				if err != nil {
					errs[i] = err
					return
				}
				vals[i] = &v
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for i, h := range round {
			if vals[i] != nil && q.keep(*vals[i]) && len(res.Items) < want {
				res.Items = append(res.Items, q.hit(*vals[i], h.Score))
			}
		}
	}
	return nil
}
