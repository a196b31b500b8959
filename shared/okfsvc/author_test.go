package okfsvc_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// seedBy writes into ns, as orchestrator who, a memory, a briefing note it
// then edits (createdBy and updatedBy) and a task assigned to pi.
func (e *env) seedBy(t *testing.T, ns, who string) {
	t.Helper()
	p := domaintest.As(tenant, who)
	if _, err := e.mem.StoreMemory(ctx, p, memory.StoreInput{Namespace: ns, Type: "fact", Content: "written by " + who}); err != nil {
		t.Fatal(err)
	}
	n, err := e.notes.CreateBriefingNote(ctx, p, briefing.Input{Title: "Plan", Topic: ns, Participants: []string{"pi"}, Content: "we met"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.notes.UpdateBriefingNote(ctx, p, briefingTitle(n.ID, "Plan, edited")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.tasks.CreateTask(ctx, p, task.CreateTaskInput{Title: "Do it", Project: ns, AssignedTo: "pi", Priority: "high"}); err != nil {
		t.Fatal(err)
	}
}

// authors returns the author fields (createdBy, updatedBy) of every
// record of bundle b, as "kind id field=value".
func authors(t *testing.T, b *okf.Bundle) []string {
	t.Helper()
	var out []string
	add := func(kind string, v any) {
		raw, _ := json.Marshal(v)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"createdBy", "updatedBy"} {
			if s, ok := m[f].(string); ok && s != "" {
				out = append(out, fmt.Sprintf("%s %v %s=%s", kind, m["_id"], f, s))
			}
		}
	}
	for _, m := range b.Memories {
		add(okf.KindMemory, m)
	}
	for _, n := range b.Notes {
		add(okf.KindBriefing, n)
	}
	for _, tk := range b.Tasks {
		add(okf.KindTask, tk)
	}
	return out
}

// A bundle whose records lead wrote, imported by an agent whose token may
// not act as lead, yields records authored by that agent; the provenance
// keeps lead, and dry-run says so beforehand. On every replace path too.
func TestImportDoesNotForgeAuthorship(t *testing.T) {
	eachPath(t, false, func(t *testing.T, e *env) {
		e.seedBy(t, "team/src", "lead")
		data := e.export(t, "team/src")
		if a := authors(t, e.bundle(t, "team/src")); len(a) != 4 || !strings.Contains(strings.Join(a, "\n"), "=lead") {
			t.Fatalf("the source is not lead's: %v", a)
		}
		agent := vp.Principal{Tenant: tenant, Orchestrators: []string{"pi"}, ReadPrefixes: []string{"team"}, WritePrefixes: []string{"team"}}
		if agent.CanActAs("lead") {
			t.Fatal("the agent must not be able to act as lead")
		}

		dry, err := e.svc.Import(ctx, agent, "team/dst", okfsvc.ModeDryRun, data)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(dry)
		if !strings.Contains(string(raw), `"lead"`) || !strings.Contains(string(raw), `"pi"`) {
			t.Fatalf("dry-run does not say that lead's records would be authored by pi: %s", raw)
		}

		for _, mode := range []string{okfsvc.ModeMerge, okfsvc.ModeReplace} {
			ns := "team/" + mode
			if _, err := e.svc.Import(ctx, agent, ns, mode, data); err != nil {
				t.Fatal(err)
			}
			got := authors(t, e.bundle(t, ns))
			if len(got) != 4 {
				t.Fatalf("%s: author fields %v, want 4", mode, got)
			}
			for _, a := range got {
				if !strings.HasSuffix(a, "=pi") {
					t.Errorf("%s: imported record %s: authored by someone the importer may not act as", mode, a)
				}
			}
			// The provenance of each record keeps its bundle author.
			items, err := e.st.Query(ctx, store.Query{PK: "T#" + tenant + "#OKFPROV#" + ns, Limit: 100})
			if err != nil || len(items) != 3 {
				t.Fatalf("%s: %d provenance records, %v", mode, len(items), err)
			}
			for _, it := range items {
				if !strings.Contains(string(it.Data), `"lead"`) {
					t.Errorf("%s: provenance %s lost the bundle's author: %s", mode, it.Key.SK, it.Data)
				}
			}
		}
	})
}

// Who authors the imported records: the bundle's author when the token
// may act as them; else the token's own orchestrator (its first when it
// has several); a token that names none may not import records written
// by someone else.
func TestImportAuthorIsOneTheTokenMayActAs(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	e.seedBy(t, "team/src", "lead")
	data := e.export(t, "team/src")
	cases := []struct {
		name string
		p    vp.Principal
		want string
	}{
		{"may act as lead", domaintest.As(tenant, "pi", "lead"), "lead"},
		{"any orchestrator", domaintest.As(tenant, "*"), "lead"},
		{"admin", domaintest.Admin(tenant), "lead"},
		{"several, not lead", domaintest.As(tenant, "sigma", "pi"), "sigma"},
	}
	for i, c := range cases {
		ns := fmt.Sprintf("team/c%d", i)
		if _, err := e.svc.Import(ctx, c.p, ns, okfsvc.ModeMerge, data); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, a := range authors(t, e.bundle(t, ns)) {
			if !strings.HasSuffix(a, "="+c.want) {
				t.Errorf("%s: %s, want %s", c.name, a, c.want)
			}
		}
	}
	_, err := e.svc.Import(ctx, domaintest.As(tenant), "team/none", okfsvc.ModeDryRun, data)
	domaintest.WantKind(t, err, vp.KindForbidden, "createdBy")
}
