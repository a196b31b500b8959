package seal_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
)

type party struct {
	ids  []*seal.Identity
	list seal.DeviceList
}

func newParty(t testing.TB, name string, n int) party {
	t.Helper()
	var p party
	var devs []seal.Device
	for i := range n {
		id, err := seal.NewIdentity(name, fmt.Sprintf("%s-d%d", name, i))
		if err != nil {
			t.Fatal(err)
		}
		p.ids = append(p.ids, id)
		devs = append(devs, id.Device)
	}
	p.list = seal.SignList(p.ids[0], 1, devs)
	return p
}

func pinsOf(t testing.TB, lists ...seal.DeviceList) *seal.Pins {
	t.Helper()
	p := &seal.Pins{}
	for _, l := range lists {
		if err := p.Pin(l); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func header(msg string) seal.Header {
	return seal.Header{Suite: seal.SuiteHPKE, To: []string{"person"}, Conversation: "c1", MessageID: msg, ListVersion: 1, SentAtMs: 1700000000000}
}

// TestRoundTrip: one seal opens on every recipient device, for 1, 3 and
// 10 devices, through the wire form.
func TestRoundTrip(t *testing.T) {
	agent := newParty(t, "agent", 1)
	for _, n := range []int{1, 3, 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			person := newParty(t, "person", n)
			body := []byte("please publish the report")
			env, err := seal.Seal(agent.ids[0], header("m1"), person.list.Devices, body)
			if err != nil {
				t.Fatal(err)
			}
			if len(env.Wraps) != n {
				t.Fatalf("%d wraps, want %d", len(env.Wraps), n)
			}
			wire := env.Encode()
			if bytes.Contains(wire, body) {
				t.Fatal("the wire form contains the plaintext")
			}
			for _, d := range person.ids {
				got, err := seal.Decode(wire)
				if err != nil {
					t.Fatal(err)
				}
				op, err := seal.Open(d, pinsOf(t, agent.list), &seal.Seen{}, got, seal.OpenOptions{})
				if err != nil {
					t.Fatalf("device %s: %v", d.ID, err)
				}
				if !bytes.Equal(op.Body, body) || op.MessageID != "m1" || op.FromDevice != "agent-d0" {
					t.Fatalf("device %s opened %+v", d.ID, op)
				}
			}
		})
	}
}

// TestTamper: changing any byte of the wire form, any header field, or
// truncating it makes it refused.
func TestTamper(t *testing.T) {
	agent, person := newParty(t, "agent", 1), newParty(t, "person", 2)
	env, err := seal.Seal(agent.ids[0], header("m1"), person.list.Devices, []byte("secret body"))
	if err != nil {
		t.Fatal(err)
	}
	wire := env.Encode()
	open := func(b []byte) error {
		e, err := seal.Decode(b)
		if err != nil {
			return err
		}
		_, err = seal.Open(person.ids[0], pinsOf(t, agent.list), &seal.Seen{}, e, seal.OpenOptions{})
		return err
	}
	if err := open(wire); err != nil {
		t.Fatal(err)
	}
	for i := range wire {
		b := bytes.Clone(wire)
		b[i] ^= 0x01
		if open(b) == nil {
			t.Fatalf("byte %d flipped: opened", i)
		}
	}
	for _, n := range []int{0, 4, len(wire) / 2, len(wire) - 1} {
		if open(wire[:n]) == nil {
			t.Fatalf("truncated to %d: opened", n)
		}
	}
	fields := map[string]func(e *seal.Envelope){
		"suite":        func(e *seal.Envelope) { e.Suite = seal.SuitePlain },
		"fromParty":    func(e *seal.Envelope) { e.FromParty = "person" },
		"fromDevice":   func(e *seal.Envelope) { e.FromDevice = "agent-d1" },
		"to":           func(e *seal.Envelope) { e.To = []string{"person", "eve"} },
		"conversation": func(e *seal.Envelope) { e.Conversation = "c2" },
		"messageId":    func(e *seal.Envelope) { e.MessageID = "m2" },
		"listVersion":  func(e *seal.Envelope) { e.ListVersion = 0 },
		"sentAt":       func(e *seal.Envelope) { e.SentAtMs++ },
		"wrapDevice":   func(e *seal.Envelope) { e.Wraps[0].Device = "person-d1" },
		"wrapDropped":  func(e *seal.Envelope) { e.Wraps = e.Wraps[1:] },
		"wrapSwapped":  func(e *seal.Envelope) { e.Wraps[0].Enc, e.Wraps[1].Enc = e.Wraps[1].Enc, e.Wraps[0].Enc },
		"nonce":        func(e *seal.Envelope) { e.Nonce = bytes.Repeat([]byte{1}, 12) },
		"ciphertext":   func(e *seal.Envelope) { e.Ciphertext = e.Ciphertext[:len(e.Ciphertext)-1] },
		"sig":          func(e *seal.Envelope) { e.Sig = e.Sig[:10] },
	}
	for name, change := range fields {
		t.Run(name, func(t *testing.T) {
			e, _ := seal.Decode(wire)
			change(e)
			if err := open(e.Encode()); err == nil {
				t.Fatal("opened")
			}
		})
	}
}

