// Package auth turns credentials into a vp.Principal. Bearer secrets are
// 64 hex characters (32 random bytes); only their SHA-256 is stored, and the
// master token is compared in constant time.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// ErrInvalidToken matches every refused token (missing, malformed, unknown,
// revoked, expired): the error Resolve returns is a *RefusedError saying
// which.
var ErrInvalidToken = errors.New("bearer token is missing or invalid")

// Token is the stored record of a bearer token (never the secret).
type Token struct {
	ID            string   `json:"id"`
	Tenant        string   `json:"tenant"`
	ActsAs        []string `json:"actsAs"`
	ReadPrefixes  []string `json:"read"`
	WritePrefixes []string `json:"write"`
	Scopes        []string `json:"scopes,omitempty"`
	Admin         bool     `json:"admin,omitempty"`
	Label         string   `json:"label,omitempty"`
	ToolProfile   string   `json:"toolProfile,omitempty"`
	CreatedAt     int64    `json:"createdAt"`
	ExpiresAt     int64    `json:"expiresAt,omitempty"`
	RevokedAt     int64    `json:"revokedAt,omitempty"`
	// Kind says how the token was issued: "" (an admin created it), "oauth"
	// (an OAuth client obtained it) or "clerk" (a Clerk JWT exchange).
	Kind     string `json:"kind,omitempty"`
	ClientID string `json:"clientId,omitempty"` // the OAuth client it was issued to
	FamilyID string `json:"familyId,omitempty"` // the OAuth grant (refresh-token family) it belongs to
	// Requires, when set, is the key of an item that must exist for the
	// token to be valid: deleting that item (an OAuth client) revokes every
	// token that requires it in one write.
	Requires *store.Key `json:"requires,omitempty"`
	// Approver, on a token an OAuth client got from a person's approval, is
	// the hash of the token that person signed in with: this one is refused
	// as soon as that one is revoked or expires (checked at every resolve).
	Approver string `json:"approver,omitempty"`
}

// Principal is the identity the token grants.
func (t Token) Principal() vp.Principal {
	return vp.Principal{
		Tenant: t.Tenant, Orchestrators: t.ActsAs, ReadPrefixes: t.ReadPrefixes,
		WritePrefixes: t.WritePrefixes, Scopes: t.Scopes, Admin: t.Admin, TokenID: t.ID, ToolProfile: t.ToolProfile,
		ClientID: t.ClientID,
	}
}

// Options configures Tokens.
type Options struct {
	Store store.Store
	Now   func() time.Time
	// MasterHash is the SHA-256 of the master token; zero disables it.
	MasterHash [32]byte
	IDs        *vp.IDs
}

// Tokens issues, lists, revokes and resolves bearer tokens.
type Tokens struct {
	st     store.Store
	now    func() time.Time
	master [32]byte
	ids    *vp.IDs
}

// New returns a Tokens.
func New(o Options) *Tokens {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IDs == nil {
		o.IDs = vp.NewIDs(o.Now)
	}
	return &Tokens{st: o.Store, now: o.Now, master: o.MasterHash, ids: o.IDs}
}

