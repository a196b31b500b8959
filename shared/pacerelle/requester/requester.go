// Package requester is a person's device on Pacerelle, without a browser:
// it pairs with an agent, sends sealed requests and waits for the sealed
// replies. `vantagepeers pacerelle` is its command line; the end-to-end
// tests drive it directly.
package requester

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/localstate"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relayclient"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// State is what a device keeps (encrypted, in localstate).
type State struct {
	Identity   []byte    `json:"identity"`
	Agent      string    `json:"agent"` // the agent party
	Credential string    `json:"credential"`
	BaseURL    string    `json:"baseURL"`
	Pins       seal.Pins `json:"pins"`
	Seen       seal.Seen `json:"seen"`
	Cursor     int64     `json:"cursor"`
	Paired     bool      `json:"paired"`
	// OwnList is the person's device list as this device last signed or
	// received it; envelopes name its version.
	OwnList seal.DeviceList `json:"ownList"`
}

// ReplayWindow is how long message ids are remembered (seal.Seen); older
// envelopes are refused.
const ReplayWindow = 30 * 24 * time.Hour

// Device is an open device state.
type Device struct {
	file   *localstate.File
	st     State
	me     *seal.Identity
	client *relayclient.Client
	// Plaintext sends in clear and accepts clear replies: only against a
	// bridge started with --no-e2ee, to debug the transport.
	Plaintext bool
}

func owner(person, agent string) string {
	return "pacerelle-device:" + vp.NormalizeOrchestrator(person) + "/" + vp.NormalizeOrchestrator(agent)
}

// Open opens (and locks) the device of person for agent in dir.
func Open(dir, person, agent string) (*Device, error) {
	f, data, err := localstate.Open(dir, owner(person, agent))
	if err != nil {
		return nil, err
	}
	d := &Device{file: f}
	if data == nil {
		_ = f.Close()
		return nil, fmt.Errorf("no device of %s for agent %s in %s: pair first", person, agent, dir)
	}
	if err := json.Unmarshal(data, &d.st); err != nil {
		_ = f.Close()
		return nil, err
	}
	if d.me, err = seal.ParseIdentity(d.st.Identity); err != nil {
		_ = f.Close()
		return nil, err
	}
	d.client = &relayclient.Client{BaseURL: d.st.BaseURL, Token: d.st.Credential, HTTP: &http.Client{Timeout: 30 * time.Second}}
	return d, nil
}

// Close releases the device state.
func (d *Device) Close() error { return d.file.Close() }

func (d *Device) save() error {
	b, err := json.Marshal(&d.st)
	if err != nil {
		return err
	}
	return d.file.Save(b)
}

// PairOptions starts a pairing.
type PairOptions struct {
	Dir, BaseURL string
	Token        string // the person's VantagePeers token
	Agent        string // the agent id
	Person       string // the person id; "" = the token's identity
	DeviceName   string
	// Confirm is shown the pairing code BEFORE anything is confirmed; it
	// returns true only when the agent shows the same code for this
	// pending pairing (get_status.pending_pairings, or the bridge's log
	// line "pairing requested by ...").
	Confirm func(code, fingerprint string) bool
	// AnswerTimeout bounds the wait for the agent's bridge to answer the
	// device's commitment (default 2 minutes); PollEvery is how often the
	// device looks (default 250 ms).
	AnswerTimeout, PollEvery time.Duration
}

