package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relay"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/requester"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
)

// TestPairingCodeShownPendingThenPinned: the normal flow — the bridge
// shows the started pairing with the code the person's device shows
// (newWorld's person confirms only once the bridge's pending code equals
// its own), then pins that device with the same code and shows nothing
// pending.
func TestPairingCodeShownPendingThenPinned(t *testing.T) {
	w := newWorld(t)
	deadline := time.Now().Add(10 * time.Second)
	var st map[string]any
	for {
		st = w.ok(t, "get_status", nil)
		if len(st["pairings"].([]any)) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	ps := st["pairings"].([]any)
	if len(ps) != 1 || len(st["pending_pairings"].([]any)) != 0 || len(st["refused_pairings"].([]any)) != 0 {
		t.Fatalf("status: %v", st)
	}
	if p := ps[0].(map[string]any); p["code"] != w.code || p["person"] != "person:ann" || w.code == "" {
		t.Fatalf("pinned %v; the person's device showed %q", p, w.code)
	}
}

// TestPairingKeySubstitution runs against a relay that lies to the bridge
// (the test's HTTP wrapper rewrites its GET pairings answer, which is the
// documented wire format): it swaps eve's device key for its own, signing
// a confirmation with it. Whether it swaps before the codes are compared
// or between the comparison and the confirmation, nothing is pinned.
func TestPairingKeySubstitution(t *testing.T) {
	for _, c := range []struct {
		name      string
		swapFirst bool // substitute from the start: the codes differ
	}{{"between pending and confirm", false}, {"from the start", true}} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			eve, _ := seal.NewIdentity(relay.PersonParty("eve"), "phone")
			fake, _ := seal.NewIdentity(relay.PersonParty("eve"), "phone")
			// Read once: the lying relay may still answer a late fetch while
			// the world stops and clears w.bridge.
			agent := w.bridge.me.Device
			swap := func(body []byte) []byte {
				var out struct {
					Pairings []relay.PairingView `json:"pairings"`
				}
				if err := json.Unmarshal(body, &out); err != nil {
					return body
				}
				for i, p := range out.Pairings {
					if p.Person != "person:eve" {
						continue
					}
					out.Pairings[i].PersonList, _ = json.Marshal(seal.SignList(fake, 1, []seal.Device{fake.Device}))
					if len(p.Confirmation) > 0 {
						out.Pairings[i].Confirmation = fake.Sign("pairing", seal.Transcript(agent, fake.Device))
					}
				}
				b, _ := json.Marshal(out)
				return b
			}
			if c.swapFirst {
				w.tamper.Store(&swap)
			}
			started, err := (&relay.Client{BaseURL: w.srv.URL, Token: "eve-tok"}).StartPairing(ctx, "bot", "", eve.Device, seal.SignList(eve, 1, []seal.Device{eve.Device}))
			if err != nil {
				t.Fatal(err)
			}
			var agentList seal.DeviceList
			_ = json.Unmarshal(started.AgentList, &agentList)
			evesCode := seal.Code(agentList.Devices[0], eve.Device)
			shown, ok := w.waitShown("person:eve")
			if !ok {
				t.Fatal("the bridge never showed eve's pairing as pending")
			}
			if (shown.Code == evesCode) == c.swapFirst {
				t.Fatalf("the bridge shows code %s, eve's device %s (substituted from the start: %v)", shown.Code, evesCode, c.swapFirst)
			}
			if c.swapFirst {
				return // eve sees two codes and does not confirm; nothing else happens
			}
			w.tamper.Store(&swap)
			dev := &relay.Client{BaseURL: w.srv.URL, Token: started.Credential}
			if err := dev.Confirm(ctx, started.Agent, eve.Sign("pairing", seal.Transcript(agentList.Devices[0], eve.Device))); err != nil {
				t.Fatal(err)
			}
			var st map[string]any
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				st = w.ok(t, "get_status", nil)
				if len(st["refused_pairings"].([]any)) > 0 || time.Now().After(deadline) {
					break
				}
			}
			refused := st["refused_pairings"].([]any)
			if len(refused) != 1 || len(st["pairings"].([]any)) != 1 || len(st["pending_pairings"].([]any)) != 0 {
				t.Fatalf("status: %v", st)
			}
			r := refused[0].(map[string]any)
			if r["person"] != "person:eve" || r["fingerprint"] != seal.Fingerprint(fake.Device) || !strings.Contains(r["reason"].(string), "key changed") {
				t.Fatalf("refused %v", r)
			}
			// The fake key's envelopes are refused: it was never pinned.
			body, _ := json.Marshal(map[string]string{"kind": "request", "text": "hi"})
			env, _ := seal.Seal(fake, seal.Header{Suite: seal.SuiteHPKE, To: []string{started.Agent}, Conversation: "c9", MessageID: "fake-1", ListVersion: 1, SentAtMs: time.Now().UnixMilli()}, agentList.Devices, body)
			if _, err := dev.Send(ctx, relay.SendBody{ID: "fake-1", Conversation: "c9", To: env.To, Envelope: env.Encode()}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.person.Send(ctx, "c1", "req-1", "hello"); err != nil {
				t.Fatal(err)
			}
			got := messagesOf(w.ok(t, "wait_for_messages", map[string]any{"timeoutMs": 10000, "limit": 50}))
			if len(got) != 1 || got[0]["id"] != "req-1" {
				t.Fatalf("the model saw %v", got)
			}
			// Synced again and again, the refusal is recorded once.
			if err := w.bridge.syncPairings(ctx); err != nil {
				t.Fatal(err)
			}
			if st := w.ok(t, "get_status", nil); len(st["refused_pairings"].([]any)) != 1 {
				t.Fatalf("refused after a resync: %v", st["refused_pairings"])
			}
		})
	}
}

