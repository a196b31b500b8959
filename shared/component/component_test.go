package component_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/listing/listingtest"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestComponentLifecycle(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *component.Service) {
		carol, dave := as("acme", "carol"), as("acme", "dave")
		c, err := svc.RegisterComponent(ctx(), carol, component.RegisterInput{Name: "dev-convex-expert", Type: "agent", Team: "development",
			Content: "---\nname: dev\n---\nv1", Version: "1.0.0", Project: "vantage-peers"})
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte("---\nname: dev\n---\nv1"))
		if c.CreatedBy != "carol" || c.Revision != 1 || c.ContentHash != hex.EncodeToString(sum[:]) || c.ID == "" {
			t.Fatalf("registered %+v", c)
		}
		got, err := svc.GetComponent(ctx(), dave, "dev-convex-expert", "agent", 0) // everyone in the tenant reads
		if err != nil || got.Content != c.Content || got.Team != "development" {
			t.Fatalf("get: %+v %v", got, err)
		}
		_, err = svc.RegisterComponent(ctx(), dave, component.RegisterInput{Name: "dev-convex-expert", Type: "agent", Content: "other"})
		wantKind(t, err, vp.KindConflict, "update_component")
		if _, err := svc.RegisterComponent(ctx(), dave, component.RegisterInput{Name: "dev-convex-expert", Type: "skill", Content: "a skill"}); err != nil {
			t.Fatalf("same name, other type: %v", err)
		}
		// Only the creator or system changes it.
		_, err = svc.UpdateComponent(ctx(), dave, component.Update{Name: "dev-convex-expert", Type: "agent", Content: strp("mine now")})
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		_, err = svc.DeleteComponent(ctx(), dave, "dev-convex-expert", "agent", "")
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		up, err := svc.UpdateComponent(ctx(), carol, component.Update{Name: "dev-convex-expert", Type: "agent", Content: strp("v2"), Version: strp("2.0.0")})
		if err != nil {
			t.Fatal(err)
		}
		if up.Revision != 2 || up.Content != "v2" || up.Version != "2.0.0" || up.Team != "development" || up.UpdatedBy != "carol" || up.ID != c.ID {
			t.Fatalf("update: %+v", up)
		}
		same, err := svc.UpdateComponent(ctx(), carol, component.Update{Name: "dev-convex-expert", Type: "agent", Content: strp("v2")})
		if err != nil || same.Revision != 2 {
			t.Fatalf("an update that changes nothing made revision %d (%v)", same.Revision, err)
		}
		old, err := svc.GetComponent(ctx(), dave, "dev-convex-expert", "agent", 1)
		if err != nil || old.Content != c.Content || old.Version != "1.0.0" || old.Revision != 1 || old.ContentHash != c.ContentHash {
			t.Fatalf("revision 1: %+v %v", old, err)
		}
		// History is bounded: only the last MaxComponentHistory revisions are kept.
		for i := 3; i <= vp.MaxComponentHistory+5; i++ {
			if _, err := svc.UpdateComponent(ctx(), admin("acme"), component.Update{Name: "dev-convex-expert", Type: "agent",
				CallerOrchestrator: "system", Content: strp(fmt.Sprint("v", i))}); err != nil {
				t.Fatal(err)
			}
		}
		head := vp.MaxComponentHistory + 5
		cur, _ := svc.GetComponent(ctx(), dave, "dev-convex-expert", "agent", 0)
		if cur.Revision != head || cur.Content != fmt.Sprint("v", head) || cur.UpdatedBy != "system" {
			t.Fatalf("after %d updates: %+v", head-1, cur)
		}
		_, err = svc.GetComponent(ctx(), dave, "dev-convex-expert", "agent", head-vp.MaxComponentHistory-1)
		wantKind(t, err, vp.KindNotFound, "no longer kept")
		oldest, err := svc.GetComponent(ctx(), dave, "dev-convex-expert", "agent", head-vp.MaxComponentHistory)
		if err != nil || oldest.Content != fmt.Sprint("v", head-vp.MaxComponentHistory) {
			t.Fatalf("oldest kept revision: %+v %v", oldest, err)
		}
		_, err = svc.GetComponent(ctx(), dave, "dev-convex-expert", "agent", head+1)
		wantKind(t, err, vp.KindNotFound, "revision")
		del, err := svc.DeleteComponent(ctx(), carol, "dev-convex-expert", "agent", "")
		if err != nil || !del.Deleted || del.RevisionsDeleted != vp.MaxComponentHistory {
			t.Fatalf("delete: %+v %v", del, err)
		}
		_, err = svc.GetComponent(ctx(), carol, "dev-convex-expert", "agent", 0)
		wantKind(t, err, vp.KindNotFound, "name")
		_, err = svc.DeleteComponent(ctx(), carol, "dev-convex-expert", "agent", "")
		wantKind(t, err, vp.KindNotFound, "name")
		// The name is free again and starts a fresh history.
		again, err := svc.RegisterComponent(ctx(), dave, component.RegisterInput{Name: "dev-convex-expert", Type: "agent", Content: "fresh"})
		if err != nil || again.Revision != 1 || again.ID == c.ID {
			t.Fatalf("re-register: %+v %v", again, err)
		}
		if _, err := svc.UpdateComponent(ctx(), dave, component.Update{Name: "dev-convex-expert", Type: "agent", Content: strp("fresh 2")}); err != nil {
			t.Fatal(err)
		}
		if r1, err := svc.GetComponent(ctx(), dave, "dev-convex-expert", "agent", 1); err != nil || r1.Content != "fresh" {
			t.Fatalf("fresh history: %+v %v", r1, err)
		}
		_, err = svc.GetComponent(ctx(), admin("other"), "dev-convex-expert", "agent", 0)
		wantKind(t, err, vp.KindNotFound, "name")
		_, err = svc.UpdateComponent(ctx(), admin("other"), component.Update{Name: "dev-convex-expert", Type: "agent", CallerOrchestrator: "system", Content: strp("x")})
		wantKind(t, err, vp.KindNotFound, "name")
	})
}

