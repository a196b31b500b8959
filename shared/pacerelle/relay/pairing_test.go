package relay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relayclient"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// pending is a person device's side of a pairing in progress.
type pending struct {
	person  *seal.Identity
	nonce   []byte
	commit  []byte
	started wire.PairingStarted
	dev     *relayclient.Client
	agentN  []byte // the nonce the agent answered with (f.answer)
}

// start begins a pairing of person (token tok) with the fixture's agent.
func (f *fixture) start(t *testing.T, tok string, person *seal.Identity, list seal.DeviceList) *pending {
	t.Helper()
	p := &pending{person: person, nonce: seal.NewPairingNonce()}
	p.commit = seal.Commitment(person.Device, p.nonce)
	var err error
	p.started, err = (&relayclient.Client{BaseURL: f.srv.URL, Token: tok}).StartPairing(context.Background(), "bot", "", person.Device, list, p.commit)
	if err != nil {
		t.Fatal(err)
	}
	p.dev = &relayclient.Client{BaseURL: f.srv.URL, Token: p.started.Credential}
	return p
}

// answer is the agent's bridge answering p's commitment.
func (f *fixture) answer(t *testing.T, p *pending) error {
	t.Helper()
	if p.agentN == nil {
		p.agentN = seal.NewPairingNonce()
	}
	return f.ac.Answer(context.Background(), wire.AnswerBody{Person: p.started.Party, Commit: p.commit, Nonce: p.agentN,
		Sig: f.agent.Sign(seal.AnswerLabel, seal.AnswerBytes(p.commit, p.agentN))})
}

func (p *pending) confirmation(t *testing.T, agent seal.Device) []byte {
	t.Helper()
	tr, err := seal.PairingTranscript(p.person.Device, p.nonce, agent, p.agentN)
	if err != nil {
		t.Fatal(err)
	}
	return p.person.Sign(seal.ConfirmLabel, tr)
}

// pair runs every step of pairing v2, the test being the agent's bridge.
func (f *fixture) pair(t *testing.T, tok string, person *seal.Identity, list seal.DeviceList) *pending {
	t.Helper()
	ctx := context.Background()
	p := f.start(t, tok, person, list)
	if err := f.answer(t, p); err != nil {
		t.Fatal(err)
	}
	if err := p.dev.Reveal(ctx, p.started.Agent, p.nonce); err != nil {
		t.Fatal(err)
	}
	if err := p.dev.Confirm(ctx, p.started.Agent, p.confirmation(t, f.agent.Device)); err != nil {
		t.Fatal(err)
	}
	return p
}

func wantRefusal(t *testing.T, what string, err error, status int, field, text string) *relayclient.APIError {
	t.Helper()
	var ae *relayclient.APIError
	if !errors.As(err, &ae) || ae.Status != status || ae.Field != field || !strings.Contains(ae.ErrorBody.Error, text) {
		t.Fatalf("%s: %v (%+v); want %d on %s saying %q", what, err, ae, status, field, text)
	}
	return ae
}

// TestPairingStepsOutOfOrderOrReplayed: each step of pairing v2 comes
// after the one before it and once: a reveal before the answer, a
// confirmation before the reveal, an answer to a replaced commitment, and a
// second answer or reveal with other values are refused; the same step
// again is not a second one.
func TestPairingStepsOutOfOrderOrReplayed(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	zed, _ := seal.NewIdentity(wire.PersonParty("zed"), "phone")
	p := f.start(t, "other-tok", zed, seal.SignList(zed, 1, []seal.Device{zed.Device}))
	agent := p.started.Agent

	wantRefusal(t, "reveal before the answer", p.dev.Reveal(ctx, agent, p.nonce), 409, "nonce", "before the answer")
	wantRefusal(t, "confirm before anything", p.dev.Confirm(ctx, agent, []byte("x")), 409, "sig", "before the reveal")
	other := seal.Commitment(zed.Device, seal.NewPairingNonce())
	n := seal.NewPairingNonce()
	wantRefusal(t, "an answer to another commitment", f.ac.Answer(ctx, wire.AnswerBody{Person: p.started.Party, Commit: other, Nonce: n,
		Sig: f.agent.Sign(seal.AnswerLabel, seal.AnswerBytes(other, n))}), 409, "commit", "not the commitment")
	wantRefusal(t, "an answer not signed by the agent", f.ac.Answer(ctx, wire.AnswerBody{Person: p.started.Party, Commit: p.commit, Nonce: n,
		Sig: zed.Sign(seal.AnswerLabel, seal.AnswerBytes(p.commit, n))}), 400, "sig", "not a signature")
	if err := f.answer(t, p); err != nil {
		t.Fatal(err)
	}
	if err := f.answer(t, p); err != nil {
		t.Fatalf("the same answer again: %v", err)
	}
	first := p.agentN
	p.agentN = seal.NewPairingNonce()
	wantRefusal(t, "a second answer", f.answer(t, p), 409, "nonce", "never replaced")
	p.agentN = first
	wantRefusal(t, "confirm before the reveal", p.dev.Confirm(ctx, agent, p.confirmation(t, f.agent.Device)), 409, "sig", "before the reveal")
	if err := p.dev.Reveal(ctx, agent, p.nonce); err != nil {
		t.Fatal(err)
	}
	if err := p.dev.Reveal(ctx, agent, p.nonce); err != nil {
		t.Fatalf("the same reveal again: %v", err)
	}
	wantRefusal(t, "a second reveal", p.dev.Reveal(ctx, agent, seal.NewPairingNonce()), 409, "nonce", "never replaced")
	if err := p.dev.Confirm(ctx, agent, p.confirmation(t, f.agent.Device)); err != nil {
		t.Fatal(err)
	}
	ps, err := f.ac.Pairings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range ps {
		if v.Person == p.started.Party && (v.Confirmation == nil || v.Failures != 0 || !seal.SameNonce(v.AgentNonce, first)) {
			t.Fatalf("the pairing as stored: %+v", v.Pairing)
		}
	}
}

