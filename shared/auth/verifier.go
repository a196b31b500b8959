package auth

import (
	"context"
	"net/http"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Verify is the go-sdk's TokenVerifier (sdkauth.TokenVerifier) over these
// tokens: on /mcp the SDK's RequireBearerToken, the one reader of the
// Authorization header, hands it the credential, and the TokenInfo it
// returns carries the token's scopes and its principal (PrincipalOf). A
// refusal is the *RefusedError of Resolve; any other error is the store
// failing.
//
// The TokenInfo has no Expiration: Resolve has refused an expired token
// on the server's clock (Options.Now), and an Expiration would have the
// SDK decide again on the wall clock — a second decision, which under an
// injected clock can disagree with the first.
func (t *Tokens) Verify(ctx context.Context, secret string, _ *http.Request) (*sdkauth.TokenInfo, error) {
	p, err := t.Resolve(ctx, secret)
	if err != nil {
		return nil, err
	}
	return NewTokenInfo(p), nil
}

// principalExtra is the TokenInfo.Extra key of the principal. The SDK's
// TokenInfo has no typed slot for it; the value is a *principalBox, a type
// no other package can make, so a verifier that is not this package's (or
// anything else that fills Extra) cannot pass a principal off as resolved.
const principalExtra = "vp.principal"

type principalBox struct{ p vp.Principal }

// NewTokenInfo is the TokenInfo of principal p. UserID, which the SDK
// compares across the requests of a session, is the tenant and token id.
func NewTokenInfo(p vp.Principal) *sdkauth.TokenInfo {
	return &sdkauth.TokenInfo{
		Scopes: p.Scopes, UserID: p.Tenant + "/" + p.TokenID,
		Extra: map[string]any{principalExtra: &principalBox{p: p}},
	}
}

// PrincipalOf is the principal NewTokenInfo put in ti; ok is false for a nil
// ti and for one this package did not make.
func PrincipalOf(ti *sdkauth.TokenInfo) (p vp.Principal, ok bool) {
	if ti == nil {
		return vp.Principal{}, false
	}
	b, ok := ti.Extra[principalExtra].(*principalBox)
	if !ok || b == nil {
		return vp.Principal{}, false
	}
	return b.p, true
}