// NewSecret returns 32 random bytes as 64 hex characters.
func NewSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("auth: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// Hash returns the SHA-256 of a secret.
func Hash(secret string) [32]byte { return sha256.Sum256([]byte(secret)) }

// Spec describes a token to create.
type Spec struct {
	Tenant        string
	ActsAs        []string
	ReadPrefixes  []string
	WritePrefixes []string
	Scopes        []string
	Label         string
	ToolProfile   string        // "core", "full" or "" (the server's default)
	TTL           time.Duration // zero: no expiry
	// Issued tokens (OAuth, Clerk): see the fields of Token. An OAuth token
	// (ClientID set) is listed with its client rather than by `token list`.
	Kind     string
	ClientID string
	FamilyID string
	Requires *store.Key
	Approver string // the hash of the approving token (Token.Approver)
	// Admin grants the admin flag (an OAuth client elevated to the master
	// profile, approved by the master token).
	Admin bool
}

// Create stores a new token and returns its secret, which is never stored.
func (t *Tokens) Create(ctx context.Context, s Spec) (string, Token, error) {
	secret, tok, op, err := t.Prepare(s)
	if err != nil {
		return "", Token{}, err
	}
	if err := t.st.Write(ctx, op); err != nil {
		return "", Token{}, vp.Wrap("token.create", vp.KindInternal, err)
	}
	return secret, tok, nil
}

// DefaultGrants are the namespaces an agent's token reads and writes
// unless told otherwise: the tenant's shared namespaces and the agent's
// own. "global" is read-only: an admin curates it.
func DefaultGrants(agent string) (read, write []string) {
	own := "orchestrator/" + vp.NormalizeOrchestrator(agent)
	return []string{"global", "workspace", "project", own}, []string{"workspace", "project", own}
}

// CheckSpec is Prepare's refusal of a spec, for callers that check a
// command line before they open (and so create) the store the token goes to.
func CheckSpec(s Spec) error {
	const op = "token.create"
	if !vp.ValidTenant(s.Tenant) {
		return vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a tenant id (lower-case letters, digits, '-' and '_', at most 63)", s.Tenant)
	}
	for _, a := range s.ActsAs {
		if a == vp.Wildcard {
			continue
		}
		if err := vp.CheckName(op, "as", a, true); err != nil {
			return err
		}
		if vp.NormalizeOrchestrator(a) == vp.SystemCaller {
			return vp.E(op, vp.KindInvalid, "as", "\"system\" is reserved for the server and the master token")
		}
	}
	if s.ToolProfile != "" && s.ToolProfile != "core" && s.ToolProfile != "full" {
		return vp.Errorf(op, vp.KindInvalid, "tool-profile", "%q: want core or full", s.ToolProfile)
	}
	return nil
}

// Prepare builds a new token and the write that stores it, without writing:
// callers that issue a token as part of a larger change (redeeming an OAuth
// code, rotating a refresh token) put the op in their own transaction. The
// secret is returned once and never stored.
func (t *Tokens) Prepare(s Spec) (string, Token, store.Op, error) {
	if err := CheckSpec(s); err != nil {
		return "", Token{}, store.Op{}, err
	}
	secret := NewSecret()
	h := Hash(secret)
	now := t.now()
	tok := Token{
		ID: t.ids.New("tok"), Tenant: s.Tenant, ActsAs: clean(s.ActsAs), ReadPrefixes: clean(s.ReadPrefixes),
		WritePrefixes: clean(s.WritePrefixes), Scopes: s.Scopes, Label: s.Label, ToolProfile: s.ToolProfile, CreatedAt: now.UnixMilli(),
		Kind: s.Kind, ClientID: s.ClientID, FamilyID: s.FamilyID, Requires: s.Requires, Admin: s.Admin, Approver: s.Approver,
	}
	if s.TTL > 0 {
		tok.ExpiresAt = now.Add(s.TTL).UnixMilli()
	}
	it, err := tokens.Item("token.create", "", storedToken{hash: hex.EncodeToString(h[:]), tok: tok})
	if err != nil {
		return "", Token{}, store.Op{}, err
	}
	return secret, tok, store.Put(it, store.IfNotExists), nil
}

// TokenKey is the store key of the token whose secret has the given
// SHA-256 (hex).
func TokenKey(hashHex string) store.Key { return tokenKey(hashHex) }

// HashHex is the SHA-256 of a secret in hex, as token keys use it.
func HashHex(secret string) string {
	h := Hash(secret)
	return hex.EncodeToString(h[:])
}

// ClientTokens returns the live token items issued to an OAuth client
// (revoked ones included), oldest first.
func (t *Tokens) ClientTokens(ctx context.Context, clientID string) ([]store.Item, error) {
	var out []store.Item
	q := tokens.Query("", store.GSI3, table.Values{"clientId": clientID})
	q.Limit = 200
	for {
		rows, err := t.st.Query(ctx, q)
		if err != nil {
			return nil, vp.Wrap("token.client_tokens", vp.KindInternal, err)
		}
		out = append(out, rows...)
		if len(rows) < q.Limit {
			return out, nil
		}
		p := store.PositionOf(rows[len(rows)-1], q.Index)
		q.After = &p
	}
}

// DecodeToken reads the token stored in an item.
func DecodeToken(it store.Item) (Token, error) {
	var tok Token
	if err := json.Unmarshal(it.Data, &tok); err != nil {
		return Token{}, fmt.Errorf("auth: decoding token: %w", err)
	}
	return tok, nil
}

// RevokeOp returns the conditional write that marks the token in it
// revoked at ms, or ok=false when it already is (or has expired).
func RevokeOp(it store.Item, ms int64) (op store.Op, ok bool, err error) {
	tok, err := DecodeToken(it)
	if err != nil {
		return store.Op{}, false, err
	}
	if tok.RevokedAt != 0 || (tok.ExpiresAt != 0 && tok.ExpiresAt <= ms) {
		return store.Op{}, false, nil
	}
	tok.RevokedAt = ms
	it.Data, _ = json.Marshal(tok)
	return store.Put(it, store.IfVersion(it.Version)), true, nil
}

func clean(v []string) []string {
	out := []string{}
	for _, s := range v {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// List returns the tokens of a tenant ("" for every tenant), oldest first.
func (t *Tokens) List(ctx context.Context, tenant string) ([]Token, error) {
	var out []Token
	q := tokens.Query("", store.GSI1, nil)
	q.Limit = 200
	for {
		rows, err := t.st.Query(ctx, q)
		if err != nil {
			return nil, vp.Wrap("token.list", vp.KindInternal, err)
		}
		for _, it := range rows {
			var tok Token
			if err := json.Unmarshal(it.Data, &tok); err != nil {
				return nil, vp.Wrap("token.list", vp.KindInternal, err)
			}
			if tenant == "" || tok.Tenant == tenant {
				out = append(out, tok)
			}
		}
		if len(rows) < q.Limit {
			return out, nil
		}
		p := store.PositionOf(rows[len(rows)-1], q.Index)
		q.After = &p
	}
}

// Revoke marks a token revoked; it stops working at once.
//
// A token's item is written only when it is created and when it is
// revoked, and a revocation is final: a lost write is another revocation,
// which the next attempt sees and answers. The bound of table.Conflicts is
// therefore never reached in practice. The index finds the item once; the
// attempts after a lost write reread it by its key, which is consistent
// where the index may lag behind the write that was lost to.
func (t *Tokens) Revoke(ctx context.Context, id string) (Token, error) {
	const op = "token.revoke"
	var tok Token
	var key *store.Key
	err := table.Conflicts{Op: op, Field: "id", ID: id}.Retry(ctx, func() error {
		var it store.Item
		if key == nil {
			q := tokens.Query("", store.GSI2, table.Values{"tokenId": id})
			q.Limit = 1
			rows, err := t.st.Query(ctx, q)
			if err != nil {
				return vp.Wrap(op, vp.KindInternal, err)
			}
			if len(rows) == 0 {
				return vp.Errorf(op, vp.KindNotFound, "id", "no token %q", id)
			}
			it, key = rows[0], &rows[0].Key
		} else {
			var err error
			it, err = t.st.Get(ctx, *key)
			if errors.Is(err, store.ErrNotFound) {
				return vp.Errorf(op, vp.KindNotFound, "id", "no token %q", id)
			}
			if err != nil {
				return vp.Wrap(op, vp.KindInternal, err)
			}
		}
		tok = Token{}
		if err := json.Unmarshal(it.Data, &tok); err != nil {
			return vp.Wrap(op, vp.KindInternal, err)
		}
		if tok.RevokedAt != 0 {
			return nil
		}
		tok.RevokedAt = t.now().UnixMilli()
		it.Data, _ = json.Marshal(tok)
		// A lost write stays store.ErrConditionFailed in the chain: the
		// next attempt reads again.
		return vp.Wrap(op, vp.KindInternal, t.st.Write(ctx, store.Put(it, store.IfVersion(it.Version))))
	})
	if err != nil {
		return Token{}, err
	}
	return tok, nil
}

// MasterPrincipal is what the master token grants: admin of the tenant.
func MasterPrincipal(tenant string) vp.Principal {
	return vp.Principal{
		Tenant: tenant, Orchestrators: []string{vp.Wildcard}, ReadPrefixes: []string{vp.Wildcard},
		WritePrefixes: []string{vp.Wildcard}, Scopes: []string{"master"}, Admin: true, TokenID: "master",
	}
}

// masterToken is the master token as a record, for an approval it made.
func masterToken() Token {
	p := MasterPrincipal(vp.DefaultTenant)
	return Token{ID: p.TokenID, Tenant: p.Tenant, ActsAs: p.Orchestrators, ReadPrefixes: p.ReadPrefixes, WritePrefixes: p.WritePrefixes, Scopes: p.Scopes, Admin: p.Admin}
}

// Resolve returns the principal of a bearer secret.
func (t *Tokens) Resolve(ctx context.Context, secret string) (vp.Principal, error) {
	if secret == "" {
		return vp.Principal{}, refused(ReasonMissing)
	}
	if len(secret) != 64 {
		return vp.Principal{}, refused(ReasonMalformed)
	}
	h := Hash(secret)
	if t.master != ([32]byte{}) && subtle.ConstantTimeCompare(h[:], t.master[:]) == 1 {
		return MasterPrincipal(vp.DefaultTenant), nil
	}
	tok, err := t.live(ctx, hex.EncodeToString(h[:]))
	var r *RefusedError
	if errors.As(err, &r) && r.Reason == ReasonUnknown && !ValidSecret(secret) {
		return vp.Principal{}, refused(ReasonMalformed)
	}
	if err != nil {
		return vp.Principal{}, err
	}
	if tok.Approver != "" {
		ap, err := t.live(ctx, tok.Approver)
		if r := Refusal(err); r != nil {
			return vp.Principal{}, &RefusedError{Reason: ReasonApproverGone, TokenID: tok.ID, At: r.At, Approver: ap.ID}
		}
		if err != nil {
			return vp.Principal{}, err
		}
	}
	return tok.Principal(), nil
}

// Live returns the token whose secret has the SHA-256 hashHex when it may
// still be used, else a *RefusedError (unknown, revoked, expired, its
// client deleted). The approval of an OAuth grant is checked with it.
func (t *Tokens) Live(ctx context.Context, hashHex string) (Token, error) {
	if !hex64.MatchString(hashHex) {
		return Token{}, refused(ReasonUnknown)
	}
	return t.live(ctx, hashHex)
}

func (t *Tokens) live(ctx context.Context, hashHex string) (Token, error) {
	// The master token approves OAuth grants too; it has no record, so the
	// grant lives while the server's master token is the one that
	// approved it, and rotating that token ends it.
	if h, err := hex.DecodeString(hashHex); err == nil && t.master != ([32]byte{}) && subtle.ConstantTimeCompare(h, t.master[:]) == 1 {
		return masterToken(), nil
	}
	it, err := t.st.Get(ctx, tokenKey(hashHex))
	if errors.Is(err, store.ErrNotFound) {
		return Token{}, refused(ReasonUnknown)
	}
	if err != nil {
		return Token{}, fmt.Errorf("auth.Resolve: %w", err)
	}
	var tok Token
	if err := json.Unmarshal(it.Data, &tok); err != nil {
		return Token{}, fmt.Errorf("auth.Resolve: %w", err)
	}
	now := t.now().UnixMilli()
	if tok.RevokedAt != 0 {
		return tok, &RefusedError{Reason: ReasonRevoked, TokenID: tok.ID, At: time.UnixMilli(tok.RevokedAt)}
	}
	if tok.ExpiresAt != 0 && tok.ExpiresAt <= now {
		return tok, &RefusedError{Reason: ReasonExpired, TokenID: tok.ID, At: time.UnixMilli(tok.ExpiresAt)}
	}
	if tok.Requires != nil {
		if _, err := t.st.Get(ctx, *tok.Requires); errors.Is(err, store.ErrNotFound) {
			return tok, &RefusedError{Reason: ReasonClientDeleted, TokenID: tok.ID}
		} else if err != nil {
			return tok, fmt.Errorf("auth.Resolve: %w", err)
		}
	}
	return tok, nil
}
