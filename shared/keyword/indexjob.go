package keyword

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// indexKind is how the index job finds a kind's entities: the store key
// of a document id, and the document of a stored item.
type indexKind struct {
	key func(tenant, id string) (store.Key, bool)
	doc func(tenant string, it store.Item) (search.Doc, error)
}

func decodeDoc[T any](build func(string, T) search.Doc) func(string, store.Item) (search.Doc, error) {
	return func(tenant string, it store.Item) (search.Doc, error) {
		v, err := records.Decode[T]("keyword.index", it)
		return build(tenant, v), err
	}
}

var indexKinds = map[string]indexKind{
	KindMessage:   {plainKey(message.Key), decodeDoc(message.Doc)},
	KindTask:      {plainKey(task.Key), decodeDoc(task.Doc)},
	KindBriefing:  {plainKey(briefingKey), decodeDoc(briefing.Doc)},
	KindComponent: {component.KeyOfDoc, decodeDoc(component.Doc)},
}

// IndexJob is the handler of search.IndexTopic (wired in main:
// ob.Handle(search.IndexTopic, kw.IndexJob)). It reads each entity the job
// names back from the store by primary key and upserts its current
// document, or deletes the document of one that is gone: whatever order
// jobs run in, and however often, the index ends up saying what the store
// says. A store or index failure is retried by the outbox.
func (s *Service) IndexJob(ctx context.Context, j outbox.Job) error {
	var job search.IndexJob
	if err := json.Unmarshal(j.Payload, &job); err != nil {
		return outbox.Permanent(fmt.Errorf("keyword.IndexJob: payload: %w", err))
	}
	k, ok := indexKinds[job.Kind]
	if !ok {
		return outbox.Permanent(fmt.Errorf("keyword.IndexJob: unknown kind %q", job.Kind))
	}
	if s.idx == nil {
		return vp.E("keyword.IndexJob", vp.KindUnavailable, "", "no search index in this process")
	}
	var docs []search.Doc
	var gone []string
	for _, id := range job.IDs {
		key, ok := k.key(j.Tenant, id)
		if !ok {
			gone = append(gone, id) // not a document id of the kind: nothing to keep
			continue
		}
		it, err := s.st.Get(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			gone = append(gone, id)
			continue
		}
		if err != nil {
			return vp.Wrap("keyword.IndexJob", vp.KindOf(err), err)
		}
		d, err := k.doc(j.Tenant, it)
		if err != nil {
			return outbox.Permanent(err)
		}
		docs = append(docs, d)
	}
	if len(docs) > 0 {
		if err := s.idx.Upsert(ctx, docs...); err != nil {
			return err
		}
	}
	if len(gone) > 0 {
		if err := s.idx.Delete(ctx, indexPartition(j.Tenant, job.Kind), gone...); err != nil {
			return err
		}
	}
	return nil
}
