// Package seal is Pacerelle's end-to-end encryption: device identities,
// sealed envelopes, device lists and pairing codes.
//
// A message is sealed once: its body is encrypted with a fresh random
// AES-256-GCM content key, and that key is wrapped for every recipient
// device with HPKE (RFC 9180, base mode: ML-KEM-768+X25519, HKDF-SHA256,
// AES-256-GCM). HPKE's base mode does not authenticate the sender, so the
// sender device signs the whole envelope with Ed25519. The header (sender
// device and party, recipient parties, conversation, message id, the
// sender's device-list version, the time) is the body's associated data
// and part of every key wrap's info, so that nothing can be re-addressed:
// a key wrap moved to another envelope, or a body under another header,
// does not open.
//
// Replay is refused by message id: the receiver remembers the ids it has
// opened in a conversation (Seen) and an envelope with a known id is
// ErrReplay; ids are remembered for a window, and envelopes sent before
// it are refused (ErrTooOld). A per-sender counter was considered and rejected: a reply
// whose first send was lost is resent later, after newer replies, with its
// original (signed) bytes, and a monotonic counter would refuse it.
package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hpke"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"
)

// Suite identifiers written in every envelope.
const (
	// SuiteHPKE: the body is AES-256-GCM under a content key wrapped with
	// HPKE ML-KEM-768+X25519 / HKDF-SHA256 / AES-256-GCM.
	SuiteHPKE byte = 1
	// SuitePlain: the body is in clear (still signed). Only for debugging
	// the transport (--no-e2ee); Open refuses it unless allowed.
	SuitePlain byte = 0
)

var (
	// ErrMalformed: the bytes are not an envelope.
	ErrMalformed = errors.New("seal: malformed envelope")
	// ErrSignature: the envelope was altered or not signed by the sender
	// device it names.
	ErrSignature = errors.New("seal: bad signature")
	// ErrUnknownSender: the sender device is not in the pinned device list
	// of its party.
	ErrUnknownSender = errors.New("seal: sender device is not pinned")
	// ErrNotForMe: the envelope carries no key for this device.
	ErrNotForMe = errors.New("seal: envelope is not addressed to this device")
	// ErrDecrypt: a key wrap or the body does not open.
	ErrDecrypt = errors.New("seal: cannot decrypt")
	// ErrReplay: a message with this id was opened before.
	ErrReplay = errors.New("seal: message already seen")
	// ErrPlaintext: an unencrypted envelope where encryption is required.
	ErrPlaintext = errors.New("seal: envelope is not encrypted")
	// ErrTooOld: the envelope was sent before the replay window; it cannot
	// be told from a replay.
	ErrTooOld = errors.New("seal: envelope is older than the replay window")
	// ErrStaleList: the sender's device list is newer than the pinned one;
	// fetch and verify it (Pins.Update) first.
	ErrStaleList = errors.New("seal: sender device list is newer than the pinned one")
)

func kem() hpke.KEM   { return hpke.MLKEM768X25519() }
func kdf() hpke.KDF   { return hpke.HKDFSHA256() }
func aead() hpke.AEAD { return hpke.AES256GCM() }

// Device is the public half of a device identity: what other parties pin.
type Device struct {
	ID      string `json:"id"`
	Party   string `json:"party"`
	SignKey []byte `json:"signKey"` // Ed25519
	KEMKey  []byte `json:"kemKey"`  // HPKE ML-KEM-768+X25519
}

// Identity is a device's key pair. Its Bytes are secret.
type Identity struct {
	Device
	sign ed25519.PrivateKey
	kem  hpke.PrivateKey
}

