package wire

import (
	"encoding/json"
	"testing"
)

// TestRelayAPIJSON: the relay's bodies keep the JSON they had when the
// relay declared them (recorded from it before they moved here): the
// webapp's JavaScript, the WebSocket API and deployed bridges read these
// names, so a renamed tag or a lost omitempty is a protocol break, not a
// refactoring.
func TestRelayAPIJSON(t *testing.T) {
	want := map[string]string{
		"ErrorBody":        `{"error":"e","kind":"invalid","field":"f","retryAfterSeconds":3}`,
		"ErrorBody zero":   `{"error":"","kind":""}`,
		"DeviceBody":       `{"device":{"k":1},"list":{"k":1}}`,
		"DeviceAdded":      `{"party":"p","device":"d","credential":"c"}`,
		"PairingBody":      `{"agent":"a","person":"p","version":2,"device":{"k":1},"list":{"k":1},"commit":"AQI="}`,
		"PairingBody zero": `{"agent":"","version":0,"device":null,"list":null,"commit":null}`,
		"PairingStarted":   `{"party":"p","agent":"a","credential":"c","agentList":{"k":1},"version":2,"createdAt":5}`,
		"AnswerBody":       `{"person":"p","commit":"AQI=","nonce":"AQI=","sig":"AQI="}`,
		"RevealBody":       `{"agent":"a","nonce":"AQI="}`,
		"ConfirmBody":      `{"agent":"a","sig":"AQI="}`,
		"PairingView":      `{"agent":"a","person":"p","personDevice":"d","version":2,"commit":"AQI=","agentDevice":"ad","agentNonce":"AQI=","answerSig":"AQI=","personNonce":"AQI=","confirmation":"AQI=","failures":1,"createdAt":5,"personList":{"k":1}}`,
		"PairingView zero": `{"agent":"","person":"","personDevice":"","createdAt":0}`,
		"SendBody":         `{"id":"i","conversation":"c","to":["t"],"envelope":"AQI="}`,
		"SendResult":       `{"id":"i","seq":{"t":4},"duplicate":true}`,
		"InboxPage":        `{"messages":[{"party":"p","seq":1,"id":"i","from":"f","conversation":"c","envelope":"AQI=","at":9}],"cursor":1,"has_more":true,"head":2}`,
		"Conversation":     `{"party":"p","id":"i","lastSeq":3,"at":9}`,
		"Ring":             `{"seq":7,"error":"x"}`,
		"Ring zero":        `{"seq":0}`,
		"AgentHeader":      `"X-Pacerelle-Agent"`,
		"AgentParty":       `"agent:bot"`,
		"PersonParty":      `"person:bot"`,
	}
	cases := jsonCases("  Bot ")
	if len(cases) != len(want) {
		t.Fatalf("%d cases, %d recorded", len(cases), len(want))
	}
	for _, c := range cases {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != want[c.name] {
			t.Errorf("%s: %s (%v), want %s", c.name, b, err, want[c.name])
		}
	}
}

// jsonCases is each body with every field set, the zero value of those
// with optional fields, and the names, from an id to normalise.
func jsonCases(id string) []struct {
	name string
	v    any
} {
	raw := json.RawMessage(`{"k":1}`)
	b := []byte{1, 2}
	return []struct {
		name string
		v    any
	}{
		{"ErrorBody", ErrorBody{Error: "e", Kind: "invalid", Field: "f", RetryAfterSeconds: 3}},
		{"ErrorBody zero", ErrorBody{}},
		{"DeviceBody", DeviceBody{Device: raw, List: raw}},
		{"DeviceAdded", DeviceAdded{Party: "p", Device: "d", Credential: "c"}},
		{"PairingBody", PairingBody{Agent: "a", Person: "p", Version: 2, Device: raw, List: raw, Commit: b}},
		{"PairingBody zero", PairingBody{}},
		{"PairingStarted", PairingStarted{Party: "p", Agent: "a", Credential: "c", AgentList: raw, Version: 2, CreatedAt: 5}},
		{"AnswerBody", AnswerBody{Person: "p", Commit: b, Nonce: b, Sig: b}},
		{"RevealBody", RevealBody{Agent: "a", Nonce: b}},
		{"ConfirmBody", ConfirmBody{Agent: "a", Sig: b}},
		{"PairingView", PairingView{Pairing: Pairing{Agent: "a", Person: "p", PersonDevice: "d", Version: 2, Commit: b, AgentDevice: "ad", AgentNonce: b, AnswerSig: b, PersonNonce: b, Confirmation: b, Failures: 1, CreatedAt: 5}, PersonList: raw}},
		{"PairingView zero", PairingView{}},
		{"SendBody", SendBody{ID: "i", Conversation: "c", To: []string{"t"}, Envelope: b}},
		{"SendResult", SendResult{ID: "i", Seq: map[string]int64{"t": 4}, Duplicate: true}},
		{"InboxPage", InboxPage{Messages: []Message{{Party: "p", Seq: 1, ID: "i", From: "f", Conversation: "c", Envelope: b, At: 9}}, Cursor: 1, HasMore: true, Head: 2}},
		{"Conversation", Conversation{Party: "p", ID: "i", LastSeq: 3, At: 9}},
		{"Ring", Ring{Seq: 7, Error: "x"}},
		{"Ring zero", Ring{}},
		{"AgentHeader", AgentHeader},
		{"AgentParty", AgentParty(id)},
		{"PersonParty", PersonParty(id)},
	}
}
