package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relay"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relayclient"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/requester"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// world is an in-process relay (the real handler on SQLite), one bridge
// and a paired person device.
type world struct {
	srv      *httptest.Server
	dropSend atomic.Bool // answer sends by cutting the connection after the relay applied them: a lost ack
	// tamper rewrites the relay's answer to the bridge's GET pairings: a
	// relay that substitutes keys toward the bridge.
	tamper   atomic.Pointer[func([]byte) []byte]
	storeDir string
	bridge   *Bridge
	cancel   context.CancelFunc
	done     chan struct{}
	mcp      *mcp.ClientSession
	person   *requester.Device
	code     string // the code the person's device showed when pairing
	extra    Config
}

func newWorld(t testing.TB) *world { return newWorldWith(t, Config{}) }

// newWorldWith starts the bridge with extra settings (NoE2EE).
func newWorldWith(t testing.TB, extra Config) *world {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "relay.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	w := &world{storeDir: filepath.Join(t.TempDir(), "mcp"), extra: extra}
	// The relay's own pairing limits are lenient here: the bridge's are
	// under test (the relay's: shared/pacerelle/relay).
	h := relay.New(relay.Options{Store: st, Limits: relay.Limits{StartsPerPerson: 1000, StartsPerAgent: 1000}, Tokens: domaintest.Tokens{"agent-tok": domaintest.As("acme", "bot"), "person-tok": domaintest.As("acme", "ann"), "eve-tok": domaintest.As("acme", "eve")}}).Handler()
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if w.dropSend.Load() && r.Method == http.MethodPost && r.URL.Path == "/pacerelle/v1/messages" && r.Header.Get(wire.AgentHeader) != "" {
			h.ServeHTTP(httptest.NewRecorder(), r)
			conn, _, _ := http.NewResponseController(rw).Hijack()
			_ = conn.Close()
			return
		}
		if f := w.tamper.Load(); f != nil && r.Method == http.MethodGet && r.URL.Path == "/pacerelle/v1/pairings" && r.Header.Get(wire.AgentHeader) != "" {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			rw.WriteHeader(rec.Code)
			_, _ = rw.Write((*f)(rec.Body.Bytes()))
			return
		}
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(w.srv.Close)
	w.start(t)
	// Pair once the bridge has registered its device.
	dir := t.TempDir()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, code, err := requester.Pair(ctx, requester.PairOptions{Dir: dir, BaseURL: w.srv.URL, Token: "person-tok", Agent: "bot", Person: "ann",
			Confirm: func(code, _ string) bool { return w.waitPending(wire.PersonParty("ann"), code) }})
		if err == nil {
			w.person, w.code = d, code
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pairing: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() { _ = w.person.Close() })
	return w
}

// start opens the bridge on the world's state and connects an MCP client.
func (w *world) start(t testing.TB) {
	t.Helper()
	b, err := Open(Config{AgentID: "bot", Token: "agent-tok", StoreRoot: w.storeDir, BaseURL: w.srv.URL, NoE2EE: w.extra.NoE2EE}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	w.bridge = b
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan struct{})
	go func() { b.Run(ctx); close(w.done) }()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := newServer(b).Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.mcp = cs
	t.Cleanup(w.stop)
}

func (w *world) stop() {
	if w.bridge == nil {
		return
	}
	_ = w.mcp.Close()
	w.cancel()
	<-w.done
	_ = w.bridge.Close()
	w.bridge = nil
}

type result struct {
	isError bool
	text    string
	m       map[string]any
}

func (w *world) call(t testing.TB, name string, args any) result {
	t.Helper()
	res, err := w.mcp.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	r := result{isError: res.IsError}
	if len(res.Content) > 0 {
		r.text = res.Content[0].(*mcp.TextContent).Text
	}
	if !r.isError {
		if err := json.Unmarshal([]byte(r.text), &r.m); err != nil {
			t.Fatalf("%s: %v in %s", name, err, r.text)
		}
	}
	return r
}

func (w *world) ok(t testing.TB, name string, args any) map[string]any {
	t.Helper()
	r := w.call(t, name, args)
	if r.isError {
		t.Fatalf("%s(%v): %s", name, args, r.text)
	}
	return r.m
}