// TestPairingFailuresDropThePending: a reveal that does not match the
// commitment and confirmations that do not verify are each refused and
// counted; the third drops the pending pairing, which must start again.
func TestPairingFailuresDropThePending(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	zed, _ := seal.NewIdentity(wire.PersonParty("zed"), "phone")
	p := f.start(t, "other-tok", zed, seal.SignList(zed, 1, []seal.Device{zed.Device}))
	if err := f.answer(t, p); err != nil {
		t.Fatal(err)
	}
	agent := p.started.Agent
	wantRefusal(t, "a reveal that does not match", p.dev.Reveal(ctx, agent, seal.NewPairingNonce()), 400, "nonce", "failure 1 of 3")
	if err := p.dev.Reveal(ctx, agent, p.nonce); err != nil {
		t.Fatal(err)
	}
	forged := *p
	forged.agentN = seal.NewPairingNonce() // a view the agent never answered
	wantRefusal(t, "a confirmation of another view", p.dev.Confirm(ctx, agent, forged.confirmation(t, f.agent.Device)), 400, "sig", "failure 2 of 3")
	wantRefusal(t, "a third failure", p.dev.Confirm(ctx, agent, []byte("not a signature")), 400, "sig", "dropped")
	wantRefusal(t, "the right confirmation, too late", p.dev.Confirm(ctx, agent, p.confirmation(t, f.agent.Device)), 404, "pairing", "start one")
	// Started again, it pairs.
	f.pair(t, "other-tok", zed, seal.SignList(zed, 2, []seal.Device{zed.Device}))
}

// TestPairingSecondStartReplacesThePending: a second start while one is
// pending replaces it: the first's answer is void, its reveal is refused,
// and the bridge sees only the new commitment.
func TestPairingSecondStartReplacesThePending(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	zed, _ := seal.NewIdentity(wire.PersonParty("zed"), "phone")
	list := seal.SignList(zed, 1, []seal.Device{zed.Device})
	first := f.start(t, "other-tok", zed, list)
	if err := f.answer(t, first); err != nil {
		t.Fatal(err)
	}
	second := f.start(t, "other-tok", zed, list)
	wantRefusal(t, "the first pairing's reveal", first.dev.Reveal(ctx, first.started.Agent, first.nonce), 401, "Authorization", "not valid")
	wantRefusal(t, "the first answer, replayed", f.answer(t, first), 409, "commit", "not the commitment")
	ps, _ := f.ac.Pairings(ctx)
	for _, v := range ps {
		if v.Person == second.started.Party && (string(v.Commit) != string(second.commit) || v.AgentNonce != nil) {
			t.Fatalf("after the second start the bridge sees %+v", v.Pairing)
		}
	}
	wantRefusal(t, "the second's reveal before its answer", second.dev.Reveal(ctx, second.started.Agent, second.nonce), 409, "nonce", "before the answer")
}

