package memory_test

import (
	"fmt"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/embed/concept"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
)

// TestSwitchingHashAndConceptReembeds: the embedded server's default moved
// from local-hash-v1 to local-concept-v1, and either can be chosen by
// name. Each switch, either way, re-embeds every memory once, and recall
// finds them with the new vectors only.
func TestSwitchingHashAndConceptReembeds(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		alice := as("acme", "alice")
		const n = 25
		var mems []string
		for i := range n {
			mems = append(mems, e.store(alice, "global", "fact", fmt.Sprintf("Service %d listens on port %d", i, 9000+i)))
		}
		e.drain()
		used := map[string]bool{e.emb.Name(): true}
		for _, next := range []embed.Embedder{concept.New(concept.Options{}), embedlocal.New(embedlocal.Options{}), concept.New(concept.Options{})} {
			before := e.emb.Name()
			e.rewire(next, storequeue.Options{})
			if e.emb.Name() == before {
				t.Fatalf("switching from %s to itself", before)
			}
			// The first vector search notices the change and enqueues the
			// re-embedding; until it ran, no vector of another embedder is
			// compared. (An embedder used before finds the vectors it made
			// then: the index keeps each embedder's vectors apart.)
			if r, _ := e.svc.Recall(ctx(), alice, memory.SearchInput{Query: "which port does service 7 listen on"}); !used[next.Name()] && r.Count != 0 {
				t.Fatalf("%s -> %s: recall compared vectors of another embedder: %v", before, next.Name(), ids(r))
			}
			used[next.Name()] = true
			e.drain()
			reembedded := 0
			for _, id := range mems {
				if m, _ := e.svc.GetMemory(ctx(), alice, id); m.Embedder == next.Name() {
					reembedded++
				}
			}
			if reembedded != n {
				t.Fatalf("%s -> %s: %d of %d memories re-embedded", before, next.Name(), reembedded, n)
			}
			r, err := e.svc.Recall(ctx(), alice, memory.SearchInput{Query: "Service 7 listens on port 9007", Limit: 3})
			if err != nil || r.Count == 0 || r.Results[0].ID != mems[7] {
				t.Fatalf("%s: recall after re-embedding: %v %v", next.Name(), ids(r), err)
			}
			if k, err := e.svc.ReembedAll(ctx(), "acme"); err != nil || k != 0 {
				t.Fatalf("%s: ReembedAll after re-embedding enqueued %d (%v), want 0", next.Name(), k, err)
			}
		}
	})
}