// TestRefusals: the envelope is refused by a device it was not sealed for,
// by a receiver that has not pinned the sender, when replayed, when its
// sender re-signs it with a key not pinned, and when it is plaintext.
func TestRefusals(t *testing.T) {
	agent, person, eve := newParty(t, "agent", 1), newParty(t, "person", 1), newParty(t, "eve", 1)
	env, err := seal.Seal(agent.ids[0], header("m1"), person.list.Devices, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	seen := &seal.Seen{}
	pins := pinsOf(t, agent.list)
	if _, err := seal.Open(person.ids[0], pins, seen, env, seal.OpenOptions{}); err != nil {
		t.Fatal(err)
	}
	// Eve is a party the envelope does not name, even with the pins.
	if _, err := seal.Open(eve.ids[0], pins, &seal.Seen{}, env, seal.OpenOptions{}); !errors.Is(err, seal.ErrNotForMe) {
		t.Errorf("wrong recipient: %v", err)
	}
	if _, err := seal.Open(person.ids[0], pins, seen, env, seal.OpenOptions{}); !errors.Is(err, seal.ErrReplay) {
		t.Errorf("replay: %v", err)
	}
	if _, err := seal.Open(person.ids[0], &seal.Pins{}, &seal.Seen{}, env, seal.OpenOptions{}); !errors.Is(err, seal.ErrUnknownSender) {
		t.Errorf("unpinned sender: %v", err)
	}
	// An impostor device with the agent's names but its own keys.
	fake, _ := seal.NewIdentity("agent", "agent-d0")
	forged, _ := seal.Seal(fake, header("m2"), person.list.Devices, []byte("hello"))
	if _, err := seal.Open(person.ids[0], pins, &seal.Seen{}, forged, seal.OpenOptions{}); !errors.Is(err, seal.ErrSignature) {
		t.Errorf("forged sender: %v", err)
	}
	// A newer sender list than pinned: update first.
	h := header("m3")
	h.ListVersion = 2
	newer, _ := seal.Seal(agent.ids[0], h, person.list.Devices, []byte("x"))
	if _, err := seal.Open(person.ids[0], pins, &seal.Seen{}, newer, seal.OpenOptions{}); !errors.Is(err, seal.ErrStaleList) {
		t.Errorf("newer list: %v", err)
	}
	h = header("m4")
	h.Suite = seal.SuitePlain
	plain, _ := seal.Seal(agent.ids[0], h, person.list.Devices, []byte("clear"))
	if _, err := seal.Open(person.ids[0], pins, &seal.Seen{}, plain, seal.OpenOptions{}); !errors.Is(err, seal.ErrPlaintext) {
		t.Errorf("plaintext: %v", err)
	}
	if op, err := seal.Open(person.ids[0], pins, &seal.Seen{}, plain, seal.OpenOptions{AllowPlaintext: true}); err != nil || string(op.Body) != "clear" {
		t.Errorf("plaintext allowed: %v", err)
	}
}

// TestReplayWindow: an envelope sent before the window is refused, and
// pruning forgets only ids sent before it.
func TestReplayWindow(t *testing.T) {
	agent, person := newParty(t, "agent", 1), newParty(t, "person", 1)
	now := time.UnixMilli(1700000000000 + 10*86400_000)
	o := seal.OpenOptions{MaxAge: 7 * 24 * time.Hour, Now: func() time.Time { return now }}
	old, _ := seal.Seal(agent.ids[0], header("old"), person.list.Devices, []byte("x")) // sent 10 days before now
	if _, err := seal.Open(person.ids[0], pinsOf(t, agent.list), &seal.Seen{}, old, o); !errors.Is(err, seal.ErrTooOld) {
		t.Fatalf("old envelope: %v", err)
	}
	h := header("recent")
	h.SentAtMs = now.Add(-time.Hour).UnixMilli()
	recent, _ := seal.Seal(agent.ids[0], h, person.list.Devices, []byte("x"))
	seen := &seal.Seen{}
	if _, err := seal.Open(person.ids[0], pinsOf(t, agent.list), seen, recent, o); err != nil {
		t.Fatal(err)
	}
	seen.Add("c1", "ancient", 1)
	seen.Prune(now.Add(-o.MaxAge).UnixMilli())
	if seen.Has("c1", "ancient") || !seen.Has("c1", "recent") {
		t.Fatalf("after prune: %v", seen.IDs)
	}
}

// TestPairingCodeDetectsSubstitution: both sides compute the same code
// over the real keys and nonces; a relay that hands either side a key of
// its own makes the codes differ, and a confirmation signed over the
// substituted view does not verify against the real one.
func TestPairingCodeDetectsSubstitution(t *testing.T) {
	agent, person := newParty(t, "agent", 1), newParty(t, "person", 1)
	a, p := agent.ids[0].Device, person.ids[0].Device
	nP, nA := seal.NewPairingNonce(), seal.NewPairingNonce()
	code := func(p, a seal.Device) string {
		c, err := seal.PairingCode(p, nP, a, nA)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if len(code(p, a)) != 6 {
		t.Fatalf("code %q is not six digits", code(p, a))
	}
	mitmA, _ := seal.NewIdentity("agent", "agent-d0")
	mitmP, _ := seal.NewIdentity("person", "person-d0")
	// The person sees the relay's agent key; the agent sees the real person key.
	if code(p, mitmA.Device) == code(p, a) {
		t.Error("substituted agent key: same code")
	}
	if code(mitmP.Device, a) == code(p, a) {
		t.Error("substituted person key: same code")
	}
	seen, _ := seal.PairingTranscript(p, nP, mitmA.Device, nA)
	real, _ := seal.PairingTranscript(p, nP, a, nA)
	conf := person.ids[0].Sign(seal.ConfirmLabel, seen)
	if p.Verify(seal.ConfirmLabel, real, conf) {
		t.Error("a confirmation of the substituted view verifies against the real one")
	}
	if !p.Verify(seal.ConfirmLabel, seen, conf) {
		t.Error("the confirmation does not verify against its own view")
	}
}

// TestDeviceList: a new device joins through a newer list signed by a
// pinned device; a list signed by an unpinned device, an older or equal
// version, or an altered list is refused.
func TestDeviceList(t *testing.T) {
	person := newParty(t, "person", 1)
	pins := pinsOf(t, person.list)
	laptop, _ := seal.NewIdentity("person", "person-laptop")
	v2 := seal.SignList(person.ids[0], 2, append(person.list.Devices, laptop.Device))
	self := seal.SignList(laptop, 3, append(person.list.Devices, laptop.Device))
	if err := pins.Update(self); err == nil {
		t.Error("a list signed by the unconfirmed device was accepted")
	}
	altered := v2
	altered.Devices = []seal.Device{laptop.Device}
	if err := pins.Update(altered); err == nil {
		t.Error("an altered list was accepted")
	}
	if err := pins.Update(v2); err != nil {
		t.Fatal(err)
	}
	if len(pins.Devices("person")) != 2 {
		t.Fatalf("%d devices pinned, want 2", len(pins.Devices("person")))
	}
	if err := pins.Update(v2); err == nil {
		t.Error("the same version twice was accepted")
	}
	if err := pins.Update(seal.SignList(laptop, 3, []seal.Device{laptop.Device})); err != nil {
		t.Errorf("the confirmed device signs v3: %v", err)
	}
}

// TestIdentityBytes: an identity survives its serialisation.
func TestIdentityBytes(t *testing.T) {
	agent, person := newParty(t, "agent", 1), newParty(t, "person", 1)
	b, err := person.ids[0].Bytes()
	if err != nil {
		t.Fatal(err)
	}
	back, err := seal.ParseIdentity(b)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := seal.Seal(agent.ids[0], header("m1"), person.list.Devices, []byte("x"))
	if _, err := seal.Open(back, pinsOf(t, agent.list), &seal.Seen{}, env, seal.OpenOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := seal.ParseIdentity(b[:len(b)-1]); err == nil {
		t.Error("a truncated identity parsed")
	}
}

func BenchmarkSeal(b *testing.B) {
	agent := newParty(b, "agent", 1)
	body := bytes.Repeat([]byte("r"), 1024)
	for _, n := range []int{1, 3, 10} {
		person := newParty(b, "person", n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := seal.Seal(agent.ids[0], header("m1"), person.list.Devices, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkOpen(b *testing.B) {
	agent := newParty(b, "agent", 1)
	pins := pinsOf(b, agent.list)
	body := bytes.Repeat([]byte("r"), 1024)
	for _, n := range []int{1, 3, 10} {
		person := newParty(b, "person", n)
		env, _ := seal.Seal(agent.ids[0], header("m1"), person.list.Devices, body)
		wire := env.Encode()
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				e, err := seal.Decode(wire)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := seal.Open(person.ids[n-1], pins, &seal.Seen{}, e, seal.OpenOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzDecode: the decoder never panics, and whatever it accepts encodes
// back to the same bytes.
func FuzzDecode(f *testing.F) {
	agent, person := newParty(f, "agent", 1), newParty(f, "person", 2)
	env, _ := seal.Seal(agent.ids[0], header("m1"), person.list.Devices, []byte("hello"))
	f.Add(env.Encode())
	f.Add([]byte("PCR1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := seal.Decode(b)
		if err != nil {
			return
		}
		if !bytes.Equal(e.Encode(), b) {
			t.Fatalf("decode/encode changed the bytes")
		}
	})
}
