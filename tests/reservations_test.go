package tests

import (
	"fmt"
	"testing"
)

// TestReservationsClient runs the path reservation tools through the
// official MCP TypeScript SDK over Streamable HTTP
// (clients/reservations.mjs): alice reserves, bob collides and reserves
// nothing, checks and lists; alice renews, narrows and releases; bob then
// reserves. The Go side seeds N reservations (raw HTTP, as carol) that
// the client must list, N, page by page. Over HTTP, and with bob over stdio.
func TestReservationsClient(t *testing.T) {
	requireNode(t)
	// http: both agents over Streamable HTTP; stdio: bob in a
	// `vantagepeers stdio` child on the server's data dir.
	for _, scenario := range []string{"reservations", "stdio"} {
		t.Run(scenario, func(t *testing.T) { reservationsClient(t, scenario) })
	}
}

func reservationsClient(t *testing.T, scenario string) {
	tenant := newTenant("rsv")
	carol := createToken(t, tenant, "carol")
	const seed = 23
	for i := range seed {
		r := decode[struct {
			Reserved bool `json:"reserved"`
		}](t, callTool(t, carol, "", "reserve_paths", map[string]any{"project": "e2e/seed", "paths": []string{fmt.Sprintf("pkg%d/**", i)}}))
		if !r.Reserved {
			t.Fatalf("seeding pkg%d: not reserved", i)
		}
	}
	s := runClient(t, "reservations.mjs", scenario, map[string]any{
		"url": srv.url, "seed": seed, "bin": binPath, "dataDir": srv.dataDir,
		"tokens": map[string]string{"alice": createToken(t, tenant, "alice"), "bob": createToken(t, tenant, "bob")},
	})
	if s.Passed < 15 {
		t.Errorf("only %d checks passed", s.Passed)
	}
	id, _ := s.Facts["reservationId"].(string)
	if id == "" {
		t.Fatal("no reservation id in the summary")
	}
	// Cross-check over raw HTTP: alice's reservation is gone, bob's shared
	// one holds the paths.
	got := decode[struct {
		Conflicts []struct {
			Holder    string `json:"holder"`
			Exclusive bool   `json:"exclusive"`
		} `json:"conflicts"`
	}](t, callTool(t, carol, "", "check_paths", map[string]any{"project": "e2e/web", "paths": []string{"src/api/users.go"}}))
	if len(got.Conflicts) != 1 || got.Conflicts[0].Holder != "bob" || got.Conflicts[0].Exclusive {
		t.Errorf("check_paths over raw HTTP: %+v, want bob's shared reservation only", got.Conflicts)
	}
}