func TestComponentValidation(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *component.Service) {
		carol := as("acme", "carol")
		ok := component.RegisterInput{Name: "n", Type: "hook", Content: "c"}
		with := func(f func(*component.RegisterInput)) component.RegisterInput { in := ok; f(&in); return in }
		cases := []struct {
			name  string
			in    component.RegisterInput
			kind  vp.Kind
			field string
		}{
			{"unknown type", with(func(in *component.RegisterInput) { in.Type = "runbook" }), vp.KindInvalid, "agent, skill, hook, plugin"},
			{"no type", with(func(in *component.RegisterInput) { in.Type = "" }), vp.KindInvalid, "type"},
			{"no name", with(func(in *component.RegisterInput) { in.Name = " " }), vp.KindInvalid, "name"},
			{"long name", with(func(in *component.RegisterInput) { in.Name = strings.Repeat("n", vp.MaxComponentNameBytes+1) }), vp.KindTooLarge, "name"},
			{"control character in name", with(func(in *component.RegisterInput) { in.Name = "a\tb" }), vp.KindInvalid, "name"},
			{"no content", with(func(in *component.RegisterInput) { in.Content = "" }), vp.KindInvalid, "content"},
			{"oversize content", with(func(in *component.RegisterInput) { in.Content = strings.Repeat("x", vp.MaxComponentContentBytes+1) }), vp.KindTooLarge, "content"},
			{"content too large once encoded", with(func(in *component.RegisterInput) { in.Content = strings.Repeat("\x01", vp.MaxComponentContentBytes) }), vp.KindTooLarge, "content"},
			{"bad version", with(func(in *component.RegisterInput) { in.Version = "1\n2" }), vp.KindInvalid, "version"},
			{"impersonation", with(func(in *component.RegisterInput) { in.CreatedBy = "dave" }), vp.KindForbidden, "createdBy"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := svc.RegisterComponent(ctx(), carol, c.in)
				wantKind(t, err, c.kind, c.field)
			})
		}
		page, err := svc.ListComponents(ctx(), carol, component.ListInput{})
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("refused registrations stored %d components (%v)", len(page.Items), err)
		}
		if _, err := svc.RegisterComponent(ctx(), carol, ok); err != nil {
			t.Fatal(err)
		}
		_, err = svc.UpdateComponent(ctx(), carol, component.Update{Name: "n", Type: "hook"})
		wantKind(t, err, vp.KindInvalid, "nothing to update")
		_, err = svc.UpdateComponent(ctx(), carol, component.Update{Name: "n", Type: "hook", Content: strp("")})
		wantKind(t, err, vp.KindInvalid, "content")
		_, err = svc.GetComponent(ctx(), carol, "n", "hooks", 0)
		wantKind(t, err, vp.KindInvalid, "type")
		_, err = svc.GetComponent(ctx(), carol, "n", "hook", -1)
		wantKind(t, err, vp.KindInvalid, "revision")
		_, err = svc.ListComponents(ctx(), carol, component.ListInput{Type: "agents"})
		wantKind(t, err, vp.KindInvalid, "agent, skill, hook, plugin")
		// Content at the limit fits, and so does its update with the previous revision kept.
		big := strings.Repeat("x", vp.MaxComponentContentBytes)
		if _, err := svc.RegisterComponent(ctx(), carol, component.RegisterInput{Name: "big", Type: "plugin", Content: big}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.UpdateComponent(ctx(), carol, component.Update{Name: "big", Type: "plugin", Content: strp(strings.Repeat("y", vp.MaxComponentContentBytes))}); err != nil {
			t.Fatal(err)
		}
		if r1, err := svc.GetComponent(ctx(), carol, "big", "plugin", 1); err != nil || r1.Content != big {
			t.Fatalf("big revision 1: %d bytes, %v", len(r1.Content), err)
		}
	})
}