// Pair makes a device, registers it with the agent, and confirms the
// pairing when opts.Confirm says the codes match.
func Pair(ctx context.Context, o PairOptions) (*Device, string, error) {
	c := &relayclient.Client{BaseURL: o.BaseURL, Token: o.Token, HTTP: &http.Client{Timeout: 30 * time.Second}}
	person := o.Person
	if person == "" {
		return nil, "", errors.New("pair: the person id is required")
	}
	party := wire.PersonParty(person)
	f, data, err := localstate.Open(o.Dir, owner(person, o.Agent))
	if err != nil {
		return nil, "", err
	}
	d := &Device{file: f}
	if data != nil {
		_ = json.Unmarshal(data, &d.st)
	}
	if d.st.Paired {
		_ = f.Close()
		return nil, "", fmt.Errorf("%s is already paired with %s here", person, o.Agent)
	}
	name := o.DeviceName
	if name == "" {
		name = "cli"
	}
	if d.me, err = seal.NewIdentity(party, name); err != nil {
		_ = f.Close()
		return nil, "", err
	}
	// The first version comes from the clock: the relay keeps a party's
	// newest list, so a re-pairing (a new state folder) must be newer than
	// the last one, or the agent would be shown the old device key.
	list := seal.SignList(d.me, uint64(time.Now().UnixMilli()), []seal.Device{d.me.Device})
	// Pairing v2: commit to this device and a fresh nonce before seeing
	// anything of the agent's side, reveal the nonce only once the agent
	// answered with its own (seal/sas.go).
	nonce := seal.NewPairingNonce()
	commit := seal.Commitment(d.me.Device, nonce)
	fail := func(code string, err error) (*Device, string, error) {
		_ = f.Close()
		return nil, code, err
	}
	started, err := c.StartPairing(ctx, o.Agent, person, d.me.Device, list, commit)
	if err != nil {
		return fail("", err)
	}
	var agentList seal.DeviceList
	var check seal.Pins
	if err := json.Unmarshal(started.AgentList, &agentList); err != nil || len(agentList.Devices) != 1 || agentList.Party != started.Agent {
		return fail("", fmt.Errorf("pair: the agent's device list is not usable (%v)", err))
	}
	if err := check.Pin(agentList); err != nil {
		return fail("", fmt.Errorf("pair: the agent's device list: %w", err))
	}
	agentDev := agentList.Devices[0]
	d.st.Identity, _ = d.me.Bytes()
	d.st.Agent, d.st.Credential, d.st.BaseURL = started.Agent, started.Credential, o.BaseURL
	d.client = &relayclient.Client{BaseURL: o.BaseURL, Token: started.Credential, HTTP: c.HTTP}
	agentNonce, err := d.waitAnswer(ctx, o, commit, agentDev)
	if err != nil {
		return fail("", err)
	}
	if err := d.client.Reveal(ctx, started.Agent, nonce); err != nil {
		return fail("", err)
	}
	code, err := seal.PairingCode(d.me.Device, nonce, agentDev, agentNonce)
	if err != nil {
		return fail("", err)
	}
	if o.Confirm == nil || !o.Confirm(code, seal.Fingerprint(agentDev)) {
		_ = d.save()
		return fail(code, fmt.Errorf("pair: code %s not confirmed; nothing was trusted", code))
	}
	if err := d.st.Pins.Pin(agentList); err != nil {
		return fail(code, err)
	}
	tr, err := seal.PairingTranscript(d.me.Device, nonce, agentDev, agentNonce)
	if err != nil {
		return fail(code, err)
	}
	if err := d.client.Confirm(ctx, started.Agent, d.me.Sign(seal.ConfirmLabel, tr)); err != nil {
		return fail(code, err)
	}
	d.st.Paired, d.st.OwnList = true, list
	if err := d.save(); err != nil {
		return fail(code, err)
	}
	return d, code, nil
}

// ErrNoAnswer: the agent's bridge did not answer the pairing in time.
var ErrNoAnswer = errors.New("pair: the agent's bridge did not answer this pairing; is its pacerelle MCP server running?")

