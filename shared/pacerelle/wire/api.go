package wire

import (
	"encoding/json"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The relay's API (shared/pacerelle/relay serves it,
// shared/pacerelle/relayclient speaks it): the names and bodies both sides
// share, declared once so that their JSON cannot drift apart.

// AgentHeader names the agent a VantagePeers token speaks as; the token
// must be allowed to act as it.
const AgentHeader = "X-Pacerelle-Agent"

// AgentParty and PersonParty are the inbox names of an agent and a person.
func AgentParty(id string) string  { return "agent:" + vp.NormalizeOrchestrator(id) }
func PersonParty(id string) string { return "person:" + vp.NormalizeOrchestrator(id) }

// ErrorBody is every refusal's JSON.
type ErrorBody struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
	Field string `json:"field,omitempty"`
	// RetryAfterSeconds, on a 429, is when the refused call may succeed.
	RetryAfterSeconds int64 `json:"retryAfterSeconds,omitempty"`
}

// ---- registration and pairing

// DeviceBody registers a device with its party's signed list.
type DeviceBody struct {
	Device json.RawMessage `json:"device"`
	List   json.RawMessage `json:"list"`
}

// DeviceAdded is the new device's credential (shown once).
type DeviceAdded struct {
	Party      string `json:"party"`
	Device     string `json:"device"`
	Credential string `json:"credential"`
}

// PairingBody starts a pairing: a person's new device, authenticated by a
// VantagePeers token of the person, commits to its keys for an agent.
type PairingBody struct {
	Agent   string          `json:"agent"`
	Person  string          `json:"person,omitempty"` // default: the token's identity
	Version int             `json:"version"`
	Device  json.RawMessage `json:"device"`
	List    json.RawMessage `json:"list"`
	Commit  []byte          `json:"commit"` // seal.Commitment of the device and its nonce
}

// PairingStarted is the answer: the device credential (shown once) and the
// agent's device list. The code comes once the agent answered and the
// device revealed.
type PairingStarted struct {
	Party      string          `json:"party"`
	Agent      string          `json:"agent"`
	Credential string          `json:"credential"`
	AgentList  json.RawMessage `json:"agentList"`
	Version    int             `json:"version"`
	CreatedAt  int64           `json:"createdAt"`
}

// AnswerBody is the bridge's answer to a commitment: its fresh nonce,
// signed (seal.AnswerBytes) by its device.
type AnswerBody struct {
	Person string `json:"person"` // the person party
	Commit []byte `json:"commit"` // the commitment answered
	Nonce  []byte `json:"nonce"`
	Sig    []byte `json:"sig"`
}

// RevealBody is the device's nonce, revealed once the agent answered.
type RevealBody struct {
	Agent string `json:"agent"` // the agent party
	Nonce []byte `json:"nonce"`
}

// ConfirmBody is the person device's signature over the pairing transcript
// (seal.PairingTranscript, seal.ConfirmLabel), made once the person saw the
// same code on both screens.
type ConfirmBody struct {
	Agent string `json:"agent"` // the agent party
	Sig   []byte `json:"sig"`
}

// Pairing links an agent and a person, and carries the pairing protocol
// (seal's pairing v2, shared/pacerelle/relay/pairing.go) through its
// stages: the person device's Commit at the start, the bridge's AgentNonce
// and AnswerSig, the device's PersonNonce (its reveal), then the device's
// Confirmation over the whole transcript. The clients verify everything;
// the relay checks it too, to count failures (Failures) and drop a pairing
// that keeps failing. The relay stores it as it is served.
type Pairing struct {
	Agent        string `json:"agent"`
	Person       string `json:"person"`
	PersonDevice string `json:"personDevice"`
	// Version is the pairing protocol (seal.PairingVersion); 0 is a v1
	// pairing stored before v2, kept for the parties it links.
	Version      int    `json:"version,omitempty"`
	Commit       []byte `json:"commit,omitempty"`
	AgentDevice  string `json:"agentDevice,omitempty"` // the device that signed the answer
	AgentNonce   []byte `json:"agentNonce,omitempty"`
	AnswerSig    []byte `json:"answerSig,omitempty"`
	PersonNonce  []byte `json:"personNonce,omitempty"`
	Confirmation []byte `json:"confirmation,omitempty"`
	Failures     int    `json:"failures,omitempty"`
	CreatedAt    int64  `json:"createdAt"`
}

// PairingView is a pairing as the bridge and the device read it: every
// value of the protocol and the person's list, to verify on their side.
type PairingView struct {
	Pairing
	PersonList json.RawMessage `json:"personList,omitempty"`
}

// ---- messages

// SendBody is one sealed envelope for one or more recipient parties.
type SendBody struct {
	ID           string   `json:"id"`
	Conversation string   `json:"conversation"`
	To           []string `json:"to"`
	Envelope     []byte   `json:"envelope"`
}

// SendResult gives the sequence the message has in each recipient inbox.
type SendResult struct {
	ID        string           `json:"id"`
	Seq       map[string]int64 `json:"seq"`
	Duplicate bool             `json:"duplicate"`
}

// Message is one entry of an inbox log, as the relay stores and serves it.
type Message struct {
	Party        string `json:"party"` // the inbox
	Seq          int64  `json:"seq"`
	ID           string `json:"id"`
	From         string `json:"from"`
	Conversation string `json:"conversation"`
	Envelope     []byte `json:"envelope"`
	At           int64  `json:"at"`
}

// InboxPage is a page of an inbox after a cursor.
type InboxPage struct {
	Messages []Message `json:"messages"`
	Cursor   int64     `json:"cursor"`
	HasMore  bool      `json:"has_more"`
	Head     int64     `json:"head"`
}

// Conversation is a conversation seen in an inbox, as the relay stores and
// serves it.
type Conversation struct {
	Party   string `json:"party"`
	ID      string `json:"id"`
	LastSeq int64  `json:"lastSeq"`
	At      int64  `json:"at"`
}

// Ring is the doorbell's one message: the inbox has data up to Seq.
type Ring struct {
	Seq int64 `json:"seq"`
	// Error, from a WebSocket API that no longer knows the connection
	// (its row expired or was cleaned up): the client reconnects.
	Error string `json:"error,omitempty"`
}
