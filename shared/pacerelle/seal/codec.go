package seal

import (
	"encoding/binary"
	"fmt"
)

// Limits of an envelope; Decode refuses anything beyond them. A largest
// envelope (MaxBody and MaxWraps wraps of MaxName-byte device ids) is
// under 240 KiB, so that it fits one store item in base64 (relay).
const (
	MaxName       = 100 // party, device, conversation and message ids
	MaxRecipients = 16  // recipient parties
	MaxWraps      = 32  // recipient devices
	MaxBody       = 192 << 10
	maxEnc        = 4096
)

var magic = []byte("PCR1")

func checkName(field, s string) error {
	if s == "" || len(s) > MaxName {
		return fmt.Errorf("seal: %s must be 1 to %d bytes", field, MaxName)
	}
	return nil
}

func (h Header) check() error {
	if h.Suite != SuiteHPKE && h.Suite != SuitePlain {
		return fmt.Errorf("seal: unknown suite %d", h.Suite)
	}
	for _, f := range [][2]string{{"fromParty", h.FromParty}, {"fromDevice", h.FromDevice}, {"conversation", h.Conversation}, {"messageId", h.MessageID}} {
		if err := checkName(f[0], f[1]); err != nil {
			return err
		}
	}
	if len(h.To) == 0 || len(h.To) > MaxRecipients {
		return fmt.Errorf("seal: to must name 1 to %d parties", MaxRecipients)
	}
	for _, p := range h.To {
		if err := checkName("to", p); err != nil {
			return err
		}
	}
	return nil
}

func (h Header) encode() []byte {
	var w writer
	w.b = append(w.b, magic...)
	w.b = append(w.b, h.Suite)
	w.str(h.FromParty)
	w.str(h.FromDevice)
	w.u16(len(h.To))
	for _, p := range h.To {
		w.str(p)
	}
	w.str(h.Conversation)
	w.str(h.MessageID)
	w.u64(h.ListVersion)
	w.u64(uint64(h.SentAtMs))
	return w.b
}

// signed is every byte of the envelope but the signature.
func (e *Envelope) signed() []byte {
	w := writer{b: e.Header.encode()}
	w.u16(len(e.Wraps))
	for _, k := range e.Wraps {
		w.str(k.Device)
		w.bytes(k.Enc)
	}
	w.bytes(e.Nonce)
	w.bytes(e.Ciphertext)
	return w.b
}

// Encode is the envelope's wire form.
func (e *Envelope) Encode() []byte {
	w := writer{b: e.signed()}
	w.bytes(e.Sig)
	return w.b
}

// Decode parses an envelope's wire form. It checks the shape only; Open
// checks the signature.
func Decode(b []byte) (*Envelope, error) {
	if len(b) < len(magic)+1 || string(b[:len(magic)]) != string(magic) {
		return nil, ErrMalformed
	}
	r := reader{b: b[len(magic)+1:]}
	e := &Envelope{}
	e.Suite = b[len(magic)]
	e.FromParty, e.FromDevice = r.str(), r.str()
	n := r.u16()
	if n > MaxRecipients {
		return nil, ErrMalformed
	}
	for range n {
		e.To = append(e.To, r.str())
	}
	e.Conversation, e.MessageID = r.str(), r.str()
	e.ListVersion, e.SentAtMs = r.u64(), int64(r.u64())
	n = r.u16()
	if n > MaxWraps {
		return nil, ErrMalformed
	}
	for range n {
		dev, enc := r.str(), r.bytes()
		if len(enc) > maxEnc {
			return nil, ErrMalformed
		}
		e.Wraps = append(e.Wraps, Wrap{Device: dev, Enc: enc})
	}
	e.Nonce, e.Ciphertext, e.Sig = r.bytes(), r.bytes(), r.bytes()
	if r.err != nil || len(r.b) != 0 || len(e.Ciphertext) > MaxBody+16 || len(e.Wraps) == 0 {
		return nil, ErrMalformed
	}
	if e.Header.check() != nil {
		return nil, ErrMalformed
	}
	for _, k := range e.Wraps {
		if checkName("device", k.Device) != nil {
			return nil, ErrMalformed
		}
	}
	if e.Suite == SuiteHPKE && len(e.Nonce) != 12 {
		return nil, ErrMalformed
	}
	return e, nil
}

type writer struct{ b []byte }

func (w *writer) u16(n int)    { w.b = binary.BigEndian.AppendUint16(w.b, uint16(n)) }
func (w *writer) u64(n uint64) { w.b = binary.BigEndian.AppendUint64(w.b, n) }
func (w *writer) str(s string) { w.u16(len(s)); w.b = append(w.b, s...) }
func (w *writer) bytes(p []byte) {
	w.b = binary.BigEndian.AppendUint32(w.b, uint32(len(p)))
	w.b = append(w.b, p...)
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || n > len(r.b) {
		r.err = ErrMalformed
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) u16() int {
	p := r.take(2)
	if p == nil {
		return 0
	}
	return int(binary.BigEndian.Uint16(p))
}

func (r *reader) u64() uint64 {
	p := r.take(8)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint64(p)
}

func (r *reader) str() string {
	return string(r.take(r.u16()))
}

func (r *reader) bytes() []byte {
	p := r.take(4)
	if p == nil {
		return nil
	}
	n := binary.BigEndian.Uint32(p)
	if n > MaxBody+1024 {
		r.err = ErrMalformed
		return nil
	}
	return r.take(int(n))
}
