package businessunit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/businessunit"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/listing/listingtest"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// buFields returns a complete create_bu input.
func buFields(name string) businessunit.Fields {
	return businessunit.Fields{
		Name: strp(name), Description: strp("Coordination backend for agent teams"), Purpose: strp("Let agents work as a team"),
		BusinessModel: strp("SaaS subscriptions"), TargetCustomers: strp("AI-first studios"), Pricing: strp("49 EUR per seat per month"),
		Services: []string{"hosting", "support"}, RevenueProjections: &vp.RevenueProjections{A1: 50000, A2: 150000, A3: 400000},
	}
}

func TestBULifecycle(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *businessunit.Service) {
		sigma, pi, tau := as("acme", "sigma"), as("acme", "pi"), as("acme", "tau")
		b, err := svc.CreateBU(ctx(), sigma, buFields("VantagePeers"), "")
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != "idea" || b.ManagementFee != 10 || b.OrchestratorID != "sigma" || b.CreatedBy != "sigma" || b.ID == "" ||
			b.RevenueProjections.A3 != 400000 || fmt.Sprint(b.Services) != "[hosting support]" {
			t.Fatalf("created %+v", b)
		}
		// A unit led by someone else: the lead may change it too.
		f := buFields("Studio")
		f.OrchestratorID, f.Status, f.ManagementFee = strp("Pi"), strp("building"), new(float64)
		led, err := svc.CreateBU(ctx(), sigma, f, "")
		if err != nil || led.OrchestratorID != "pi" || led.Status != "building" || led.ManagementFee != 0 {
			t.Fatalf("created with a lead: %+v %v", led, err)
		}
		if got, err := svc.GetBU(ctx(), tau, led.ID); err != nil || got.Name != "Studio" { // everyone in the tenant reads
			t.Fatalf("get: %+v %v", got, err)
		}
		_, err = svc.UpdateBU(ctx(), tau, led.ID, "", businessunit.Fields{Status: strp("live")})
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		_, err = svc.DeleteBU(ctx(), tau, led.ID, "")
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		up, err := svc.UpdateBU(ctx(), pi, led.ID, "", businessunit.Fields{Status: strp("live"), Services: []string{"consulting"},
			CoreTeam: &vp.CoreTeam{Agents: []string{"dev-convex-expert"}}})
		if err != nil {
			t.Fatal(err)
		}
		if up.Status != "live" || fmt.Sprint(up.Services) != "[consulting]" || up.Pricing != "49 EUR per seat per month" ||
			up.UpdatedBy != "pi" || up.CreatedBy != "sigma" || len(up.CoreTeam.Agents) != 1 {
			t.Fatalf("update by the lead: %+v", up)
		}
		// Any stage may follow any other.
		for _, from := range vp.BUStatuses {
			for _, to := range vp.BUStatuses {
				if _, err := svc.UpdateBU(ctx(), sigma, b.ID, "", businessunit.Fields{Status: strp(from)}); err != nil {
					t.Fatal(err)
				}
				got, err := svc.UpdateBU(ctx(), sigma, b.ID, "", businessunit.Fields{Status: strp(to)})
				if err != nil || got.Status != to {
					t.Fatalf("%s -> %s: %+v %v", from, to, got.Status, err)
				}
			}
		}
		_, err = svc.UpdateBU(ctx(), sigma, b.ID, "", businessunit.Fields{Status: strp("paused")})
		wantKind(t, err, vp.KindInvalid, "idea, building, live, revenue")
		_, err = svc.UpdateBU(ctx(), sigma, b.ID, "", businessunit.Fields{})
		wantKind(t, err, vp.KindInvalid, "nothing to update")
		_, err = svc.UpdateBU(ctx(), sigma, b.ID, "", businessunit.Fields{Pricing: strp(" ")})
		wantKind(t, err, vp.KindInvalid, "pricing")
		// Handing the lead over: the old lead (not the creator) loses the right.
		if _, err := svc.UpdateBU(ctx(), sigma, led.ID, "", businessunit.Fields{OrchestratorID: strp("tau")}); err != nil {
			t.Fatal(err)
		}
		_, err = svc.UpdateBU(ctx(), pi, led.ID, "", businessunit.Fields{Status: strp("revenue")})
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		if del, err := svc.DeleteBU(ctx(), tau, led.ID, ""); err != nil || !del.Deleted {
			t.Fatalf("delete by the new lead: %+v %v", del, err)
		}
		_, err = svc.GetBU(ctx(), sigma, led.ID)
		wantKind(t, err, vp.KindNotFound, "buId")
		_, err = svc.DeleteBU(ctx(), sigma, led.ID, "")
		wantKind(t, err, vp.KindNotFound, "buId")
		// system (admin only) deletes anything; other tenants see nothing.
		_, err = svc.GetBU(ctx(), admin("other"), b.ID)
		wantKind(t, err, vp.KindNotFound, "buId")
		_, err = svc.DeleteBU(ctx(), admin("other"), b.ID, "system")
		wantKind(t, err, vp.KindNotFound, "buId")
		if _, err := svc.DeleteBU(ctx(), admin("acme"), b.ID, "system"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestBUValidation(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *businessunit.Service) {
		sigma := as("acme", "sigma")
		with := func(f func(*businessunit.Fields)) businessunit.Fields { in := buFields("BU"); f(&in); return in }
		neg, big := -1.0, 150.0
		cases := []struct {
			name      string
			in        businessunit.Fields
			createdBy string
			kind      vp.Kind
			field     string
		}{
			{"no name", with(func(f *businessunit.Fields) { f.Name = nil }), "", vp.KindInvalid, "name"},
			{"empty description", with(func(f *businessunit.Fields) { f.Description = strp("") }), "", vp.KindInvalid, "description"},
			{"no pricing", with(func(f *businessunit.Fields) { f.Pricing = nil }), "", vp.KindInvalid, "pricing"},
			{"long purpose", with(func(f *businessunit.Fields) { f.Purpose = strp(strings.Repeat("p", vp.MaxBUTextBytes+1)) }), "", vp.KindTooLarge, "purpose"},
			{"no revenue projections", with(func(f *businessunit.Fields) { f.RevenueProjections = nil }), "", vp.KindInvalid, "revenueProjections"},
			{"negative projection", with(func(f *businessunit.Fields) { f.RevenueProjections = &vp.RevenueProjections{A2: -5} }), "", vp.KindInvalid, "revenueProjections.A2"},
			{"fee over 100", with(func(f *businessunit.Fields) { f.ManagementFee = &big }), "", vp.KindInvalid, "managementFee"},
			{"negative fee", with(func(f *businessunit.Fields) { f.ManagementFee = &neg }), "", vp.KindInvalid, "managementFee"},
			{"unknown status", with(func(f *businessunit.Fields) { f.Status = strp("launched") }), "", vp.KindInvalid, "idea, building, live, revenue"},
			{"too many services", with(func(f *businessunit.Fields) { f.Services = make([]string, vp.MaxBUListItems+1) }), "", vp.KindTooLarge, "services"},
			{"empty core-team entry", with(func(f *businessunit.Fields) { f.CoreTeam = &vp.CoreTeam{Hooks: []string{""}} }), "", vp.KindInvalid, "coreTeam.hooks"},
			{"bad lead", with(func(f *businessunit.Fields) { f.OrchestratorID = strp("a#b") }), "", vp.KindInvalid, "orchestratorId"},
			{"control character in domain", with(func(f *businessunit.Fields) { f.Domain = strp("a\nb") }), "", vp.KindInvalid, "domain"},
			{"impersonation", buFields("BU"), "pi", vp.KindForbidden, "createdBy"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := svc.CreateBU(ctx(), sigma, c.in, c.createdBy)
				wantKind(t, err, c.kind, c.field)
			})
		}
		page, err := svc.ListBUs(ctx(), sigma, businessunit.ListInput{})
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("refused creates stored %d units (%v)", len(page.Items), err)
		}
		_, err = svc.ListBUs(ctx(), sigma, businessunit.ListInput{Status: "done"})
		wantKind(t, err, vp.KindInvalid, "idea, building, live, revenue")
		_, err = svc.GetBU(ctx(), sigma, "")
		wantKind(t, err, vp.KindInvalid, "buId")
	})
}

