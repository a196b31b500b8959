// Package relayclient speaks the API of Pacerelle's relay
// (shared/pacerelle/relay) over HTTP and its WebSocket doorbell: the side
// of the bridge and of a person's device. It shares the bodies with the
// relay through shared/pacerelle/wire, not the relay's code, so that a
// client links no store and no server.
package relayclient

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
)

// Client speaks the relay's API, for the bridge (Agent set, Token an agent
// token) and for a person's device (Token its device credential, or a
// VantagePeers token to start a pairing).
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:8787
	WSURL   string // the doorbell; derived from BaseURL when empty
	Token   string
	Agent   string
	HTTP    *http.Client
	// PingEvery is how often the doorbell sends a ping (default
	// DoorbellPing): API Gateway closes a WebSocket idle for 10 minutes.
	PingEvery time.Duration
	// MaxConnAge is how long one doorbell connection is kept before the
	// client replaces it (default DoorbellMaxAge): API Gateway ends every
	// connection at 2 hours.
	MaxConnAge time.Duration
}

// APIError is a refusal by the relay. Any other error from a Client method
// is a transport failure: the request may or may not have been applied.
type APIError struct {
	Status int
	wire.ErrorBody
}

func (e *APIError) Error() string { return fmt.Sprintf("relay: %d %s", e.Status, e.ErrorBody.Error) }

// Do calls one route of the API: in, when not nil, is the JSON body; out,
// when not nil, receives the JSON answer. A refusal is an *APIError. The
// methods below are Do on their routes; Do itself reaches a route they do
// not cover (the relay's tests send bodies no method would).
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, body)
	if err != nil {
		return err
	}
	c.auth(req.Header)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e := &APIError{Status: resp.StatusCode}
		_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&e.ErrorBody)
		return e
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (c *Client) auth(h http.Header) {
	if c.Token != "" { // else the credential may be in WSURL's query (a browser's way)
		h.Set("Authorization", "Bearer "+c.Token)
	}
	if c.Agent != "" {
		h.Set(wire.AgentHeader, c.Agent)
	}
}

// RegisterAgent publishes the bridge's device and its signed list.
func (c *Client) RegisterAgent(ctx context.Context, device, list any) error {
	d, l, err := raws(device, list)
	if err != nil {
		return err
	}
	return c.Do(ctx, http.MethodPut, "/pacerelle/v1/agent/device", wire.DeviceBody{Device: d, List: l}, nil)
}

// StartPairing registers a person's device with an agent and sends its
// commitment (seal.Commitment of the device and its nonce): pairing v2.
func (c *Client) StartPairing(ctx context.Context, agent, person string, device, list any, commit []byte) (wire.PairingStarted, error) {
	var out wire.PairingStarted
	d, l, err := raws(device, list)
	if err != nil {
		return out, err
	}
	err = c.Do(ctx, http.MethodPost, "/pacerelle/v1/pairings", wire.PairingBody{Agent: agent, Person: person, Version: 2, Device: d, List: l, Commit: commit}, &out)
	return out, err
}

// AddDevice registers another device of the calling device's person with
// the newer list that includes it.
func (c *Client) AddDevice(ctx context.Context, device, list any) (wire.DeviceAdded, error) {
	var out wire.DeviceAdded
	d, l, err := raws(device, list)
	if err != nil {
		return out, err
	}
	err = c.Do(ctx, http.MethodPost, "/pacerelle/v1/devices", wire.DeviceBody{Device: d, List: l}, &out)
	return out, err
}

// Answer is the bridge's answer to a person device's commitment.
func (c *Client) Answer(ctx context.Context, b wire.AnswerBody) error {
	return c.Do(ctx, http.MethodPost, "/pacerelle/v1/pairings/answer", b, nil)
}

// Reveal sends the person device's nonce, once the agent answered.
func (c *Client) Reveal(ctx context.Context, agentParty string, nonce []byte) error {
	return c.Do(ctx, http.MethodPost, "/pacerelle/v1/pairings/reveal", wire.RevealBody{Agent: agentParty, Nonce: nonce}, nil)
}

// Confirm sends the person device's signature over the pairing transcript.
func (c *Client) Confirm(ctx context.Context, agentParty string, sig []byte) error {
	return c.Do(ctx, http.MethodPost, "/pacerelle/v1/pairings/confirm", wire.ConfirmBody{Agent: agentParty, Sig: sig}, nil)
}

// Pairings lists the caller's pairings (pairing v2).
func (c *Client) Pairings(ctx context.Context) ([]wire.PairingView, error) {
	var out struct {
		Pairings []wire.PairingView `json:"pairings"`
	}
	err := c.Do(ctx, http.MethodGet, "/pacerelle/v1/pairings?v=2", nil, &out)
	return out.Pairings, err
}