// TestConfirmationNeverShownPending: a pairing started and confirmed while
// the bridge was not running was never shown, so nobody compared its
// code: it is refused, and a new start while the bridge runs pairs.
func TestConfirmationNeverShownPending(t *testing.T) {
	w := newWorld(t)
	w.stop()
	ctx := context.Background()
	eve, _ := seal.NewIdentity(relay.PersonParty("eve"), "phone")
	list := seal.SignList(eve, 1, []seal.Device{eve.Device})
	started, err := (&relay.Client{BaseURL: w.srv.URL, Token: "eve-tok"}).StartPairing(ctx, "bot", "", eve.Device, list)
	if err != nil {
		t.Fatal(err)
	}
	var agentList seal.DeviceList
	_ = json.Unmarshal(started.AgentList, &agentList)
	sig := eve.Sign("pairing", seal.Transcript(agentList.Devices[0], eve.Device))
	if err := (&relay.Client{BaseURL: w.srv.URL, Token: started.Credential}).Confirm(ctx, started.Agent, sig); err != nil {
		t.Fatal(err)
	}
	w.start(t)
	var st map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st = w.ok(t, "get_status", nil)
		if len(st["refused_pairings"].([]any)) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if r := st["refused_pairings"].([]any); len(r) != 1 || !strings.Contains(r[0].(map[string]any)["reason"].(string), "never shown as pending") {
		t.Fatalf("status: %v", st)
	}
	// Started again while the bridge runs: shown, compared, pinned.
	time.Sleep(2 * time.Millisecond) // a new start has a new startedAt
	started, err = (&relay.Client{BaseURL: w.srv.URL, Token: "eve-tok"}).StartPairing(ctx, "bot", "", eve.Device, list)
	if err != nil {
		t.Fatal(err)
	}
	if !w.waitPending("person:eve", seal.Code(agentList.Devices[0], eve.Device)) {
		t.Fatal("the new start is not shown with eve's code")
	}
	if err := (&relay.Client{BaseURL: w.srv.URL, Token: started.Credential}).Confirm(ctx, started.Agent, sig); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st = w.ok(t, "get_status", nil)
		if len(st["pairings"].([]any)) == 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(st["pairings"].([]any)) != 2 || len(st["pending_pairings"].([]any)) != 0 {
		t.Fatalf("status after the new start: %v", st)
	}
}

