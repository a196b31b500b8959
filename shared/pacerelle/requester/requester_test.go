package requester

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relay"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relayclient"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// agentDevice is a bridge's identity registered with the relay (what
// functions/pacerelle does on start): version is its list's.
func agentDevice(t *testing.T, url string, version uint64) (*seal.Identity, *relayclient.Client) {
	t.Helper()
	me, err := seal.NewIdentity(wire.AgentParty("bot"), "bridge-"+strings.Repeat("x", int(version%7)+1))
	if err != nil {
		t.Fatal(err)
	}
	c := &relayclient.Client{BaseURL: url, Token: "agent-tok", Agent: "bot"}
	if err := c.RegisterAgent(context.Background(), me.Device, seal.SignList(me, version, []seal.Device{me.Device})); err != nil {
		t.Fatal(err)
	}
	return me, c
}

// answerer is the bridge's side of pairing v2 for these tests: it answers
// every commitment of a pairing with bot with a fresh nonce, until the test
// ends.
func answerer(t *testing.T, me *seal.Identity, c *relayclient.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			ps, _ := c.Pairings(ctx)
			for _, p := range ps {
				if p.Version == seal.PairingVersion && p.AgentNonce == nil {
					n := seal.NewPairingNonce()
					_ = c.Answer(ctx, wire.AnswerBody{Person: p.Person, Commit: p.Commit, Nonce: n, Sig: me.Sign(seal.AnswerLabel, seal.AnswerBytes(p.Commit, n))})
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
}

func reply(t *testing.T, me *seal.Identity, c *relayclient.Client, to seal.Device, version uint64, id string) {
	t.Helper()
	body := []byte(`{"kind":"` + wire.KindReply + `","text":"` + id + `"}`)
	env, err := seal.Seal(me, seal.Header{Suite: seal.SuiteHPKE, To: []string{to.Party}, Conversation: "c1", MessageID: id, ListVersion: version, SentAtMs: time.Now().UnixMilli()}, []seal.Device{to}, body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(context.Background(), wire.SendBody{ID: id, Conversation: "c1", To: env.To, Envelope: env.Encode()}); err != nil {
		t.Fatal(err)
	}
}

// TestNewAgentKeyRefusedUntilRepaired: the agent's bridge loses its state
// and comes back with a new key under the same agent id. The person's
// device refuses its envelopes, with an error saying to pair again; a new
// pairing (in a new state folder) shows the new key's code and then
// accepts it.
func TestNewAgentKeyRefusedUntilRepaired(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "relay.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	srv := httptest.NewServer(relay.New(relay.Options{Store: st, Tokens: domaintest.Tokens{"agent-tok": domaintest.As("acme", "bot"), "person-tok": domaintest.As("acme", "ann")}}).Handler())
	t.Cleanup(srv.Close)

	old, oc := agentDevice(t, srv.URL, 1)
	answerer(t, old, oc)
	pairAs := func(name string) (*Device, error) {
		d, _, err := Pair(ctx, PairOptions{Dir: t.TempDir(), BaseURL: srv.URL, Token: "person-tok", Agent: "bot", Person: "ann", DeviceName: name,
			Confirm: func(code, _ string) bool { return code != "" }})
		return d, err
	}
	pair := func(want *seal.Identity, name string) *Device {
		t.Helper()
		d, err := pairAs(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		if got := d.AgentDevices(); len(got) != 1 || got[0].ID != want.ID {
			t.Fatalf("pinned agent devices %v, want %s", got, want.ID)
		}
		return d
	}
	d := pair(old, "")
	reply(t, old, oc, d.me.Device, 1, "r-old")
	if rs, refused, err := d.Fetch(ctx); err != nil || refused != 0 || len(rs) != 1 {
		t.Fatalf("from the paired key: %v refused %d, %v", rs, refused, err)
	}

	// The bridge is re-created: a new key, a newer list (bridge.go makes
	// its first version from the clock).
	fresh, fc := agentDevice(t, srv.URL, 2)
	answerer(t, fresh, fc)
	reply(t, fresh, fc, d.me.Device, 2, "r-new")
	rs, refused, err := d.Fetch(ctx)
	if !errors.Is(err, ErrAgentNotPinned) || refused != 1 || len(rs) != 0 {
		t.Fatalf("from the new key: %v refused %d, %v", rs, refused, err)
	}
	for _, want := range []string{fresh.ID, "pair again", "--state-dir", "code"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	reply(t, fresh, fc, d.me.Device, 2, "r-new-b") // Wait ends on it, not at its deadline
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := d.Wait(wctx, func(r []Reply) bool { return len(r) > 0 }); !errors.Is(err, ErrAgentNotPinned) {
		t.Fatalf("Wait: %v", err)
	}

	// Paired again, as another device: the relay never gives a confirmed
	// device's name to a new start (it would cut the paired device off).
	if _, err := pairAs(""); err == nil || !strings.Contains(err.Error(), `"cli" is a confirmed device`) {
		t.Fatalf("re-pairing under the paired device's name: %v", err)
	}
	// The new key is pinned, its code computed from it.
	d2 := pair(fresh, "cli-2")
	reply(t, fresh, fc, d2.me.Device, 2, "r-new-2")
	// The new device reads the person's inbox from its start: the old
	// key's reply is now the unpinned one.
	rs, _, err = d2.Fetch(ctx)
	if len(rs) != 1 || rs[0].ID != "r-new-2" || !errors.Is(err, ErrAgentNotPinned) || !strings.Contains(err.Error(), `"`+old.ID+`"`) {
		t.Fatalf("after re-pairing: %v, %v", rs, err)
	}
}

// TestPairRefusesAnswerNotForItsCommitmentLyingRelay: a relay that shows
// the device an answer made for another pairing (another commitment), or
// a nonce the agent did not sign, is refused before the device reveals
// anything; nothing is trusted and nothing is confirmed.
func TestPairRefusesAnswerNotForItsCommitmentLyingRelay(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "relay.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h := relay.New(relay.Options{Store: st, Tokens: domaintest.Tokens{"agent-tok": domaintest.As("acme", "bot"), "person-tok": domaintest.As("acme", "ann")}}).Handler()
	var lie atomic.Pointer[func(*wire.PairingView)]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/pacerelle/v1/pairings" || r.Header.Get(wire.AgentHeader) != "" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var out struct {
			Pairings []wire.PairingView `json:"pairings"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		for i := range out.Pairings {
			if out.Pairings[i].AgentNonce != nil {
				(*lie.Load())(&out.Pairings[i])
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	me, c := agentDevice(t, srv.URL, 1)
	answerer(t, me, c)
	earlier := seal.Commitment(me.Device, seal.NewPairingNonce())
	for name, tc := range map[string]struct {
		lie  func(*wire.PairingView)
		want string
	}{
		"an answer to another commitment, replayed": {func(p *wire.PairingView) {
			p.Commit, p.AgentNonce = earlier, seal.NewPairingNonce()
			p.AnswerSig = me.Sign(seal.AnswerLabel, seal.AnswerBytes(earlier, p.AgentNonce))
		}, "another commitment"},
		"a nonce the agent did not sign": {func(p *wire.PairingView) { p.AgentNonce = seal.NewPairingNonce() }, "not signed by the agent"},
	} {
		t.Run(name, func(t *testing.T) {
			lie.Store(&tc.lie)
			confirmed := false
			_, _, err := Pair(ctx, PairOptions{Dir: t.TempDir(), BaseURL: srv.URL, Token: "person-tok", Agent: "bot", Person: "ann", AnswerTimeout: 10 * time.Second,
				Confirm: func(string, string) bool { confirmed = true; return true }})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was trusted") || confirmed {
				t.Fatalf("Pair: %v (asked to confirm: %v)", err, confirmed)
			}
			ps, _ := c.Pairings(ctx)
			if len(ps) != 1 || ps[0].PersonNonce != nil || ps[0].Confirmation != nil {
				t.Fatalf("the device revealed or confirmed: %+v", ps)
			}
		})
	}
}