// waitAnswer polls the device's pairing until the agent answered its
// commitment, and checks the answer: signed by the agent device shown,
// for this very commitment (an answer replayed from another pairing, or a
// pairing the relay swapped, is refused).
func (d *Device) waitAnswer(ctx context.Context, o PairOptions, commit []byte, agent seal.Device) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(o.AnswerTimeout, 2*time.Minute))
	defer cancel()
	for {
		ps, err := d.client.Pairings(ctx)
		var ae *relayclient.APIError
		if errors.As(err, &ae) {
			return nil, err
		}
		for _, p := range ps {
			if p.Agent != d.st.Agent || p.AgentNonce == nil {
				continue
			}
			if !bytes.Equal(p.Commit, commit) {
				return nil, fmt.Errorf("pair: the relay shows an answer to another commitment than this device's: refused, nothing was trusted")
			}
			if err := seal.CheckAnswer(agent, commit, p.AgentNonce, p.AnswerSig); err != nil {
				return nil, fmt.Errorf("pair: %w; nothing was trusted", err)
			}
			return p.AgentNonce, nil
		}
		select {
		case <-ctx.Done():
			return nil, ErrNoAnswer
		case <-time.After(cmp.Or(o.PollEvery, 250*time.Millisecond)):
		}
	}
}

// Send seals text once and sends it as request id of conversation,
// retrying transport failures with the same id (the relay dedups).
func (d *Device) Send(ctx context.Context, conversation, id, text string) (wire.SendResult, error) {
	return d.SendPayload(ctx, conversation, id, wire.Payload{Kind: wire.KindRequest, Text: text})
}

// SendPayload is Send for any payload (a widget response, say).
func (d *Device) SendPayload(ctx context.Context, conversation, id string, p wire.Payload) (wire.SendResult, error) {
	body, _ := json.Marshal(p)
	suite := seal.SuiteHPKE
	if d.Plaintext {
		suite = seal.SuitePlain
	}
	env, err := seal.Seal(d.me, seal.Header{Suite: suite, To: []string{d.st.Agent}, Conversation: conversation, MessageID: id,
		ListVersion: d.st.OwnList.Version, SentAtMs: time.Now().UnixMilli()}, d.st.Pins.Devices(d.st.Agent), body)
	if err != nil {
		return wire.SendResult{}, err
	}
	b := wire.SendBody{ID: id, Conversation: conversation, To: env.To, Envelope: env.Encode()}
	var res wire.SendResult
	for attempt := range 8 {
		if res, err = d.client.Send(ctx, b); err == nil {
			return res, nil
		}
		var ae *relayclient.APIError
		if errors.As(err, &ae) && ae.Status < 500 {
			return res, err
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(time.Duration(100<<attempt) * time.Millisecond):
		}
	}
	return res, err
}

// AddDevice makes another device of the same person in dir, confirmed by
// this one: this device signs the next version of the person's device
// list with both, and the relay issues the new device its credential.
func (d *Device) AddDevice(ctx context.Context, dir, name string) (*Device, error) {
	me, err := seal.NewIdentity(d.me.Party, name)
	if err != nil {
		return nil, err
	}
	list := seal.SignList(d.me, d.st.OwnList.Version+1, append(d.st.OwnList.Devices, me.Device))
	added, err := d.client.AddDevice(ctx, me.Device, list)
	if err != nil {
		return nil, err
	}
	d.st.OwnList = list
	if err := d.save(); err != nil {
		return nil, err
	}
	person := strings.TrimPrefix(d.me.Party, "person:")
	agent := strings.TrimPrefix(d.st.Agent, "agent:")
	f, data, err := localstate.Open(dir, owner(person, agent))
	if err != nil {
		return nil, err
	}
	if data != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s already holds a device of %s for %s", dir, person, agent)
	}
	var pins seal.Pins // a copy: the two devices keep their own
	if b, err := json.Marshal(d.st.Pins); err == nil {
		_ = json.Unmarshal(b, &pins)
	}
	nd := &Device{file: f, me: me, st: State{Agent: d.st.Agent, Credential: added.Credential, BaseURL: d.st.BaseURL, Pins: pins, Paired: true, OwnList: list}}
	nd.st.Identity, _ = me.Bytes()
	nd.client = &relayclient.Client{BaseURL: d.st.BaseURL, Token: added.Credential, HTTP: d.client.HTTP}
	if err := nd.save(); err != nil {
		_ = f.Close()
		return nil, err
	}
	return nd, nil
}

