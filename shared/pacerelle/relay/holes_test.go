package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relayclient"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
)

// startWith begins a pairing of person (token tok) with agent, returning
// the refusal instead of failing the test.
func (f *fixture) startWith(t *testing.T, tok, agent string, person *seal.Identity, list seal.DeviceList) (*pending, error) {
	t.Helper()
	p := &pending{person: person, nonce: seal.NewPairingNonce()}
	p.commit = seal.Commitment(person.Device, p.nonce)
	var err error
	p.started, err = (&relayclient.Client{BaseURL: f.srv.URL, Token: tok}).StartPairing(context.Background(), agent, "", person.Device, list, p.commit)
	if err != nil {
		return nil, err
	}
	p.dev = &relayclient.Client{BaseURL: f.srv.URL, Token: p.started.Credential}
	return p, nil
}

// registerAgent2 registers the bridge of a second agent, bot2.
func (f *fixture) registerAgent2(t *testing.T) (*seal.Identity, *relayclient.Client) {
	t.Helper()
	id, _ := seal.NewIdentity(wire.AgentParty("bot2"), "bridge-2")
	c := &relayclient.Client{BaseURL: f.srv.URL, Token: "agent2-tok", Agent: "bot2"}
	if err := c.RegisterAgent(context.Background(), id.Device, seal.SignList(id, 1, []seal.Device{id.Device})); err != nil {
		t.Fatal(err)
	}
	return id, c
}

// sendFrom seals text from a person device to an agent and posts it.
func sendFrom(dev *relayclient.Client, from *seal.Identity, agent seal.Device, id string) error {
	env, err := seal.Seal(from, seal.Header{Suite: seal.SuiteHPKE, To: []string{agent.Party}, Conversation: "c1", MessageID: id, ListVersion: 1}, []seal.Device{agent}, []byte("spam"))
	if err != nil {
		return err
	}
	_, err = dev.Send(context.Background(), wire.SendBody{ID: id, Conversation: "c1", To: env.To, Envelope: env.Encode()})
	return err
}

// TestUnconfirmedPairingCannotSend: a device whose pairing is started,
// answered or revealed but not confirmed cannot put anything in the
// agent's inbox, and the agent cannot send to it; each refusal names the
// step that is missing. Once confirmed, both directions work. A paired
// device cannot send to an agent whose pairing with its person is pending.
func TestUnconfirmedPairingCannotSend(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	zed, _ := seal.NewIdentity(wire.PersonParty("zed"), "phone")
	p := f.start(t, "other-tok", zed, seal.SignList(zed, 1, []seal.Device{zed.Device}))
	agent := p.started.Agent
	head := func() int64 {
		t.Helper()
		page, err := f.ac.Inbox(ctx, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		return page.Head
	}
	before := head()

	wantRefusal(t, "a send right after the start", sendFrom(p.dev, zed, f.agent.Device, "s1"), 403, "Authorization", "the agent's answer")
	if err := f.answer(t, p); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, "a send after the answer", sendFrom(p.dev, zed, f.agent.Device, "s2"), 403, "Authorization", "reveal")
	if err := p.dev.Reveal(ctx, agent, p.nonce); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, "a send after the reveal", sendFrom(p.dev, zed, f.agent.Device, "s3"), 403, "Authorization", "confirmation")
	// The agent cannot send to the unconfirmed person either.
	env, _ := seal.Seal(f.agent, seal.Header{Suite: seal.SuiteHPKE, To: []string{p.started.Party}, Conversation: "c1", MessageID: "a1", ListVersion: 1}, []seal.Device{zed.Device}, []byte("x"))
	_, err := f.ac.Send(ctx, wire.SendBody{ID: "a1", Conversation: "c1", To: env.To, Envelope: env.Encode()})
	wantRefusal(t, "the agent sending to a pending person", err, 403, "to", "confirmation")
	if got := head(); got != before {
		t.Fatalf("the agent's inbox grew from %d to %d before the pairing was confirmed", before, got)
	}

	if err := p.dev.Confirm(ctx, agent, p.confirmation(t, f.agent.Device)); err != nil {
		t.Fatal(err)
	}
	if err := sendFrom(p.dev, zed, f.agent.Device, "s4"); err != nil {
		t.Fatalf("a send once confirmed: %v", err)
	}
	if _, err := f.ac.Send(ctx, wire.SendBody{ID: "a1", Conversation: "c1", To: env.To, Envelope: env.Encode()}); err != nil {
		t.Fatalf("the agent's send once confirmed: %v", err)
	}
	if got := head(); got != before+1 {
		t.Fatalf("the agent's inbox head is %d, want %d", got, before+1)
	}

	// ann's phone is paired with bot; ann's pairing with bot2 is pending.
	bot2, _ := f.registerAgent2(t)
	laptop, _ := seal.NewIdentity(wire.PersonParty("ann"), "laptop")
	if _, err := f.startWith(t, "person-tok", "bot2", laptop, seal.SignList(laptop, 2, []seal.Device{laptop.Device})); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, "a paired device to an agent whose pairing is pending", sendFrom(f.pc, f.person, bot2.Device, "s5"), 403, "to", "the agent's answer")
}