func messagesOf(m map[string]any) []map[string]any {
	var out []map[string]any
	for _, x := range m["messages"].([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

// waitPending is the person comparing codes before confirming: it waits
// for the bridge to show a pending pairing of person and reports whether
// its code is code.
func (w *world) waitPending(person, code string) bool {
	p, ok := w.waitShown(person)
	return ok && p.Code == code
}

// waitShown waits up to 10 s for the bridge to show a pending pairing of
// person with its code.
func (w *world) waitShown(person string) (PendingPairing, bool) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if p, ok := w.pending(person); ok {
			return p, true
		}
	}
	return PendingPairing{}, false
}

func (w *world) pending(person string) (PendingPairing, bool) {
	w.bridge.mu.Lock()
	defer w.bridge.mu.Unlock()
	for _, p := range w.bridge.st.PendingPairings {
		if p.Person == person && p.Code != "" {
			return p, true
		}
	}
	return PendingPairing{}, false
}

// device is a person device driven step by step against the world's
// relay and real bridge.
type device struct {
	id         *seal.Identity
	nonce      []byte
	commit     []byte
	started    wire.PairingStarted
	dev        *relayclient.Client
	agent      seal.Device
	agentNonce []byte
}

// startPairing commits and starts a pairing of id (token tok) with bot.
func (w *world) startPairing(t testing.TB, tok string, id *seal.Identity, version uint64) *device {
	t.Helper()
	d := &device{id: id, nonce: seal.NewPairingNonce()}
	d.commit = seal.Commitment(id.Device, d.nonce)
	var err error
	d.started, err = (&relayclient.Client{BaseURL: w.srv.URL, Token: tok}).StartPairing(context.Background(), "bot", "", id.Device, seal.SignList(id, version, []seal.Device{id.Device}), d.commit)
	if err != nil {
		t.Fatal(err)
	}
	var l seal.DeviceList
	_ = json.Unmarshal(d.started.AgentList, &l)
	d.agent = l.Devices[0]
	d.dev = &relayclient.Client{BaseURL: w.srv.URL, Token: d.started.Credential}
	return d
}

// waitAnswer waits for the bridge's answer and checks it.
func (d *device) waitAnswer(t testing.TB) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ps, err := d.dev.Pairings(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.AgentNonce != nil && string(p.Commit) == string(d.commit) {
				if err := seal.CheckAnswer(d.agent, d.commit, p.AgentNonce, p.AnswerSig); err != nil {
					t.Fatal(err)
				}
				d.agentNonce = p.AgentNonce
				return
			}
		}
	}
	t.Fatal("the bridge never answered the pairing")
}

func (d *device) reveal(t testing.TB) {
	t.Helper()
	if err := d.dev.Reveal(context.Background(), d.started.Agent, d.nonce); err != nil {
		t.Fatal(err)
	}
}

// code is the code the device shows, over the agent key agent.
func (d *device) code(agent seal.Device) string {
	c, _ := seal.PairingCode(d.id.Device, d.nonce, agent, d.agentNonce)
	return c
}

// confirmation is the device's signature over its view, with agent as the
// agent's key.
func (d *device) confirmation(agent seal.Device) []byte {
	tr, _ := seal.PairingTranscript(d.id.Device, d.nonce, agent, d.agentNonce)
	return d.id.Sign(seal.ConfirmLabel, tr)
}

func (d *device) confirm(t testing.TB) {
	t.Helper()
	if err := d.dev.Confirm(context.Background(), d.started.Agent, d.confirmation(d.agent)); err != nil {
		t.Fatal(err)
	}
}

// refusedFor waits up to 10 s for a refused pairing of person and returns
// the status then.
func (w *world) refusedFor(t testing.TB, person string) (RefusedPairing, map[string]any) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st := w.ok(t, "get_status", nil)
		for _, r := range st["refused_pairings"].([]any) {
			if m := r.(map[string]any); m["person"] == person {
				return RefusedPairing{Person: person, Device: m["device"].(string), Reason: m["reason"].(string)}, st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no refused pairing of %s: %v", person, st)
		}
	}
}