func TestComponentLists(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *component.Service) {
		const n = 45 // 15 of each of agent, skill, hook; team marketing for every 5th, development otherwise
		carol := as("acme", "carol")
		types := []string{"agent", "skill", "hook"}
		var last string
		for i := 0; i < n; i++ {
			team := "development"
			if i%5 == 0 {
				team = "marketing"
			}
			c, err := svc.RegisterComponent(ctx(), carol, component.RegisterInput{Name: fmt.Sprintf("comp-%02d", i), Type: types[i%3], Team: team,
				Content: strings.Repeat("line\n", 100)})
			if err != nil {
				t.Fatal(err)
			}
			last = c.ID
		}
		reader := as("acme", "dave")
		all := listingtest.Contract(t, n, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListComponents(ctx(), reader, component.ListInput{Params: p})
		})
		if all[0].(vp.Component).ID != last {
			t.Fatalf("not newest first")
		}
		agents := listingtest.Contract(t, 15, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListComponents(ctx(), reader, component.ListInput{Type: "agent", Params: p})
		})
		for _, a := range agents {
			if a.(vp.Component).Type != "agent" {
				t.Fatalf("type filter let through %v", a)
			}
		}
		listingtest.Contract(t, 9, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListComponents(ctx(), reader, component.ListInput{Team: "marketing", Params: p})
		})
		// development: i%5 != 0 (36 rows); of those, skills are i%3 == 1: 12.
		listingtest.Contract(t, 12, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListComponents(ctx(), reader, component.ListInput{Type: "skill", Team: "development", Params: p})
		})
		first, _ := svc.ListComponents(ctx(), reader, component.ListInput{})
		_, err := svc.ListComponents(ctx(), reader, component.ListInput{Type: "agent", Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListComponents(ctx(), admin("other"), component.ListInput{Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		lite, _ := svc.ListComponents(ctx(), reader, component.ListInput{Params: listing.Params{Fields: "lite"}})
		listingtest.LiteKeys(t, lite.Items[0], "_id", "_creationTime", "name", "type", "team")
		// Moving a component to another team moves it between team listings.
		if _, err := svc.UpdateComponent(ctx(), carol, component.Update{Name: "comp-00", Type: "agent", Team: strp("ops")}); err != nil {
			t.Fatal(err)
		}
		ops, _ := svc.ListComponents(ctx(), reader, component.ListInput{Team: "ops"})
		mkt, _ := svc.ListComponents(ctx(), reader, component.ListInput{Team: "marketing"})
		if len(ops.Items) != 1 || len(mkt.Items) != 8 {
			t.Fatalf("team change: ops %d, marketing %d", len(ops.Items), len(mkt.Items))
		}
		other, _ := svc.ListComponents(ctx(), admin("other"), component.ListInput{})
		if len(other.Items) != 0 {
			t.Fatalf("another tenant lists %d components", len(other.Items))
		}
	})
}

// TestComponentRegisterRace: 50 concurrent registrations of one name and
// type: exactly one wins, the others are told it exists.
func TestComponentRegisterRace(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *component.Service) {
		const racers = 50
		var wg sync.WaitGroup
		errs := make([]error, racers)
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				_, errs[i] = svc.RegisterComponent(ctx(), admin("acme"), component.RegisterInput{Name: "deploy-hook", Type: "hook",
					Content: fmt.Sprint("racer ", i), CreatedBy: fmt.Sprint("agent", i)})
			}(i)
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case vp.KindOf(err) != vp.KindConflict:
				t.Fatalf("loser got %v, want a conflict", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d registrations won, want exactly 1", won)
		}
		page, _ := svc.ListComponents(ctx(), admin("acme"), component.ListInput{Type: "hook"})
		if len(page.Items) != 1 {
			t.Fatalf("%d components listed, want 1", len(page.Items))
		}
	})
}
