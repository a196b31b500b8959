package tests

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
)

// TestPacerelleWebCryptoInterop: the browser's cryptography (pcr.js, the
// file the web app serves, with the bundled HPKE X-Wing) and
// shared/pacerelle/seal open each other's envelopes, agree on the pairing
// code and fingerprint, and verify each other's signatures; each side
// refuses an altered envelope and a replay. Run in node (the same WebCrypto
// API as Chromium).
func TestPacerelleWebCryptoInterop(t *testing.T) {
	node := requireNode(t)
	cmd := exec.Command(node, filepath.Join(testsDir, "clients", "pacerelle-interop.mjs"),
		filepath.Join(repoRoot, "shared", "pacerelle", "webapp", "static", "pcr.js"))
	cmd.Dir = testsDir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	ask := func(req any, out any) {
		t.Helper()
		b, _ := json.Marshal(req)
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("node ended: %v\n%s", lines.Err(), stderr.String())
		}
		var e struct{ Error string }
		_ = json.Unmarshal(lines.Bytes(), &e)
		if e.Error != "" {
			t.Fatalf("node: %s", e.Error)
		}
		if err := json.Unmarshal(lines.Bytes(), out); err != nil {
			t.Fatalf("node said %s: %v", lines.Text(), err)
		}
	}

	agent, err := seal.NewIdentity("agent:alice", "bridge")
	if err != nil {
		t.Fatal(err)
	}
	agentList := seal.SignList(agent, 1, []seal.Device{agent.Device})
	// Pairing v2, the browser committing: its commitment must open to its
	// revealed nonce, an answer for another commitment must be refused,
	// and both sides must agree on the code.
	var started struct {
		Device seal.Device
		List   seal.DeviceList
		Commit []byte
	}
	ask(map[string]any{"op": "pair", "agentList": agentList}, &started)
	agentNonce := seal.NewPairingNonce()
	other := seal.Commitment(agent.Device, agentNonce)
	req, _ := json.Marshal(map[string]any{"op": "answer", "nonce": agentNonce, "sig": agent.Sign(seal.AnswerLabel, seal.AnswerBytes(other, agentNonce)), "body": "x"})
	_, _ = stdin.Write(append(req, '\n'))
	if !lines.Scan() || !strings.Contains(lines.Text(), "not signed by its device for this commitment") {
		t.Errorf("the browser took an answer to another commitment: %s", lines.Text())
	}
	var got struct {
		Nonce             []byte
		Code, Fingerprint string
		Confirm, Envelope []byte
	}
	ask(map[string]any{"op": "answer", "nonce": agentNonce, "sig": agent.Sign(seal.AnswerLabel, seal.AnswerBytes(started.Commit, agentNonce)), "body": "bonjour from the browser"}, &got)
	browser := struct {
		Device seal.Device
		List   seal.DeviceList
	}{started.Device, started.List}

	if len(browser.Device.KEMKey) != 1216 || len(browser.Device.SignKey) != 32 {
		t.Fatalf("browser device keys: kem %d bytes (want 1216, X-Wing), sign %d (want 32)", len(browser.Device.KEMKey), len(browser.Device.SignKey))
	}
	if err := seal.CheckReveal(started.Commit, browser.Device, got.Nonce); err != nil {
		t.Errorf("the browser's commitment does not open to its reveal: %v", err)
	}
	if want, _ := seal.PairingCode(browser.Device, got.Nonce, agent.Device, agentNonce); got.Code != want || len(want) != 6 {
		t.Errorf("pairing code: browser %s, seal %s", got.Code, want)
	}
	if want := seal.Fingerprint(agent.Device); got.Fingerprint != want {
		t.Errorf("fingerprint: browser %s, seal %s", got.Fingerprint, want)
	}
	if tr, _ := seal.PairingTranscript(browser.Device, got.Nonce, agent.Device, agentNonce); !browser.Device.Verify(seal.ConfirmLabel, tr, got.Confirm) {
		t.Error("the browser's pairing confirmation does not verify")
	}
	var pins seal.Pins
	if err := pins.Pin(browser.List); err != nil {
		t.Fatalf("the browser's signed device list: %v", err)
	}
	if err := pins.Pin(agentList); err != nil {
		t.Fatal(err)
	}
	env, err := seal.Decode(got.Envelope)
	if err != nil {
		t.Fatalf("decode the browser's envelope: %v", err)
	}
	var seen seal.Seen
	op, err := seal.Open(agent, &pins, &seen, env, seal.OpenOptions{MaxAge: time.Hour})
	if err != nil {
		t.Fatalf("seal.Open of the browser's envelope: %v", err)
	}
	if string(op.Body) != "bonjour from the browser" || op.FromParty != "person:bob" || op.Conversation != "c1" {
		t.Fatalf("opened %q from %s in %s", op.Body, op.FromParty, op.Conversation)
	}
	bad := append([]byte(nil), got.Envelope...)
	bad[len(bad)-80] ^= 1
	if be, err := seal.Decode(bad); err == nil {
		if _, err := seal.Open(agent, &pins, &seal.Seen{}, be, seal.OpenOptions{}); err == nil {
			t.Error("seal opened an altered browser envelope")
		}
	}

	reply, err := seal.Seal(agent, seal.Header{Suite: seal.SuiteHPKE, To: []string{"person:bob"}, Conversation: "c1", MessageID: "r1",
		ListVersion: 1, SentAtMs: time.Now().UnixMilli()}, []seal.Device{browser.Device}, []byte("réponse de l'agent"))
	if err != nil {
		t.Fatal(err)
	}
	var opened struct{ Body string }
	ask(map[string]string{"op": "open", "envelope": base64.StdEncoding.EncodeToString(reply.Encode())}, &opened)
	if opened.Body != "réponse de l'agent" {
		t.Fatalf("the browser opened %q", opened.Body)
	}
	for name, b := range map[string][]byte{"a replay": reply.Encode(), "an altered envelope": flip(reply.Encode())} {
		req, _ := json.Marshal(map[string]string{"op": "open", "envelope": base64.StdEncoding.EncodeToString(b)})
		_, _ = stdin.Write(append(req, '\n'))
		if !lines.Scan() || !strings.Contains(lines.Text(), `"error"`) {
			t.Errorf("the browser accepted %s: %s", name, lines.Text())
		}
	}
}

func flip(b []byte) []byte {
	b = append([]byte(nil), b...)
	b[len(b)-100] ^= 1
	return b
}
