package memory_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func episode(ns, by, insight, severity string) memory.EpisodeInput {
	return memory.EpisodeInput{Namespace: ns, CreatedBy: by, Episode: vp.Episode{
		Context: "Deploying schema changes", Goal: "Add a vector index", Action: "Ran the deploy after editing the schema",
		Outcome: "The deploy failed", Insight: insight, Severity: severity,
	}}
}

func TestEpisodes(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		tau := as("acme", "tau", "pi")
		r, err := e.svc.StoreEpisode(ctx(), tau, episode("orchestrator/tau", "", "Vector indexes must ship with their embedding field.", "major"))
		if err != nil {
			t.Fatal(err)
		}
		ep, err := e.svc.GetEpisode(ctx(), tau, r.MemoryID)
		if err != nil {
			t.Fatal(err)
		}
		if ep.Type != "episode" || ep.CreatedBy != "tau" || ep.Episode == nil || ep.Episode.Severity != "high" || ep.Content == "" {
			t.Fatalf("episode %+v (%+v)", ep, ep.Episode)
		}
		// minor means low; the API reference's values pass as they are.
		for sev, want := range map[string]string{"minor": "low", "Major": "high", "critical": "critical", "medium": "medium", "low": "low"} {
			r, err := e.svc.StoreEpisode(ctx(), tau, episode("orchestrator/tau", "", "sev "+sev, sev))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := e.svc.GetEpisode(ctx(), tau, r.MemoryID); got.Episode.Severity != want {
				t.Fatalf("severity %q stored as %q, want %q", sev, got.Episode.Severity, want)
			}
		}
		_, err = e.svc.StoreEpisode(ctx(), tau, episode("orchestrator/tau", "", "x", "severe"))
		wantKind(t, err, vp.KindInvalid, "low, medium, high, critical")
		bad := episode("orchestrator/tau", "", "x", "minor")
		bad.Goal = ""
		_, err = e.svc.StoreEpisode(ctx(), tau, bad)
		wantKind(t, err, vp.KindInvalid, "goal")
		_, err = e.svc.StoreEpisode(ctx(), tau, episode("orchestrator/tau", "sigma", "x", "minor"))
		wantKind(t, err, vp.KindForbidden, "createdBy")

		note := e.store(tau, "orchestrator/tau", "note", "Deploying schema changes needs a vector index review.")
		_, err = e.svc.GetEpisode(ctx(), tau, note)
		wantKind(t, err, vp.KindNotFound, "not an episode")
		if r := vp.RemedyOf(err); r != memory.RemedyGetMemory {
			t.Fatalf("remedy %q, want %q (the MCP layer names get_memory)", r, memory.RemedyGetMemory)
		}

		// Keyword search sees episodes only; memory searches see them too.
		kw, err := e.svc.SearchEpisodesByKeyword(ctx(), tau, memory.SearchInput{Query: "vector index deploy schema"})
		if err != nil || kw.Count == 0 || slices.Contains(ids(kw), note) {
			t.Fatalf("search_episodes_by_keyword %v %v", ids(kw), err)
		}
		if all := e.searches(tau, "", "vector index deploy schema")["text_search"]; !slices.Contains(all, note) || !slices.Contains(all, r.MemoryID) {
			t.Fatalf("text_search %v", all)
		}
		sem, _ := e.svc.SearchEpisodesBySemantic(ctx(), tau, memory.SearchInput{Query: "embedding field vector index"})
		if sem.Count != 0 {
			t.Fatalf("semantic search before the worker: %v", ids(sem))
		}
		e.drain()
		sem, err = e.svc.SearchEpisodesBySemantic(ctx(), tau, memory.SearchInput{Query: "vector indexes must ship with their embedding field", Limit: 3})
		if err != nil || sem.Count == 0 || sem.Results[0].ID != r.MemoryID {
			t.Fatalf("search_episodes_by_semantic %v %v", ids(sem), err)
		}
		for _, h := range sem.Results {
			if h.Type != "episode" {
				t.Fatalf("a %s in the episode search", h.Type)
			}
		}
	})
}