// TestBridgeResetNeedsNewPairing: the bridge loses its state and comes
// back with a new key under the same agent id. The person's old device
// refuses its replies (requester.ErrAgentNotPinned) and the new bridge
// knows nobody; the person pairs again, compares the NEW key's code (the
// bridge shows it pending), and both ends pin each other's new keys.
func TestBridgeResetNeedsNewPairing(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	oldKey := w.bridge.me.ID
	w.stop()
	if err := os.RemoveAll(w.storeDir); err != nil {
		t.Fatal(err)
	}
	w.start(t)
	if w.bridge.me.ID == oldKey {
		t.Fatal("the reset bridge kept its key")
	}
	if r := w.call(t, "send_message", map[string]any{"text": "hi", "to": "person:ann", "conversationId": "c1"}); !r.isError || !strings.Contains(r.text, "pair") {
		t.Fatalf("the reset bridge sent to an unpaired person: %s", r.text)
	}
	var d *requester.Device
	var code string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		// Another device name: the relay gives a re-used name a new
		// credential, and the old device is to keep reading here.
		d, code, err = requester.Pair(ctx, requester.PairOptions{Dir: t.TempDir(), BaseURL: w.srv.URL, Token: "person-tok", Agent: "bot", Person: "ann", DeviceName: "laptop",
			Confirm: func(code, _ string) bool { return w.waitPending(relay.PersonParty("ann"), code) }})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("re-pairing: %v", err)
		}
	}
	defer d.Close()
	if code == w.code || d.AgentDevices()[0].ID != w.bridge.me.ID {
		t.Fatalf("re-paired with code %s (first pairing %s), agent devices %v", code, w.code, d.AgentDevices())
	}
	var st map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st = w.ok(t, "get_status", nil)
		if len(st["pairings"].([]any)) == 1 || time.Now().After(deadline) {
			break
		}
	}
	if ps := st["pairings"].([]any); len(ps) != 1 || ps[0].(map[string]any)["code"] != code {
		t.Fatalf("status: %v", st)
	}
	w.ok(t, "send_message", map[string]any{"text": "hi again", "to": "person:ann", "conversationId": "c1"})
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if rs, err := d.Wait(wctx, func(r []requester.Reply) bool { return len(r) > 0 }); err != nil || rs[0].Text != "hi again" {
		t.Fatalf("the re-paired device: %v %v", rs, err)
	}
	if rs, refused, err := w.person.Fetch(ctx); !errors.Is(err, requester.ErrAgentNotPinned) {
		t.Fatalf("the old device: %v refused %d, %v", rs, refused, err)
	}
}

// TestPendingPairingExpires: a started pairing nobody confirmed is shown
// for PendingTTL, then listed as refused once (not again at each sync).
func TestPendingPairingExpires(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	eve, _ := seal.NewIdentity(relay.PersonParty("eve"), "phone")
	if _, err := (&relay.Client{BaseURL: w.srv.URL, Token: "eve-tok"}).StartPairing(ctx, "bot", "", eve.Device, seal.SignList(eve, 1, []seal.Device{eve.Device})); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.waitShown("person:eve"); !ok {
		t.Fatal("the started pairing is not shown")
	}
	w.bridge.mu.Lock()
	w.bridge.now = func() time.Time { return time.Now().Add(PendingTTL + time.Minute) }
	w.bridge.mu.Unlock()
	for range 2 {
		if err := w.bridge.syncPairings(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st := w.ok(t, "get_status", nil)
	refused := st["refused_pairings"].([]any)
	if len(st["pending_pairings"].([]any)) != 0 || len(refused) != 1 || !strings.Contains(refused[0].(map[string]any)["reason"].(string), "within an hour") {
		t.Fatalf("status: %v", st)
	}
}
