package seal_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
)

// grindCandidates is how many candidate keys (and nonces) the grinding
// relay tries in each attack below: ten times what the v1 control needs
// on average at four digits, a tenth of what v1 needed at six.
const grindCandidates = 100_000

// encodeDevice is seal's device encoding (codec.go), written out here so
// that the v1 control below computes exactly what v1 shipped.
func encodeDevice(d seal.Device) []byte {
	var b []byte
	str := func(s string) { b = binary.BigEndian.AppendUint16(b, uint16(len(s))); b = append(b, s...) }
	raw := func(p []byte) { b = binary.BigEndian.AppendUint32(b, uint32(len(p))); b = append(b, p...) }
	str(d.Party)
	str(d.ID)
	raw(d.SignKey)
	raw(d.KEMKey)
	return b
}

// codeV1 is the v1 pairing code (seal.Code until issue 20) reduced modulo
// mod: SHA-256 over both devices' keys, sorted, with no commitment.
func codeV1(a, b seal.Device, mod uint32) uint32 {
	wa, wb := encodeDevice(a), encodeDevice(b)
	if bytes.Compare(wa, wb) > 0 {
		wa, wb = wb, wa
	}
	h := sha256.New()
	h.Write([]byte("pacerelle/v1 sas\x00"))
	h.Write(wa)
	h.Write(wb)
	return binary.BigEndian.Uint32(h.Sum(nil)) % mod
}

// candidate is the relay's i-th fake device: base with a fresh Ed25519
// key the relay holds (so it could sign everything the device signs).
func candidate(base seal.Device, i int) seal.Device {
	seed := make([]byte, ed25519.SeedSize)
	binary.BigEndian.PutUint64(seed, uint64(i)+1)
	copy(seed[8:], "relay grinding candidate key....")
	base.SignKey = ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	return base
}

func nonceOf(i int, salt byte) []byte {
	n := make([]byte, seal.NonceSize)
	binary.BigEndian.PutUint64(n, uint64(i))
	n[31] = salt
	return n
}

type mitm struct {
	agent, person *seal.Identity // the real ends
	fakeA, fakeP  seal.Device    // what the relay shows the person, the agent
}

func newMITM(t *testing.T) mitm {
	t.Helper()
	a, _ := seal.NewIdentity("agent:bot", "bridge")
	p, _ := seal.NewIdentity("person:ann", "phone")
	fa, _ := seal.NewIdentity("agent:bot", "bridge")
	fp, _ := seal.NewIdentity("person:ann", "phone")
	return mitm{agent: a, person: p, fakeA: fa.Device, fakeP: fp.Device}
}

// TestPairingGrindV1Control4Digits is the control of the grinding attack,
// against the v1 derivation with the code space shrunk to FOUR digits so
// that it runs in about a second (at six digits it is the ~10^6 keys,
// ~35 s, of issue 20's finding 4). The relay sees the person's key first,
// shows the agent a key of its own, and grinds the agent key it shows the
// person until both screens show the same code: it succeeds.
func TestPairingGrindV1Control4Digits(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (the race pass): one goroutine grinding keys has nothing to race; the normal run grinds the 10^5 candidates")
	}
	m := newMITM(t)
	const mod = 10_000
	agentScreen := codeV1(m.agent.Device, m.fakeP, mod) // the bridge sees the relay's person key
	for i := range grindCandidates {
		fa := candidate(m.fakeA, i)
		if personScreen := codeV1(fa, m.person.Device, mod); personScreen == agentScreen {
			t.Logf("v1 (4 digits): the relay matched both screens (%04d) after %d candidate keys", agentScreen, i+1)
			return
		}
	}
	t.Fatalf("the grinding relay found no match in %d candidate keys under v1 at 4 digits", grindCandidates)
}