// TestPairingV1ClientRefused: a client of pairing v1 (a start without a
// version and commitment, a pairing listing without ?v=2) is told so.
func TestPairingV1ClientRefused(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	zed, _ := seal.NewIdentity(wire.PersonParty("zed"), "phone")
	v1 := map[string]any{"agent": "bot", "device": zed.Device, "list": seal.SignList(zed, 1, []seal.Device{zed.Device})}
	err := (&relayclient.Client{BaseURL: f.srv.URL, Token: "other-tok"}).Do(ctx, http.MethodPost, "/pacerelle/v1/pairings", v1, nil)
	wantRefusal(t, "a v1 start", err, 400, "version", "pairing v1")
	err = f.ac.Do(ctx, http.MethodGet, "/pacerelle/v1/pairings", nil, nil)
	wantRefusal(t, "a v1 listing", err, 400, "v", "pairing v2")
	if ps, err := f.ac.Pairings(ctx); err != nil || len(ps) != 1 {
		t.Fatalf("v2 listing: %v %v", ps, err)
	}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestPairingStartLimitsFakeClock: with a fake clock, per person and per
// agent, across two relay processes on one store: the start over the limit
// is refused with 429, naming the limit and when to retry (the header
// too), and succeeds once the window has passed.
func TestPairingStartLimitsFakeClock(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 7, 28, 10, 0, 0, 0, time.UTC)}
	// The store expires the limit records on the same clock.
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "relay.db"), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	toks := domaintest.Tokens{"agent-tok": domaintest.As("acme", "bot"), "agent2-tok": domaintest.As("acme", "bot2")}
	for i := range 6 {
		toks[fmt.Sprintf("p%d-tok", i)] = domaintest.As("acme", fmt.Sprintf("p%d", i))
	}
	// Two relay processes on one store: a Lambda each, say.
	var urls []string
	for range 2 {
		srv := httptest.NewServer(New(Options{Store: st, Tokens: toks, Now: clk.Now, Limits: Limits{StartsPerPerson: 3, StartsPerAgent: 4}}).Handler())
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	for _, a := range []struct{ id, tok string }{{"bot", "agent-tok"}, {"bot2", "agent2-tok"}} {
		id, _ := seal.NewIdentity(wire.AgentParty(a.id), "bridge")
		if err := (&relayclient.Client{BaseURL: urls[0], Token: a.tok, Agent: a.id}).RegisterAgent(ctx, id.Device, seal.SignList(id, 1, []seal.Device{id.Device})); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	start := func(tok, agent string) error {
		n++
		// New keys each time under one device name: a start replaces only
		// a pending pairing of the same device.
		dev, _ := seal.NewIdentity(wire.PersonParty(strings.TrimSuffix(tok, "-tok")), "phone")
		_, err := (&relayclient.Client{BaseURL: urls[n%2], Token: tok}).StartPairing(ctx, agent, "", dev.Device, seal.SignList(dev, uint64(n), []seal.Device{dev.Device}), seal.Commitment(dev.Device, seal.NewPairingNonce()))
		return err
	}

	// Per person: p0 starts 3 times (over both processes), the 4th is refused.
	for i := range 3 {
		if err := start("p0-tok", "bot"); err != nil {
			t.Fatalf("start %d: %v", i+1, err)
		}
		clk.add(time.Minute)
	}
	ae := wantRefusal(t, "the 4th start of p0", start("p0-tok", "bot"), 429, "person", "at most 3 pairing starts per person per 1h0m0s")
	if !strings.Contains(ae.ErrorBody.Error, "retry after 2026-07-28T11:00:00Z (in 57m0s)") || ae.RetryAfterSeconds != 57*60 {
		t.Fatalf("the refusal says %q, retry after %d s", ae.ErrorBody.Error, ae.RetryAfterSeconds)
	}
	wantRefusal(t, "p0 with another agent", start("p0-tok", "bot2"), 429, "person", "per person")
	// Per agent: bot has had 3 starts; one more from p1, then p2 is refused.
	if err := start("p1-tok", "bot"); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, "the 5th start for bot", start("p2-tok", "bot"), 429, "agent", "at most 4 pairing starts per agent")
	if err := start("p2-tok", "bot2"); err != nil {
		t.Fatalf("another agent is not limited by bot's starts: %v", err)
	}
	// The window slides: an hour after p0's first start, one start is free.
	clk.add(57 * time.Minute)
	if err := start("p0-tok", "bot2"); err != nil {
		t.Fatalf("an hour later: %v", err)
	}
	wantRefusal(t, "and only one", start("p0-tok", "bot2"), 429, "person", "retry after")

	// The limits are in the store, not in a process: a third relay sees them.
	var rec PairingLimit
	r3 := New(Options{Store: st, Tokens: toks, Now: clk.Now})
	rec, _, err = pairingLimits.Get(ctx, r3.st, "test", "party", "person:p0", pairingLimits.KeyOf("acme", map[string]string{"scope": "person", "party": "person:p0"}))
	if err != nil || len(rec.Starts) != 3 {
		t.Fatalf("p0's stored starts: %+v %v", rec, err)
	}
}
