package seal

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
)

// Pairing v2: a commit-then-reveal short authentication string.
//
// The v1 code was SHA-256 over the two devices' keys only. A relay that saw
// the person's key first could try its own keys until its fake agent key
// gave the person the same code the agent showed for a fake person key:
// about 10^6 key pairs, half a minute on one core, and every message after
// that was readable by the relay.
//
// In v2 each side adds a fresh 256-bit nonce, and the side that shows its
// key first (the committer: the person's device) first commits to its
// device and nonce (Commitment) before it sees anything of the other side.
// The responder (the agent's bridge) answers with its device and its own
// nonce; only then does the committer reveal its nonce, and the responder
// checks it against the commitment (CheckReveal). The code covers both
// devices and both nonces (PairingCode). Whatever the relay puts in the
// middle, each of the two codes depends on a nonce it did not know when it
// had to fix its own contribution to that code: toward the device, it
// answers before the device's nonce is revealed; toward the bridge, it
// commits before the bridge's nonce exists. So a relay that substitutes keys
// makes the two screens agree with probability 10^-6 per attempt, whatever
// it computes beforehand (shared/pacerelle/seal/sas_test.go runs that
// attack).
//
// This is the shape of ZRTP's hash commitment and of Bluetooth's numeric
// comparison.

// PairingVersion is the pairing protocol every side speaks. A peer that
// speaks another one is refused, never downgraded.
const PairingVersion = 2

// NonceSize is the size of a pairing nonce (256 bits).
const NonceSize = 32

// ErrCommitment: a revealed device or nonce does not match the commitment
// made before the other side answered.
var ErrCommitment = errors.New("seal: the reveal does not match the pairing commitment")

// Domain-separation labels of pairing v2: each hash and signature of the
// protocol has its own, so that no value of one step is a value of another.
const (
	commitLabel = "pacerelle/v2 sas commit\x00"
	codeLabel   = "pacerelle/v2 sas\x00"
	// AnswerLabel and ConfirmLabel are the Sign labels of the responder's
	// answer and of the committer's confirmation.
	AnswerLabel  = "pairing/v2 answer"
	ConfirmLabel = "pairing/v2 confirm"
)

// NewPairingNonce returns a fresh random nonce.
func NewPairingNonce() []byte {
	n := make([]byte, NonceSize)
	rand.Read(n)
	return n
}

func checkNonce(field string, n []byte) error {
	if len(n) != NonceSize {
		return fmt.Errorf("seal: %s must be %d bytes, not %d", field, NonceSize, len(n))
	}
	return nil
}

// Commitment is what the committer sends first: SHA-256 over its device's
// keys and its nonce. It reveals nothing of the nonce.
func Commitment(d Device, nonce []byte) []byte {
	var w writer
	w.b = append(w.b, commitLabel...)
	d.encode(&w)
	w.bytes(nonce)
	sum := sha256.Sum256(w.b)
	return sum[:]
}

// CheckReveal checks a revealed device and nonce against a commitment.
func CheckReveal(commit []byte, d Device, nonce []byte) error {
	if err := checkNonce("the revealed nonce", nonce); err != nil {
		return fmt.Errorf("%w: %v", ErrCommitment, err)
	}
	if len(commit) != sha256.Size || subtle.ConstantTimeCompare(commit, Commitment(d, nonce)) != 1 {
		return ErrCommitment
	}
	return nil
}

// transcriptV2 is every value of a pairing, in protocol roles (not sorted:
// the roles are part of what is agreed).
func transcriptV2(committer Device, cNonce []byte, responder Device, rNonce []byte) ([]byte, error) {
	if err := checkNonce("the committer's nonce", cNonce); err != nil {
		return nil, err
	}
	if err := checkNonce("the responder's nonce", rNonce); err != nil {
		return nil, err
	}
	var w writer
	w.u16(PairingVersion)
	committer.encode(&w)
	w.bytes(cNonce)
	responder.encode(&w)
	w.bytes(rNonce)
	return w.b, nil
}

// PairingCode is the six-digit code both screens show: SHA-256 over both
// devices and both nonces, reduced from 64 bits (a bias under 10^-13).
func PairingCode(committer Device, cNonce []byte, responder Device, rNonce []byte) (string, error) {
	t, err := transcriptV2(committer, cNonce, responder, rNonce)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte(codeLabel), t...))
	return fmt.Sprintf("%06d", binary.BigEndian.Uint64(sum[:8])%1_000_000), nil
}

// PairingTranscript is what the committer signs (ConfirmLabel) once the
// person saw the same code on both screens. The responder verifies it
// against its own view, so a confirmation of a view the relay altered
// does not verify.
func PairingTranscript(committer Device, cNonce []byte, responder Device, rNonce []byte) ([]byte, error) {
	return transcriptV2(committer, cNonce, responder, rNonce)
}

// AnswerBytes is what the responder signs (AnswerLabel): its nonce bound
// to the commitment it answers, so that an answer cannot be replayed to
// another pairing.
func AnswerBytes(commit, rNonce []byte) []byte {
	var w writer
	w.u16(PairingVersion)
	w.bytes(commit)
	w.bytes(rNonce)
	return w.b
}

// CheckAnswer checks the responder's answer to commit: its nonce's size and
// its signature by responder.
func CheckAnswer(responder Device, commit, rNonce, sig []byte) error {
	if err := checkNonce("the answer's nonce", rNonce); err != nil {
		return err
	}
	if !responder.Verify(AnswerLabel, AnswerBytes(commit, rNonce), sig) {
		return fmt.Errorf("seal: the pairing answer is not signed by the agent's device for this commitment: %w", ErrSignature)
	}
	return nil
}

// SameNonce reports whether two nonces are equal (in constant time).
func SameNonce(a, b []byte) bool {
	return len(a) == len(b) && subtle.ConstantTimeCompare(a, b) == 1
}
