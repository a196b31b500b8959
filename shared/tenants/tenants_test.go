package tenants_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/tenants"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// TestWithCredentials seeds tokens (one revoked, one expired-kind Clerk
// token, a second token of a tenant), OAuth clients (one generic, one
// elevated into its own tenant) and data in a tenant with no credential,
// and wants exactly the credentials' tenants and the default one, each once.
func TestWithCredentials(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st := b.Open(t, nil)
		ctx := context.Background()
		if _, err := task.New(task.Options{Store: st}).CreateTask(ctx, vp.Principal{Tenant: "hidden", Orchestrators: []string{"alice"}},
			task.CreateTaskInput{Title: "no credential here", AssignedTo: "alice", Priority: "low"}); err != nil {
			t.Fatal(err)
		}
		toks := auth.New(auth.Options{Store: st})
		want := []string{vp.DefaultTenant}
		// More than one page of the token index (200 a page).
		for i := range 205 {
			tenant := fmt.Sprintf("t%03d", i)
			_, tok, err := toks.Create(ctx, auth.Spec{Tenant: tenant, ActsAs: []string{"alice"}})
			if err != nil {
				t.Fatal(err)
			}
			if i == 7 {
				if _, err := toks.Revoke(ctx, tok.ID); err != nil {
					t.Fatal(err)
				}
			}
			want = append(want, tenant)
		}
		if _, _, err := toks.Create(ctx, auth.Spec{Tenant: "t000", ActsAs: []string{"bob"}}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := toks.Create(ctx, auth.Spec{Tenant: "clerk-abc", ActsAs: []string{"carol"}, Kind: "clerk", TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		want = append(want, "clerk-abc")
		srv := oauth.New(oauth.Options{Store: st, Tokens: toks})
		var ids []string
		for _, name := range []string{"generic", "elevated"} {
			body := `{"client_name":"` + name + `","redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"none"}`
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/oauth/register", strings.NewReader(body)))
			if rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
				t.Fatalf("register: %d %s", rec.Code, rec.Body)
			}
			_, id, _ := strings.Cut(rec.Body.String(), `"client_id":"`)
			id, _, _ = strings.Cut(id, `"`)
			ids = append(ids, id)
		}
		if _, err := srv.Elevate(ctx, oauth.Actor{ID: "master"}, ids[1], oauth.ProfileGeneric, "gamma"); err != nil {
			t.Fatal(err)
		}
		want = append(want, "gamma")

		got, err := tenants.WithCredentials(ctx, toks, srv)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0] != vp.DefaultTenant {
			t.Errorf("first tenant %v, want %s first", got[:min(1, len(got))], vp.DefaultTenant)
		}
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("tenants (%d) %v\nwant (%d)    %v", len(got), got, len(want), want)
		}
	})
}