// List reads a party's latest device list into v (a seal.DeviceList).
func (c *Client) List(ctx context.Context, party string, v any) error {
	return c.Do(ctx, http.MethodGet, "/pacerelle/v1/lists/"+url.PathEscape(party), nil, v)
}

// Send posts one envelope; resending the same id is not a second message.
func (c *Client) Send(ctx context.Context, b wire.SendBody) (wire.SendResult, error) {
	var out wire.SendResult
	err := c.Do(ctx, http.MethodPost, "/pacerelle/v1/messages", b, &out)
	return out, err
}

// Inbox reads the caller's inbox after a sequence.
func (c *Client) Inbox(ctx context.Context, after int64, limit int) (wire.InboxPage, error) {
	var out wire.InboxPage
	err := c.Do(ctx, http.MethodGet, "/pacerelle/v1/inbox?after="+strconv.FormatInt(after, 10)+"&limit="+strconv.Itoa(limit), nil, &out)
	return out, err
}

// Ack acknowledges the inbox up to seq.
func (c *Client) Ack(ctx context.Context, seq int64) error {
	return c.Do(ctx, http.MethodPost, "/pacerelle/v1/inbox/ack", map[string]int64{"seq": seq}, nil)
}

// Conversations lists the conversations of the caller's inbox.
func (c *Client) Conversations(ctx context.Context) ([]wire.Conversation, error) {
	var out struct {
		Conversations []wire.Conversation `json:"conversations"`
	}
	err := c.Do(ctx, http.MethodGet, "/pacerelle/v1/conversations", nil, &out)
	return out.Conversations, err
}

// DoorbellSilence is how long the doorbell may stay silent before the
// client gives the connection up (the relay's heartbeat is 30 s).
const DoorbellSilence = 75 * time.Second

// Doorbell defaults.
const (
	// DoorbellPing is under DoorbellSilence, so that the answer to a ping
	// keeps a doorbell that pushes no heartbeat (API Gateway) alive.
	DoorbellPing = 60 * time.Second
	// DoorbellMaxAge replaces a connection well before API Gateway's
	// 2-hour limit.
	DoorbellMaxAge = 110 * time.Minute
)

// errAged ends a connection that reached its age: it is replaced at once.
var errAged = errors.New("relay: doorbell connection aged out")

// Doorbell connects to the doorbell and calls ring with every head it
// announces, until a connection fails or ctx ends. A connection that
// reaches MaxConnAge is replaced by a new one (connected is called again),
// and each new one pings at once to learn the head, which is how no ring
// is lost in between.
func (c *Client) Doorbell(ctx context.Context, connected func(), ring func(seq int64)) error {
	for {
		if err := c.doorbellOnce(ctx, connected, ring); !errors.Is(err, errAged) {
			return err
		}
	}
}

func (c *Client) doorbellOnce(ctx context.Context, connected func(), ring func(seq int64)) error {
	u := c.WSURL
	if u == "" {
		u = strings.TrimSuffix(c.BaseURL, "/") + "/pacerelle/v1/doorbell"
		u = "ws" + strings.TrimPrefix(u, "http")
	}
	h := http.Header{}
	c.auth(h)
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: h, HTTPClient: c.HTTP})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return &APIError{Status: resp.StatusCode, ErrorBody: wire.ErrorBody{Error: "doorbell refused"}}
		}
		return err
	}
	defer conn.CloseNow()
	connected()
	pingEvery, maxAge := cmp.Or(c.PingEvery, DoorbellPing), cmp.Or(c.MaxConnAge, DoorbellMaxAge)
	cctx, cancel := context.WithTimeoutCause(ctx, maxAge, errAged)
	defer cancel()
	go func() {
		t := time.NewTicker(pingEvery)
		defer t.Stop()
		for {
			wctx, stop := context.WithTimeout(cctx, 10*time.Second)
			err := conn.Write(wctx, websocket.MessageText, []byte(`{"action":"ping"}`))
			stop()
			if err != nil {
				return
			}
			select {
			case <-cctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	for {
		// Silence for longer than DoorbellSilence is a dead connection,
		// which a read without a deadline would never notice. A timed-out
		// read closes the connection.
		rctx, stop := context.WithTimeout(cctx, DoorbellSilence)
		_, b, err := conn.Read(rctx)
		stop()
		if err != nil {
			if context.Cause(cctx) == errAged && ctx.Err() == nil {
				conn.Close(websocket.StatusNormalClosure, "replaced")
				return errAged
			}
			return err
		}
		var r wire.Ring
		switch {
		case json.Unmarshal(b, &r) != nil:
		case r.Error != "":
			return fmt.Errorf("relay: doorbell: %s", r.Error)
		case r.Seq >= 0:
			ring(r.Seq)
		}
	}
}

func raws(device, list any) (json.RawMessage, json.RawMessage, error) {
	d, err := json.Marshal(device)
	if err != nil {
		return nil, nil, err
	}
	l, err := json.Marshal(list)
	return d, l, err
}
