// Package tenants finds the tenants a deployment serves. Neither the
// embedded binary nor a Lambda keeps a list of tenants: a tenant exists
// for the server-wide jobs (the keyword-search backfill) when a credential
// can act in it.
package tenants

import (
	"context"
	"fmt"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TokenLister lists the stored tokens (every tenant's for ""); *auth.Tokens
// implements it.
type TokenLister interface {
	List(ctx context.Context, tenant string) ([]auth.Token, error)
}

// ClientLister lists the OAuth clients; *oauth.Server implements it.
type ClientLister interface {
	ListClients(ctx context.Context) ([]oauth.Client, error)
}

// WithCredentials returns the tenants that hold a credential, each once,
// vp.DefaultTenant first: the default tenant (the master token's, and
// stdio's), the tenant of every stored token — revoked and expired ones
// included, since their data stays — and the tenant of every OAuth client
// (client-credentials tokens act there). Tokens of an authorization-code
// grant act in the tenant of the token that approved it, which is listed
// while that token is stored. Two queries on server-wide indexes, no scan.
//
// Not listed: a tenant only the master token reaches (X-VP-Tenant), and
// one whose only credentials are OAuth grants approved by tokens that are
// gone; such a tenant is found again when it next gets a token.
func WithCredentials(ctx context.Context, toks TokenLister, oc ClientLister) ([]string, error) {
	tokens, err := toks.List(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("tenants: listing the tokens: %w", err)
	}
	clients, err := oc.ListClients(ctx)
	if err != nil {
		return nil, fmt.Errorf("tenants: listing the OAuth clients: %w", err)
	}
	seen := map[string]bool{vp.DefaultTenant: true}
	out := []string{vp.DefaultTenant}
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, t := range tokens {
		add(t.Tenant)
	}
	for _, c := range clients {
		add(c.Tenant)
	}
	return out, nil
}