// TestPairingGrindingRelayFails: the same relay under pairing v2, at the
// real six digits, in both orders it may run the two halves of its
// attack. It grinds grindCandidates keys and nonces for the contribution it
// must fix, guessing the nonce it cannot know yet; the honest side then
// supplies its real nonce and the two screens differ, so the person does not
// confirm. Once it knows every nonce it could grind a matching value, but it
// is bound by its commitment: TestPairingCommitReveal shows that a reveal of
// any other nonce or device is refused.
func TestPairingGrindingRelayFails(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (the race pass): one goroutine grinding keys has nothing to race; the normal run grinds the 10^5 candidates")
	}
	t.Run("bridge first, then grind the answer to the device", func(t *testing.T) {
		m := newMITM(t)
		// Toward the bridge the relay is the committer: it commits, the
		// bridge answers with a fresh nonce, the relay reveals.
		nFP := seal.NewPairingNonce()
		commitToBridge := seal.Commitment(m.fakeP, nFP)
		nA := seal.NewPairingNonce() // made by the bridge after the commitment
		if err := seal.CheckReveal(commitToBridge, m.fakeP, nFP); err != nil {
			t.Fatal(err)
		}
		agentScreen, _ := seal.PairingCode(m.fakeP, nFP, m.agent.Device, nA)
		// Toward the device the relay is the responder: the device commits,
		// and the relay must answer before the device's nonce is revealed.
		nP := seal.NewPairingNonce()
		deviceCommit := seal.Commitment(m.person.Device, nP)
		guess := nonceOf(0, 0xEE)
		pick, pickN, matchedUnderGuess := m.fakeA, nonceOf(0, 1), 0
		for i := range grindCandidates {
			fa, n := candidate(m.fakeA, i), nonceOf(i, 1)
			if c, _ := seal.PairingCode(m.person.Device, guess, fa, n); c == agentScreen {
				if matchedUnderGuess == 0 {
					pick, pickN = fa, n
				}
				matchedUnderGuess++
			}
		}
		// The device reveals; its screen:
		if err := seal.CheckReveal(deviceCommit, m.person.Device, nP); err != nil {
			t.Fatal(err)
		}
		personScreen, _ := seal.PairingCode(m.person.Device, nP, pick, pickN)
		t.Logf("v2: %d of %d candidates matched under the relay's guess of the device's nonce; the screens show %s and %s", matchedUnderGuess, grindCandidates, personScreen, agentScreen)
		if personScreen == agentScreen {
			t.Fatalf("the grinding relay made both screens show %s (probability 10^-6)", agentScreen)
		}
	})

	t.Run("device first, then grind the commitment to the bridge", func(t *testing.T) {
		m := newMITM(t)
		nP := seal.NewPairingNonce()
		deviceCommit := seal.Commitment(m.person.Device, nP)
		nFA := seal.NewPairingNonce() // the relay's answer to the device
		if err := seal.CheckReveal(deviceCommit, m.person.Device, nP); err != nil {
			t.Fatal(err)
		}
		personScreen, _ := seal.PairingCode(m.person.Device, nP, m.fakeA, nFA)
		// Toward the bridge the relay commits before the bridge's nonce
		// exists: it grinds person keys and nonces under a guess of it.
		guess := nonceOf(0, 0xEE)
		pick, pickN, matchedUnderGuess := m.fakeP, nonceOf(0, 2), 0
		for i := range grindCandidates {
			fp, n := candidate(m.fakeP, i), nonceOf(i, 2)
			if c, _ := seal.PairingCode(fp, n, m.agent.Device, guess); c == personScreen {
				if matchedUnderGuess == 0 {
					pick, pickN = fp, n
				}
				matchedUnderGuess++
			}
		}
		commitToBridge := seal.Commitment(pick, pickN)
		nA := seal.NewPairingNonce()
		if err := seal.CheckReveal(commitToBridge, pick, pickN); err != nil {
			t.Fatal(err)
		}
		agentScreen, _ := seal.PairingCode(pick, pickN, m.agent.Device, nA)
		t.Logf("v2: %d of %d candidates matched under the relay's guess of the bridge's nonce; the screens show %s and %s", matchedUnderGuess, grindCandidates, personScreen, agentScreen)
		if personScreen == agentScreen {
			t.Fatalf("the grinding relay made both screens show %s (probability 10^-6)", agentScreen)
		}

	})
}