// TestPendingDeviceTakesOnlyPairingSteps: until its pairing is confirmed a
// device reads no inbox, adds no device and stores no list; it may list
// its pairings (to see the answer).
func TestPendingDeviceTakesOnlyPairingSteps(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	zed, _ := seal.NewIdentity(wire.PersonParty("zed"), "phone")
	p := f.start(t, "other-tok", zed, seal.SignList(zed, 1, []seal.Device{zed.Device}))
	if _, err := p.dev.Pairings(ctx); err != nil {
		t.Fatalf("listing its pairings: %v", err)
	}
	other, _ := seal.NewIdentity(wire.PersonParty("zed"), "tablet")
	two := seal.SignList(zed, 2, []seal.Device{zed.Device, other.Device})
	calls := map[string]func() error{
		"inbox":         func() error { _, err := p.dev.Inbox(ctx, 0, 1); return err },
		"conversations": func() error { _, err := p.dev.Conversations(ctx); return err },
		"ack":           func() error { return p.dev.Ack(ctx, 1) },
		"add device":    func() error { _, err := p.dev.AddDevice(ctx, other.Device, two); return err },
		"put list":      func() error { return p.dev.Do(ctx, http.MethodPut, "/pacerelle/v1/lists", two, nil) },
		"agent's list":  func() error { var l seal.DeviceList; return p.dev.List(ctx, wire.AgentParty("bot"), &l) },
	}
	for name, call := range calls {
		wantRefusal(t, name, call(), 403, "Authorization", "not confirmed")
	}
	// The WebSocket API's $connect (on AWS) refuses it too.
	h := http.Header{"Authorization": {"Bearer " + p.started.Credential}}
	if status, err := New(Options{Store: f.st}).Connect(ctx, h, nil, "conn-1"); status != 403 || err == nil || !strings.Contains(err.Error(), "not confirmed") {
		t.Fatalf("$connect of a pending device: %d %v", status, err)
	}
	if _, _, err := devices.Get(ctx, f.st, "test", "id", "tablet", devices.KeyOf("acme", table.Values{"party": wire.PersonParty("zed"), "id": "tablet"})); err == nil {
		t.Fatal("a pending device added a device")
	}
}