// NewIdentity makes a fresh device identity.
func NewIdentity(party, id string) (*Identity, error) {
	if err := checkName("party", party); err != nil {
		return nil, err
	}
	if err := checkName("device", id); err != nil {
		return nil, err
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	k, err := kem().GenerateKey()
	if err != nil {
		return nil, err
	}
	return &Identity{Device: Device{ID: id, Party: party, SignKey: pub, KEMKey: k.PublicKey().Bytes()}, sign: priv, kem: k}, nil
}

// Bytes serialises the identity's secret keys (for the local state file).
func (id *Identity) Bytes() ([]byte, error) {
	kb, err := id.kem.Bytes()
	if err != nil {
		return nil, err
	}
	var w writer
	w.str(id.Party)
	w.str(id.ID)
	w.bytes(id.sign.Seed())
	w.bytes(kb)
	return w.b, nil
}

// ParseIdentity reads what Bytes wrote.
func ParseIdentity(b []byte) (*Identity, error) {
	r := reader{b: b}
	party, dev, seed, kb := r.str(), r.str(), r.bytes(), r.bytes()
	if r.err != nil || len(r.b) != 0 || len(seed) != ed25519.SeedSize {
		return nil, ErrMalformed
	}
	k, err := kem().NewPrivateKey(kb)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	return &Identity{Device: Device{ID: dev, Party: party, SignKey: priv.Public().(ed25519.PublicKey), KEMKey: k.PublicKey().Bytes()}, sign: priv, kem: k}, nil
}

// Sign signs msg under a domain-separation label.
func (id *Identity) Sign(label string, msg []byte) []byte {
	return ed25519.Sign(id.sign, labelled(label, msg))
}

// Verify checks a signature made by d with Sign.
func (d Device) Verify(label string, msg, sig []byte) bool {
	return len(d.SignKey) == ed25519.PublicKeySize && ed25519.Verify(d.SignKey, labelled(label, msg), sig)
}

func labelled(label string, msg []byte) []byte {
	return append([]byte("pacerelle/v1 "+label+"\x00"), msg...)
}

// Header is what an envelope says about itself; all of it is signed and
// bound into the encryption.
type Header struct {
	Suite        byte
	FromParty    string
	FromDevice   string
	To           []string // recipient parties
	Conversation string
	MessageID    string
	ListVersion  uint64 // the sender party's device-list version
	SentAtMs     int64
}

// Wrap is the content key wrapped for one recipient device.
type Wrap struct {
	Device string
	Enc    []byte // HPKE encapsulated key and ciphertext
}

// Envelope is a sealed message as it travels and is stored by the relay.
type Envelope struct {
	Header
	Wraps      []Wrap
	Nonce      []byte
	Ciphertext []byte
	Sig        []byte
}

// Seal encrypts body once for every device of recipients and signs it.
func Seal(from *Identity, h Header, recipients []Device, body []byte) (*Envelope, error) {
	h.FromParty, h.FromDevice = from.Party, from.ID
	if err := h.check(); err != nil {
		return nil, err
	}
	if len(recipients) == 0 || len(recipients) > MaxWraps {
		return nil, fmt.Errorf("seal: %d recipient devices; 1 to %d", len(recipients), MaxWraps)
	}
	if len(body) > MaxBody {
		return nil, fmt.Errorf("seal: the body is %d bytes; the limit is %d", len(body), MaxBody)
	}
	env := &Envelope{Header: h}
	hb := h.encode()
	if h.Suite == SuitePlain {
		env.Ciphertext = bytes.Clone(body)
		for _, d := range recipients {
			env.Wraps = append(env.Wraps, Wrap{Device: d.ID})
		}
	} else {
		key := make([]byte, 32)
		env.Nonce = make([]byte, 12)
		rand.Read(key)
		rand.Read(env.Nonce)
		gcm, err := newGCM(key)
		if err != nil {
			return nil, err
		}
		env.Ciphertext = gcm.Seal(nil, env.Nonce, body, hb)
		for _, d := range recipients {
			pk, err := kem().NewPublicKey(d.KEMKey)
			if err != nil {
				return nil, fmt.Errorf("seal: recipient %s: %w", d.ID, err)
			}
			enc, err := hpke.Seal(pk, kdf(), aead(), wrapInfo(hb, d.ID), key)
			if err != nil {
				return nil, err
			}
			env.Wraps = append(env.Wraps, Wrap{Device: d.ID, Enc: enc})
		}
	}
	env.Sig = from.Sign("envelope", env.signed())
	return env, nil
}

// Opened is an envelope that verified and decrypted.
type Opened struct {
	Header
	Body []byte
}

// OpenOptions tunes Open.
type OpenOptions struct {
	// AllowPlaintext accepts SuitePlain envelopes (debugging only).
	AllowPlaintext bool
	// MaxAge, when set, refuses envelopes sent longer ago than that
	// (ErrTooOld), so that Seen need only remember that long.
	MaxAge time.Duration
	// Now is the clock for MaxAge (time.Now when nil).
	Now func() time.Time
}

// Open verifies env against the pinned device list of its sender party,
// refuses a message id seen before, and decrypts it for me. A successful
// Open records the id in seen.
func Open(me *Identity, pins *Pins, seen *Seen, env *Envelope, o OpenOptions) (*Opened, error) {
	sender, err := pins.device(env.FromParty, env.FromDevice, env.ListVersion)
	if err != nil {
		return nil, err
	}
	if !sender.Verify("envelope", env.signed(), env.Sig) {
		return nil, ErrSignature
	}
	if seen.Has(env.Conversation, env.MessageID) {
		return nil, ErrReplay
	}
	if o.MaxAge > 0 {
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		if env.SentAtMs < now().Add(-o.MaxAge).UnixMilli() {
			return nil, ErrTooOld
		}
	}
	var mine *Wrap
	for i := range env.Wraps {
		if env.Wraps[i].Device == me.ID {
			mine = &env.Wraps[i]
		}
	}
	if mine == nil || !contains(env.To, me.Party) {
		return nil, ErrNotForMe
	}
	var body []byte
	switch env.Suite {
	case SuitePlain:
		if !o.AllowPlaintext {
			return nil, ErrPlaintext
		}
		body = bytes.Clone(env.Ciphertext)
	case SuiteHPKE:
		hb := env.Header.encode()
		key, err := hpke.Open(me.kem, kdf(), aead(), wrapInfo(hb, me.ID), mine.Enc)
		if err != nil || len(key) != 32 {
			return nil, ErrDecrypt
		}
		gcm, err := newGCM(key)
		if err != nil {
			return nil, err
		}
		if body, err = gcm.Open(nil, env.Nonce, env.Ciphertext, hb); err != nil {
			return nil, ErrDecrypt
		}
	default:
		return nil, ErrMalformed
	}
	seen.Add(env.Conversation, env.MessageID, env.SentAtMs)
	return &Opened{Header: env.Header, Body: body}, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func newGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// wrapInfo binds a key wrap to its header and its recipient device.
func wrapInfo(header []byte, device string) []byte {
	h := sha256.Sum256(header)
	return append(append([]byte("pacerelle/v1 wrap\x00"), h[:]...), device...)
}

// Seen is the set of message ids opened, by conversation, with the time
// each envelope says it was sent. It is the receiver's replay and
// duplicate filter, persisted with its state. It is bounded: ids older
// than a window can be pruned (Prune) because Open refuses envelopes sent
// before the window (OpenOptions.MaxAge) — a replay of one is refused as
// too old instead.
type Seen struct {
	IDs map[string]map[string]int64 `json:"ids"`
}

// Has reports whether id was opened in conversation.
func (s *Seen) Has(conversation, id string) bool {
	_, ok := s.IDs[conversation][id]
	return ok
}

// Add records id, sent at sentAtMs.
func (s *Seen) Add(conversation, id string, sentAtMs int64) {
	if s.IDs == nil {
		s.IDs = map[string]map[string]int64{}
	}
	if s.IDs[conversation] == nil {
		s.IDs[conversation] = map[string]int64{}
	}
	s.IDs[conversation][id] = sentAtMs
}

// Prune forgets the ids of envelopes sent before beforeMs.
func (s *Seen) Prune(beforeMs int64) {
	for conv, ids := range s.IDs {
		for id, at := range ids {
			if at < beforeMs {
				delete(ids, id)
			}
		}
		if len(ids) == 0 {
			delete(s.IDs, conv)
		}
	}
}