func TestBULists(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *businessunit.Service) {
		const n = 45 // lead sigma for every 3rd, pi otherwise; status cycles idea, building, live, revenue
		root := admin("acme")
		var last string
		for i := 0; i < n; i++ {
			f := buFields(fmt.Sprint("bu ", i))
			f.Status = strp(vp.BUStatuses[i%4])
			f.OrchestratorID = strp("pi")
			if i%3 == 0 {
				f.OrchestratorID = strp("sigma")
			}
			b, err := svc.CreateBU(ctx(), root, f, "system")
			if err != nil {
				t.Fatal(err)
			}
			last = b.ID
		}
		reader := as("acme", "tau")
		all := listingtest.Contract(t, n, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListBUs(ctx(), reader, businessunit.ListInput{Params: p})
		})
		if all[0].(vp.BusinessUnit).ID != last {
			t.Fatalf("not newest first")
		}
		listingtest.Contract(t, 30, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListBUs(ctx(), reader, businessunit.ListInput{OrchestratorID: "PI", Params: p})
		})
		ideas := listingtest.Contract(t, 12, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListBUs(ctx(), reader, businessunit.ListInput{Status: "idea", Params: p})
		})
		for _, b := range ideas {
			if b.(vp.BusinessUnit).Status != "idea" {
				t.Fatalf("status filter let through %v", b)
			}
		}
		// sigma and live: i%3 == 0 and i%4 == 2, i.e. 6, 18, 30, 42.
		listingtest.Contract(t, 4, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListBUs(ctx(), reader, businessunit.ListInput{OrchestratorID: "sigma", Status: "live", Params: p})
		})
		first, _ := svc.ListBUs(ctx(), reader, businessunit.ListInput{})
		_, err := svc.ListBUs(ctx(), reader, businessunit.ListInput{Status: "idea", Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListBUs(ctx(), admin("other"), businessunit.ListInput{Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		lite, _ := svc.ListBUs(ctx(), reader, businessunit.ListInput{Params: listing.Params{Fields: "lite"}})
		listingtest.LiteKeys(t, lite.Items[0], "_id", "_creationTime", "name", "status", "orchestratorId")
		// A status change moves the unit between status listings.
		if _, err := svc.UpdateBU(ctx(), root, last, "system", businessunit.Fields{Status: strp("revenue")}); err != nil {
			t.Fatal(err)
		}
		ideasNow, _ := svc.ListBUs(ctx(), reader, businessunit.ListInput{Status: "idea"})
		if len(ideasNow.Items) != 11 {
			t.Fatalf("after a status change: %d ideas, want 11", len(ideasNow.Items))
		}
		other, _ := svc.ListBUs(ctx(), admin("other"), businessunit.ListInput{})
		if len(other.Items) != 0 {
			t.Fatalf("another tenant lists %d units", len(other.Items))
		}
	})
}