func TestListEpisodes(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		p := as("acme", "tau", "pi")
		var all, byTau, inTau, tauInTau []string
		for i := 0; i < 45; i++ {
			ns, by := "orchestrator/tau", "tau"
			if i%3 == 1 {
				ns = "orchestrator/pi"
			}
			if i%5 == 0 {
				by = "pi"
			}
			r, err := e.svc.StoreEpisode(ctx(), p, episode(ns, by, fmt.Sprint("insight ", i), "minor"))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, r.MemoryID)
			if by == "tau" {
				byTau = append(byTau, r.MemoryID)
			}
			if ns == "orchestrator/tau" {
				inTau = append(inTau, r.MemoryID)
				if by == "tau" {
					tauInTau = append(tauInTau, r.MemoryID)
				}
			}
			e.store(p, ns, "note", "not an episode") // plain memories never show
		}
		list := func(in memory.ListEpisodesInput) func(listing.Params) (listing.Page[any], error) {
			return func(pp listing.Params) (listing.Page[any], error) {
				in.Params = pp
				return e.svc.ListEpisodes(ctx(), p, in)
			}
		}
		checkListContract(t, all, list(memory.ListEpisodesInput{}))
		for _, c := range []struct {
			in   memory.ListEpisodesInput
			want []string
		}{
			{memory.ListEpisodesInput{Orchestrator: "TAU"}, byTau},
			{memory.ListEpisodesInput{Namespace: "orchestrator/tau"}, inTau},
			{memory.ListEpisodesInput{Namespace: "orchestrator/tau", Orchestrator: "tau"}, tauInTau},
		} {
			got := pageAll(t, func(cur string) (listing.Page[any], error) {
				return list(c.in)(listing.Params{Limit: intp(7), Cursor: cur})
			})
			want := slices.Clone(c.want)
			slices.Reverse(want) // newest first
			if !slices.Equal(got, want) {
				t.Fatalf("%+v: got %d episodes, want %d in newest-first order", c.in, len(got), len(want))
			}
		}
		// Deleted and superseded episodes leave the list.
		if _, err := e.svc.SoftDeleteMemory(ctx(), p, all[44]); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.StoreMemory(ctx(), p, memory.StoreInput{Namespace: "orchestrator/tau", Type: "note", Content: "correction",
			Relations: []vp.Relation{{TargetID: all[43], Type: "updates"}}}); err != nil {
			t.Fatal(err)
		}
		got := pageAll(t, func(cur string) (listing.Page[any], error) {
			return list(memory.ListEpisodesInput{})(listing.Params{Cursor: cur})
		})
		if len(got) != 43 || slices.Contains(got, all[44]) || slices.Contains(got, all[43]) {
			t.Fatalf("after delete and supersede: %d episodes", len(got))
		}
		// A token reading only orchestrator/pi lists only those.
		piOnly := scoped("acme", "pi", []string{"orchestrator/pi"}, nil)
		got = pageAll(t, func(cur string) (listing.Page[any], error) {
			return e.svc.ListEpisodes(ctx(), piOnly, memory.ListEpisodesInput{Params: listing.Params{Cursor: cur}})
		})
		if len(got) != 14 { // 15 stored there, one superseded above
			t.Fatalf("orchestrator/pi reader lists %d episodes, want 14", len(got))
		}
		_, err := e.svc.ListEpisodes(ctx(), piOnly, memory.ListEpisodesInput{Namespace: "orchestrator/tau"})
		wantKind(t, err, vp.KindForbidden, "namespace")
		_, err = e.svc.ListEpisodes(ctx(), p, memory.ListEpisodesInput{Orchestrator: "a,b"})
		wantKind(t, err, vp.KindInvalid, "orchestrator")
	})
}