// TestPairingCommitReveal: the honest flow agrees; a reveal of another
// nonce or device, an answer replayed from another pairing and a
// confirmation replayed from another pairing are all refused.
func TestPairingCommitReveal(t *testing.T) {
	m := newMITM(t)
	a, p := m.agent, m.person
	nP, nA := seal.NewPairingNonce(), seal.NewPairingNonce()
	commit := seal.Commitment(p.Device, nP)
	if bytes.Equal(commit, seal.Commitment(p.Device, seal.NewPairingNonce())) {
		t.Fatal("the commitment does not depend on the nonce")
	}
	ans := a.Sign(seal.AnswerLabel, seal.AnswerBytes(commit, nA))
	if err := seal.CheckAnswer(a.Device, commit, nA, ans); err != nil {
		t.Fatalf("the honest answer: %v", err)
	}
	if err := seal.CheckReveal(commit, p.Device, nP); err != nil {
		t.Fatalf("the honest reveal: %v", err)
	}
	devCode, err := seal.PairingCode(p.Device, nP, a.Device, nA)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := seal.PairingCode(p.Device, nP, a.Device, nA); c != devCode || len(c) != 6 {
		t.Fatalf("codes %q and %q", c, devCode)
	}
	if c, _ := seal.PairingCode(a.Device, nA, p.Device, nP); c == devCode {
		t.Error("the code does not bind who committed")
	}

	for name, reveal := range map[string]func() error{
		"another nonce":         func() error { return seal.CheckReveal(commit, p.Device, seal.NewPairingNonce()) },
		"another device":        func() error { return seal.CheckReveal(commit, m.fakeP, nP) },
		"a truncated nonce":     func() error { return seal.CheckReveal(commit, p.Device, nP[:16]) },
		"no commitment at all":  func() error { return seal.CheckReveal(nil, p.Device, nP) },
		"the commitment itself": func() error { return seal.CheckReveal(commit, p.Device, commit) },
	} {
		if err := reveal(); !errors.Is(err, seal.ErrCommitment) {
			t.Errorf("reveal of %s: %v, want ErrCommitment", name, err)
		}
	}

	// An answer made for an earlier pairing (another commitment) is refused.
	earlier := seal.Commitment(p.Device, seal.NewPairingNonce())
	old := a.Sign(seal.AnswerLabel, seal.AnswerBytes(earlier, nA))
	if err := seal.CheckAnswer(a.Device, commit, nA, old); err == nil {
		t.Error("an answer to another commitment was taken")
	}
	if err := seal.CheckAnswer(m.fakeA, commit, nA, ans); err == nil {
		t.Error("an answer verified under another agent key")
	}
	if err := seal.CheckAnswer(a.Device, commit, nA[:31], ans); err == nil {
		t.Error("a short answer nonce was taken")
	}

	tr, _ := seal.PairingTranscript(p.Device, nP, a.Device, nA)
	conf := p.Sign(seal.ConfirmLabel, tr)
	if !p.Device.Verify(seal.ConfirmLabel, tr, conf) {
		t.Fatal("the confirmation does not verify")
	}
	trOther, _ := seal.PairingTranscript(p.Device, seal.NewPairingNonce(), a.Device, nA)
	if p.Device.Verify(seal.ConfirmLabel, trOther, conf) {
		t.Error("a confirmation replayed from another pairing verifies")
	}
	if p.Device.Verify(seal.AnswerLabel, tr, conf) {
		t.Error("a confirmation verifies as another step of the protocol")
	}
	if _, err := seal.PairingCode(p.Device, nP[:8], a.Device, nA); err == nil {
		t.Error("a code over a short nonce")
	}
}