// AgentDevices are the agent devices this device pinned.
func (d *Device) AgentDevices() []seal.Device { return d.st.Pins.Devices(d.st.Agent) }

// Credential is the device's relay credential (a secret).
func (d *Device) Credential() string { return d.st.Credential }

// Reply is a reply or widget the agent sent.
type Reply struct {
	ID           string          `json:"id"`
	Conversation string          `json:"conversationId"`
	Kind         string          `json:"kind"`
	Text         string          `json:"text,omitempty"`
	Widget       json.RawMessage `json:"widget,omitempty"`
	ReplyTo      string          `json:"replyToMessageId,omitempty"`
	Seq          int64           `json:"seq"`
}

// ErrAgentNotPinned is Fetch's error when the agent sent from a device
// this device never paired with (its bridge lost its state and made a new
// key, or the relay slipped in a key of its own): those envelopes are
// refused until the person pairs again and compares the new code.
var ErrAgentNotPinned = errors.New("pacerelle: a message came from an agent device key this device did not pair with")

// Fetch reads every new reply after the device's cursor, once: envelopes
// that do not open (altered, replayed, not for this device) are skipped
// and counted. Envelopes from an unpinned agent device are refused too,
// and Fetch then also returns ErrAgentNotPinned, saying what to do.
func (d *Device) Fetch(ctx context.Context) ([]Reply, int, error) {
	var out []Reply
	refused := 0
	var unpinned error
	for {
		page, err := d.client.Inbox(ctx, d.st.Cursor, 50)
		if err != nil {
			return out, refused, err
		}
		for _, m := range page.Messages {
			env, err := seal.Decode(m.Envelope)
			var op *seal.Opened
			if err == nil {
				op, err = seal.Open(d.me, &d.st.Pins, &d.st.Seen, env, seal.OpenOptions{AllowPlaintext: d.Plaintext, MaxAge: ReplayWindow})
			}
			if err != nil {
				if !errors.Is(err, seal.ErrReplay) {
					refused++
				}
				if (errors.Is(err, seal.ErrUnknownSender) || errors.Is(err, seal.ErrStaleList)) && env.FromParty == d.st.Agent && unpinned == nil {
					unpinned = fmt.Errorf("%w (device %q): its messages are refused; if the agent's bridge was reset, pair again (pacerelle pair with a new --state-dir and a new --device name) and confirm only if the code equals the one the agent shows", ErrAgentNotPinned, env.FromDevice)
				}
				continue
			}
			var p wire.Payload
			if json.Unmarshal(op.Body, &p) != nil {
				refused++
				continue
			}
			out = append(out, Reply{ID: op.MessageID, Conversation: op.Conversation, Kind: p.Kind, Text: p.Text, Widget: p.Widget, ReplyTo: p.ReplyTo, Seq: m.Seq})
		}
		d.st.Cursor = page.Cursor
		d.st.Seen.Prune(time.Now().Add(-ReplayWindow).UnixMilli())
		if err := d.save(); err != nil {
			return out, refused, err
		}
		if len(page.Messages) > 0 {
			_ = d.client.Ack(ctx, page.Cursor)
		}
		if !page.HasMore {
			return out, refused, unpinned
		}
	}
}

// Wait fetches until done says the replies so far are enough, following
// the doorbell between fetches, or until ctx ends.
func (d *Device) Wait(ctx context.Context, done func([]Reply) bool) ([]Reply, error) {
	var all []Reply
	rings := make(chan struct{}, 1)
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for bctx.Err() == nil {
			_ = d.client.Doorbell(bctx, func() {}, func(int64) {
				select {
				case rings <- struct{}{}:
				default:
				}
			})
			select {
			case <-bctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	for {
		got, _, err := d.Fetch(ctx)
		all = append(all, got...)
		if err == nil && done(all) {
			return all, nil
		}
		if errors.Is(err, ErrAgentNotPinned) {
			return all, err
		}
		select {
		case <-ctx.Done():
			return all, ctx.Err()
		case <-rings:
		case <-time.After(2 * time.Second):
		}
	}
}