// TestStartNeverReplacesConfirmed: the person's VantagePeers token cannot
// start a pairing that overwrites a confirmed device (whose credential
// would stop working) or a confirmed pairing record; a pending pairing is
// replaced only by a start of the same device. A confirmed pairing made
// with an agent key the agent has since replaced is void and replaceable.
func TestStartNeverReplacesConfirmed(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.registerAgent2(t)
	stored := func() (DeviceRec, wire.Pairing) {
		t.Helper()
		d, _, err := devices.Get(ctx, f.st, "test", "id", "phone", devices.KeyOf("acme", table.Values{"party": wire.PersonParty("ann"), "id": "phone"}))
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := pairings.Get(ctx, f.st, "test", "person", "ann", pairings.KeyOf("acme", table.Values{"agent": wire.AgentParty("bot"), "person": wire.PersonParty("ann")}))
		if err != nil {
			t.Fatal(err)
		}
		return d, p
	}
	dev0, pair0 := stored()

	// A new "phone" (other keys), for another agent: the device is confirmed.
	evil, _ := seal.NewIdentity(wire.PersonParty("ann"), "phone")
	_, err := f.startWith(t, "person-tok", "bot2", evil, seal.SignList(evil, 7, []seal.Device{evil.Device}))
	wantRefusal(t, "a start over a confirmed device", err, 409, "device.id", "confirmed")
	// Another device, for the agent ann is paired with: the pairing is confirmed.
	laptop, _ := seal.NewIdentity(wire.PersonParty("ann"), "laptop")
	_, err = f.startWith(t, "person-tok", "bot", laptop, seal.SignList(laptop, 8, []seal.Device{laptop.Device}))
	wantRefusal(t, "a start over a confirmed pairing", err, 409, "agent", "confirmed")
	// The same again: not even the same device replaces a confirmed pairing.
	_, err = f.startWith(t, "person-tok", "bot", evil, seal.SignList(evil, 9, []seal.Device{evil.Device}))
	wantRefusal(t, "the same device over a confirmed pairing", err, 409, "device.id", "confirmed")

	dev1, pair1 := stored()
	if string(dev1.Bundle) != string(dev0.Bundle) || dev1.CredHash != dev0.CredHash {
		t.Fatal("the confirmed device was replaced")
	}
	if pair1.PersonDevice != "phone" || string(pair1.Confirmation) != string(pair0.Confirmation) || string(pair1.Commit) != string(pair0.Commit) {
		t.Fatalf("the confirmed pairing was replaced: %+v", pair1)
	}
	f.request(t, "r1", "c1", "the paired phone still sends")

	// A pending pairing: replaced by the same device only.
	zed, _ := seal.NewIdentity(wire.PersonParty("zed"), "phone")
	first := f.start(t, "other-tok", zed, seal.SignList(zed, 1, []seal.Device{zed.Device}))
	tablet, _ := seal.NewIdentity(wire.PersonParty("zed"), "tablet")
	_, err = f.startWith(t, "other-tok", "bot", tablet, seal.SignList(tablet, 2, []seal.Device{tablet.Device}))
	wantRefusal(t, "another device over a pending pairing", err, 409, "device.id", `pending for device "phone"`)
	zed2, _ := seal.NewIdentity(wire.PersonParty("zed"), "phone")
	second := f.start(t, "other-tok", zed2, seal.SignList(zed2, 3, []seal.Device{zed2.Device}))
	wantRefusal(t, "the replaced start's credential", first.dev.Reveal(ctx, first.started.Agent, first.nonce), 401, "Authorization", "not valid")
	if err := f.answer(t, second); err != nil {
		t.Fatal(err)
	}

	// The agent's bridge is reset (a new key in a newer list, which only
	// the agent's token can store): the pairing made with the old key is
	// void, and a new device may pair; the confirmed device stays.
	reset, _ := seal.NewIdentity(wire.AgentParty("bot"), "bridge-9")
	if err := f.ac.RegisterAgent(ctx, reset.Device, seal.SignList(reset, 2, []seal.Device{reset.Device})); err != nil {
		t.Fatal(err)
	}
	_, err = f.startWith(t, "person-tok", "bot", evil, seal.SignList(evil, 10, []seal.Device{evil.Device}))
	wantRefusal(t, "the confirmed device, after the reset", err, 409, "device.id", "confirmed")
	if _, err := f.startWith(t, "person-tok", "bot", laptop, seal.SignList(laptop, 11, []seal.Device{laptop.Device})); err != nil {
		t.Fatalf("a new device after the agent's reset: %v", err)
	}
}

// crashStore fails one Write, as if the process died before it: the
// writes before it stay, nothing after it happens.
type crashStore struct {
	store.Store
	mu      sync.Mutex
	n, at   int
	crashed bool
}

