package profile_test

import (
	"fmt"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestProfilesAndPresence(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *profile.Service) {
		alice := as("acme", "alice")
		name := "Alice"
		if _, err := svc.UpdateProfile(ctx(), alice, profile.Update{Name: &name,
			Static: &vp.ProfileStatic{Role: "frontend", Capabilities: []string{"react"}}}); err != nil {
			t.Fatal(err)
		}
		// A partial update keeps what it does not name.
		if _, err := svc.UpdateProfile(ctx(), alice, profile.Update{Dynamic: &vp.ProfileDyn{SessionCount: 3}}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.SetSummary(ctx(), alice, "", "alice-main", "migrating HeroSection"); err != nil {
			t.Fatal(err)
		}
		view, err := svc.GetProfile(ctx(), as("acme", "bob"), "Alice")
		if err != nil {
			t.Fatal(err)
		}
		if view.Name != "Alice" || view.Static == nil || view.Static.Role != "frontend" || view.Dynamic.SessionCount != 3 {
			t.Fatalf("profile %+v", view.Profile)
		}
		if len(view.Instances) != 1 || view.Instances[0].Summary != "migrating HeroSection" || view.Instances[0].Dynamic.LastSeen == 0 {
			t.Fatalf("instances %+v", view.Instances)
		}
		_, err = svc.SetSummary(ctx(), alice, "bob", "bob-main", "x")
		wantKind(t, err, vp.KindForbidden, "orchestratorId")
		_, err = svc.SetSummary(ctx(), alice, "", "", "x")
		wantKind(t, err, vp.KindInvalid, "instanceId")
		_, err = svc.GetProfile(ctx(), alice, "nobody")
		wantKind(t, err, vp.KindNotFound, "orchestratorId")
	})
}

func TestListPeers(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *profile.Service) {
		const n = 47
		root := admin("acme")
		for i := 0; i < n; i++ {
			if _, err := svc.SetSummary(ctx(), root, fmt.Sprintf("agent%02d", i), fmt.Sprintf("agent%02d-main", i), "busy"); err != nil {
				t.Fatal(err)
			}
		}
		limit := 10
		all := pageAll(t, func(cursor string) (listing.Page[any], error) {
			return svc.ListPeers(ctx(), root, listing.Params{Limit: &limit, Cursor: cursor})
		})
		if len(all) != n {
			t.Fatalf("list_peers paged %d rows, want %d", len(all), n)
		}
		if all[0].(vp.Profile).Orchestrator != "agent46" {
			t.Fatalf("not most recent first: %v", all[0])
		}
		// Updating a peer moves it to the front, without duplicating it.
		if _, err := svc.SetSummary(ctx(), root, "agent00", "agent00-main", "back"); err != nil {
			t.Fatal(err)
		}
		all = pageAll(t, func(cursor string) (listing.Page[any], error) {
			return svc.ListPeers(ctx(), root, listing.Params{Cursor: cursor})
		})
		if len(all) != n || all[0].(vp.Profile).Orchestrator != "agent00" {
			t.Fatalf("after update: %d rows, first %v", len(all), all[0])
		}
	})
}
