package main

import (
	"encoding/json"
	"slices"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
)

// HistoryKeep is how many processed requests and confirmed replies are
// kept locally (get_history returns up to 50 of each).
const HistoryKeep = 50

// Request is a message from a person, kept until processed and then as
// history.
type Request struct {
	ID             string          `json:"id"`
	Seq            int64           `json:"seq"` // local order; the wait_for_messages cursor
	Kind           string          `json:"kind"`
	ConversationID string          `json:"conversationId"`
	From           string          `json:"from"`
	FromDevice     string          `json:"fromDevice"`
	Text           string          `json:"text,omitempty"`
	WidgetID       string          `json:"widgetId,omitempty"`
	Value          json.RawMessage `json:"value,omitempty"`
	ReplyTo        string          `json:"replyToMessageId,omitempty"`
	SentAt         int64           `json:"sentAt"`
	ReceivedAt     int64           `json:"receivedAt"`
	Processed      bool            `json:"processed"`
	ProcessedAt    int64           `json:"processedAt,omitempty"`
	Note           string          `json:"note,omitempty"`
}

// Reply statuses: pending (persisted, not yet sent), sent (the relay
// confirmed it), uncertain (a send failed in transit: it may or may not
// have arrived; it is resent with the same id, which the relay dedups).
const (
	StatusPending   = "pending"
	StatusSent      = "sent"
	StatusUncertain = "uncertain"
)

// Reply is a message of the agent's.
type Reply struct {
	ID              string          `json:"id"`
	Kind            string          `json:"kind"`
	ConversationID  string          `json:"conversationId"`
	To              string          `json:"to"`
	Text            string          `json:"text,omitempty"`
	Widget          json.RawMessage `json:"widget,omitempty"`
	SourceMessageID string          `json:"sourceMessageId,omitempty"`
	ReplyTo         string          `json:"replyToMessageId,omitempty"`
	Envelope        []byte          `json:"envelope,omitempty"` // sealed once, resent as is
	Status          string          `json:"status"`
	Attempts        int             `json:"attempts"`
	LastError       string          `json:"lastError,omitempty"`
	CreatedAt       int64           `json:"createdAt"`
	ConfirmedAt     int64           `json:"confirmedAt,omitempty"`
}

// Checkpoint is progress on a request, for another session to resume.
type Checkpoint struct {
	SourceMessageID  string `json:"sourceMessageId"`
	ConversationID   string `json:"conversationId"`
	Summary          string `json:"summary"`
	NextAction       string `json:"nextAction"`
	HostSessionLabel string `json:"hostSessionLabel,omitempty"`
	Status           string `json:"status"`
	CreatedAt        int64  `json:"createdAt"`
	UpdatedAt        int64  `json:"updatedAt"`
}

// PairingInfo is a person device this bridge pinned.
type PairingInfo struct {
	Person      string `json:"person"`
	Device      string `json:"device"`
	Code        string `json:"code"`
	Fingerprint string `json:"fingerprint"`
	PinnedAt    int64  `json:"pinnedAt"`
}

// Current is the last observed conversation.
type Current struct {
	ConversationID string `json:"conversationId"`
	From           string `json:"from"`
	LastMessageID  string `json:"lastMessageId"`
	At             int64  `json:"at"`
}

// State is everything the bridge keeps, in one encrypted file.
type State struct {
	Identity    []byte        `json:"identity"`
	ListVersion uint64        `json:"listVersion"`
	Pins        seal.Pins     `json:"pins"`
	Seen        seal.Seen     `json:"seen"`
	RelayCursor int64         `json:"relayCursor"`
	NextSeq     int64         `json:"nextSeq"`
	Requests    []Request     `json:"requests"`
	Replies     []Reply       `json:"replies"`
	Checkpoints []Checkpoint  `json:"checkpoints"`
	Pairings    []PairingInfo `json:"pairings"`
	// PendingPairings and RefusedPairings are started pairings whose code
	// is shown, and confirmations that were not pinned (pairing.go).
	PendingPairings []PendingPairing `json:"pendingPairings,omitempty"`
	RefusedPairings []RefusedPairing `json:"refusedPairings,omitempty"`
	// PairingStarts are the starts answered in the last hour (limits).
	PairingStarts []PairingStart `json:"pairingStarts,omitempty"`
	Current       *Current       `json:"current,omitempty"`
}

func (s *State) request(id string) *Request {
	for i := range s.Requests {
		if s.Requests[i].ID == id {
			return &s.Requests[i]
		}
	}
	return nil
}

func (s *State) pending() int {
	n := 0
	for _, r := range s.Requests {
		if !r.Processed {
			n++
		}
	}
	return n
}

// prune keeps every pending request and unconfirmed reply, and the last
// HistoryKeep processed requests and confirmed replies.
func (s *State) prune() {
	keep := func(n int, done func(i int) bool, del func(i int)) {
		count := 0
		for i := n - 1; i >= 0; i-- {
			if done(i) {
				count++
				if count > HistoryKeep {
					del(i)
				}
			}
		}
	}
	keep(len(s.Requests), func(i int) bool { return s.Requests[i].Processed }, func(i int) { s.Requests = slices.Delete(s.Requests, i, i+1) })
	keep(len(s.Replies), func(i int) bool { return s.Replies[i].Status == StatusSent }, func(i int) { s.Replies = slices.Delete(s.Replies, i, i+1) })
	for i := range s.Replies {
		if s.Replies[i].Status == StatusSent {
			s.Replies[i].Envelope = nil // never resent again
		}
	}
}
