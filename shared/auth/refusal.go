package auth

import (
	"errors"
	"fmt"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
)

// Reason says why a bearer token was refused.
type Reason string

// The reasons a token is refused. Expired, revoked and client-deleted are
// told only once the secret's hash matched a stored token: whoever reads
// them holds that token, so naming its id and date reveals nothing new.
// Unknown and malformed say nothing about any token.
const (
	ReasonMissing       Reason = "missing"
	ReasonMalformed     Reason = "malformed"
	ReasonUnknown       Reason = "unknown"
	ReasonExpired       Reason = "expired"
	ReasonRevoked       Reason = "revoked"
	ReasonClientDeleted Reason = "client_deleted"
	// ReasonApproverGone: an OAuth client's token whose approving token
	// (the person's, pasted on the consent page) was revoked or expired.
	ReasonApproverGone Reason = "approver_revoked"
)

// RefusedError is a refused token: errors.Is(err, ErrInvalidToken) holds.
type RefusedError struct {
	Reason  Reason
	TokenID string    // set once the hash matched a stored token
	At      time.Time // when it expired or was revoked
	// Approver is the id of the approving token (ReasonApproverGone).
	Approver string
}

func (e *RefusedError) Error() string { return ErrInvalidToken.Error() + ": " + e.Description() }

// Is makes a RefusedError match ErrInvalidToken, and the SDK's, which a
// TokenVerifier's refusal must match (Verify).
func (e *RefusedError) Is(target error) bool {
	return target == ErrInvalidToken || target == sdkauth.ErrInvalidToken
}

// Description is what the holder is told (WWW-Authenticate
// error_description, the stdio error): why, and what to do.
func (e *RefusedError) Description() string {
	day := e.At.UTC().Format("2006-01-02 15:04 UTC")
	switch e.Reason {
	case ReasonMissing:
		return "no bearer token: send Authorization: Bearer <token> (vantagepeers connect prints a ready configuration)"
	case ReasonMalformed:
		return "the bearer token is malformed: a token is 64 hex characters on one line; copy it whole"
	case ReasonExpired:
		return fmt.Sprintf("token %s expired on %s — mint a new one with vantagepeers token create (or vantagepeers connect)", e.TokenID, day)
	case ReasonRevoked:
		return fmt.Sprintf("token %s was revoked on %s — ask the server's admin for a new one (vantagepeers token create)", e.TokenID, day)
	case ReasonApproverGone:
		if e.Approver == "" {
			return fmt.Sprintf("token %s was issued to an OAuth client on the approval of a token this server no longer knows — sign in again with a valid token", e.TokenID)
		}
		return fmt.Sprintf("token %s was issued to an OAuth client on the approval of token %s, which was revoked or expired on %s — sign in again with a valid token", e.TokenID, e.Approver, day)
	case ReasonClientDeleted:
		return fmt.Sprintf("token %s belonged to an OAuth client that was deleted — connect the client again", e.TokenID)
	}
	return "the bearer token is not known to this server (mistyped, from another server, or its data directory was reset) — mint one with vantagepeers token create"
}

// Refusal returns the refusal in err, or nil when err is not one.
func Refusal(err error) *RefusedError {
	var r *RefusedError
	if errors.As(err, &r) {
		return r
	}
	if errors.Is(err, ErrInvalidToken) {
		return &RefusedError{Reason: ReasonUnknown}
	}
	return nil
}

func refused(reason Reason) error { return &RefusedError{Reason: reason} }