func (s *crashStore) arm(at int) { s.mu.Lock(); s.n, s.at, s.crashed = 0, at, false; s.mu.Unlock() }

func (s *crashStore) Write(ctx context.Context, ops ...store.Op) error {
	s.mu.Lock()
	s.n++
	crash := s.at > 0 && s.n == s.at && !s.crashed
	s.crashed = s.crashed || crash
	s.mu.Unlock()
	if crash {
		return errors.New("crash: the process died here")
	}
	return s.Store.Write(ctx, ops...)
}

// TestRegistrationIsOneWriteCrash: adding a device, starting a pairing
// and registering an agent's bridge each store the device (its
// credential), the party's list and (for a start) the pairing together or
// not at all: with a crash at any write, a stored list never names a
// device that has no credential, and no device or pairing is left over.
func TestRegistrationIsOneWriteCrash(t *testing.T) {
	ctx := context.Background()
	type state struct{ listNames, device, pairing bool }
	read := func(t *testing.T, st store.Store, party, id string, withPairing bool) state {
		t.Helper()
		var s state
		if l, _, err := lists.Get(ctx, st, "test", "party", party, lists.KeyOf("acme", table.Values{"party": party})); err == nil {
			var dl seal.DeviceList
			if err := json.Unmarshal(l.List, &dl); err != nil {
				t.Fatal(err)
			}
			_, s.listNames = dl.Find(id)
		}
		_, _, err := devices.Get(ctx, st, "test", "id", id, devices.KeyOf("acme", table.Values{"party": party, "id": id}))
		s.device = err == nil
		if withPairing {
			q := pairings.Query("acme", store.GSI1, table.Values{"person": party})
			q.Limit = 10
			rows, err := st.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			s.pairing = len(rows) > 0
		}
		return s
	}
	ops := []struct {
		name, party, id string
		pairing         bool
		run             func(f *fixture) error
	}{
		{"add device", wire.PersonParty("ann"), "laptop", false, func(f *fixture) error {
			laptop, _ := seal.NewIdentity(wire.PersonParty("ann"), "laptop")
			_, err := f.pc.AddDevice(ctx, laptop.Device, seal.SignList(f.person, 2, []seal.Device{f.person.Device, laptop.Device}))
			return err
		}},
		{"start", wire.PersonParty("zed"), "phone", true, func(f *fixture) error {
			zed, _ := seal.NewIdentity(wire.PersonParty("zed"), "phone")
			_, err := (&relayclient.Client{BaseURL: f.srv.URL, Token: "other-tok"}).StartPairing(ctx, "bot", "", zed.Device,
				seal.SignList(zed, 1, []seal.Device{zed.Device}), seal.Commitment(zed.Device, seal.NewPairingNonce()))
			return err
		}},
		{"register agent", wire.AgentParty("bot2"), "bridge-2", false, func(f *fixture) error {
			id, _ := seal.NewIdentity(wire.AgentParty("bot2"), "bridge-2")
			return (&relayclient.Client{BaseURL: f.srv.URL, Token: "agent2-tok", Agent: "bot2"}).RegisterAgent(ctx, id.Device, seal.SignList(id, 1, []seal.Device{id.Device}))
		}},
	}
	for _, o := range ops {
		for at := 1; at <= 4; at++ {
			t.Run(fmt.Sprintf("%s/crash at write %d", o.name, at), func(t *testing.T) {
				db, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "relay.db")})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = db.Close() })
				cs := &crashStore{Store: db}
				f := newFixtureOn(t, cs)
				cs.arm(at)
				err = o.run(f)
				cs.arm(0)
				s := read(t, db, o.party, o.id, o.pairing)
				whole := s.listNames && s.device && (s.pairing || !o.pairing)
				none := !s.listNames && !s.device && !s.pairing
				if !whole && !none {
					t.Fatalf("after a crash at write %d (%v): %+v: half a registration is stored", at, err, s)
				}
				if err == nil && !whole {
					t.Fatalf("success but %+v", s)
				}
			})
		}
	}
}
