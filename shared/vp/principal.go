package vp

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Wildcard grants any orchestrator or any namespace of the principal's tenant.
const Wildcard = "*"

// SystemCaller is the orchestrator name that server-side jobs act as. Only an
// admin principal may claim it.
const SystemCaller = "system"

// DefaultTenant is the tenant of the embedded single-user install and of the
// master token unless it is told otherwise.
const DefaultTenant = "default"

// Principal is who is calling, resolved from a bearer token (HTTP) or the
// environment (stdio). Every domain call takes one; identity never comes from
// tool arguments alone.
type Principal struct {
	Tenant string
	// Orchestrators this principal may act as; "*" means any orchestrator of
	// the tenant. The first entry is the default identity.
	Orchestrators []string
	// Namespace prefixes; "*" means every namespace of the tenant.
	ReadPrefixes  []string
	WritePrefixes []string
	Scopes        []string
	Admin         bool
	// TokenID identifies the credential (never the secret) for audit logs.
	TokenID string
	// ToolProfile is the tool profile advertised to this principal by
	// default ("core", "full", or "" for the server's default).
	ToolProfile string
	// ClientID is the OAuth client the token was issued to ("" for an
	// agent token): a refusal it may overcome by asking for more is
	// answered 403 insufficient_scope rather than as a tool error.
	ClientID string
}

// NormalizeOrchestrator returns the canonical form of an orchestrator id:
// trimmed, Unicode NFC, case-folded. Two ids name the same orchestrator
// exactly when their canonical forms are equal.
func NormalizeOrchestrator(id string) string {
	return cases.Fold().String(norm.NFC.String(strings.TrimSpace(id)))
}

// DefaultOrchestrator is the identity used when a tool argument such as
// `from` or `createdBy` is omitted. Empty when the principal may act as
// anyone and named no one first.
func (p Principal) DefaultOrchestrator() string {
	for _, o := range p.Orchestrators {
		if o != Wildcard {
			return NormalizeOrchestrator(o)
		}
	}
	return ""
}

// CanActAs reports whether the principal may speak as orchestrator id.
func (p Principal) CanActAs(id string) bool {
	n := NormalizeOrchestrator(id)
	if n == "" {
		return false
	}
	if n == SystemCaller {
		return p.Admin
	}
	if p.Admin {
		return true
	}
	for _, o := range p.Orchestrators {
		if o == Wildcard || NormalizeOrchestrator(o) == n {
			return true
		}
	}
	return false
}

// ActAs resolves the orchestrator a call speaks as: the argument when given
// (and allowed), else the principal's default identity. field names the
// argument for error messages.
func (p Principal) ActAs(op, field, arg string) (string, error) {
	if strings.TrimSpace(arg) == "" {
		if d := p.DefaultOrchestrator(); d != "" {
			return d, nil
		}
		if !p.Admin && !slices.Contains(p.Orchestrators, Wildcard) {
			// The host cannot know whom to ask for: it may ask for
			// all the person may give, their own identity among it.
			return "", E(op, KindForbidden, field, "this token may act as no orchestrator (it was granted namespaces only): sign in with a token that acts as one").WithScope(ScopeFull)
		}
		return "", Errorf(op, KindInvalid, field, "is required: this token may act as any orchestrator, so name one (for example %q)", "alice")
	}
	if ReservedOrchestrator(arg) {
		return "", Errorf(op, KindInvalid, field, "%q is reserved (a channel or wildcard word) and cannot be an orchestrator id", arg)
	}
	if err := p.MayActAs(op, field, arg); err != nil {
		return "", err
	}
	return NormalizeOrchestrator(arg), nil
}

// The refusals of a right below are made here, in one place, so that each
// names the OAuth scope that would allow the call: a client is answered 403
// insufficient_scope naming it and its host may ask the person again.
// Refusals that asking again cannot change (ownership, admin only) stay
// plain forbidden errors where they are made.

// MayActAs is nil when p may speak as orchestrator id, else the refusal
// naming field and the scope as:<id> (none for the server's own name).
func (p Principal) MayActAs(op, field, id string) error {
	if p.CanActAs(id) {
		return nil
	}
	return Errorf(op, KindForbidden, field, "this token may not act as %q (it may act as %s)", id, p.describeOrchestrators()).WithScope(actAsScope(id))
}

// MayRead is nil when p may read namespace ns, else the refusal naming
// field and the scope ns:read:<ns>.
func (p Principal) MayRead(op, field, ns string) error {
	if p.CanRead(ns) {
		return nil
	}
	return Errorf(op, KindForbidden, field, "this token may not read namespace %q (read prefixes: %s)", ns, describePrefixes(p.ReadPrefixes)).WithScope(ReadScope(ns))
}

// MayWrite is nil when p may write namespace ns, else the refusal naming
// field and the scope ns:write:<ns>.
func (p Principal) MayWrite(op, field, ns string) error {
	if p.CanWrite(ns) {
		return nil
	}
	return Errorf(op, KindForbidden, field, "this token may not write namespace %q (write prefixes: %s)", ns, describePrefixes(p.WritePrefixes)).WithScope(WriteScope(ns))
}

func describePrefixes(ps []string) string {
	if len(ps) == 0 {
		return "none"
	}
	return fmt.Sprintf("%q", ps)
}

// ReservedOrchestrator reports ids that mean something else in a channel or
// a grant, "broadcast" (everyone) and "*" (anyone), and so can never name an
// orchestrator.
func ReservedOrchestrator(id string) bool {
	n := NormalizeOrchestrator(id)
	return n == "broadcast" || strings.Contains(n, Wildcard)
}

func (p Principal) describeOrchestrators() string {
	if p.Admin {
		return "anyone"
	}
	if len(p.Orchestrators) == 0 {
		return "no orchestrator"
	}
	return strings.Join(p.Orchestrators, ", ")
}

// CanRead reports whether the principal may read namespace ns.
func (p Principal) CanRead(ns string) bool { return p.Admin || matchPrefixes(p.ReadPrefixes, ns) }

// CanWrite reports whether the principal may write namespace ns.
func (p Principal) CanWrite(ns string) bool { return p.Admin || matchPrefixes(p.WritePrefixes, ns) }

// matchPrefixes matches whole path segments: prefix "project/x" grants
// "project/x" and "project/x/notes" but not "project/xy".
func matchPrefixes(prefixes []string, ns string) bool {
	for _, pre := range prefixes {
		pre = strings.TrimSuffix(pre, "/")
		if pre == Wildcard || ns == pre || strings.HasPrefix(ns, pre+"/") {
			return true
		}
	}
	return false
}

// actAsScope is the scope that would let a token act as id: none for the
// server's own name, which no grant gives.
func actAsScope(id string) string {
	if NormalizeOrchestrator(id) == SystemCaller {
		return ""
	}
	return ActAsScope(id)
}
