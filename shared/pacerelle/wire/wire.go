// Package wire is what travels between Pacerelle's parties: inside an
// envelope, the plaintext payload the person's devices and the bridge
// exchange and the widget.standard v1 format (wire.go); around it, the
// relay API's bodies and party names (api.go), which the relay and its
// clients share without either importing the other.
package wire

import (
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"
)

// Payload kinds.
const (
	KindRequest        = "request"         // person -> agent
	KindReply          = "reply"           // agent -> person
	KindWidget         = "widget"          // agent -> person
	KindWidgetResponse = "widget_response" // person -> agent
)

// Payload is an envelope's plaintext.
type Payload struct {
	Kind            string          `json:"kind"`
	Text            string          `json:"text,omitempty"`
	Widget          json.RawMessage `json:"widget,omitempty"`
	WidgetID        string          `json:"widgetId,omitempty"` // a widget_response: the widget answered
	Value           json.RawMessage `json:"value,omitempty"`    // a widget_response: the answer
	SourceMessageID string          `json:"sourceMessageId,omitempty"`
	ReplyTo         string          `json:"replyToMessageId,omitempty"`
}

// Widget limits.
const (
	MaxWidgetBytes = 32 << 10
	MaxWidgetID    = 100
)

var widgetKind = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,49}$`)

// Widget is a widget.standard v1 payload.
type Widget struct {
	Type string          `json:"type"`
	V    int             `json:"v"`
	ID   string          `json:"id"`
	Kind string          `json:"kind"`
	Spec json.RawMessage `json:"spec"`
}

// ValidateWidget checks a widget.standard v1 payload and returns it in
// canonical JSON. The error says which field is wrong and why.
func ValidateWidget(raw []byte) (json.RawMessage, error) {
	if len(raw) > MaxWidgetBytes {
		return nil, fmt.Errorf("is %d bytes; the limit is %d", len(raw), MaxWidgetBytes)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("must be a JSON object (a widget.standard v1 payload): %v", err)
	}
	for k := range fields {
		switch k {
		case "type", "v", "id", "kind", "spec":
		default:
			return nil, fmt.Errorf("%s: unknown field; widget.standard v1 has type, v, id, kind and spec", k)
		}
	}
	var w Widget
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("has a field of the wrong type: %v", err)
	}
	switch {
	case w.Type != "widget.standard":
		return nil, fmt.Errorf(`type: must be "widget.standard", got %q`, w.Type)
	case w.V != 1:
		return nil, fmt.Errorf("v: must be 1, got %d", w.V)
	case w.ID == "" || utf8.RuneCountInString(w.ID) > MaxWidgetID:
		return nil, fmt.Errorf("id: is required, 1 to %d characters", MaxWidgetID)
	case !widgetKind.MatchString(w.Kind):
		return nil, fmt.Errorf("kind: is required: lower-case letters, digits, '_', '.', '-', up to 50 (e.g. \"confirm\")")
	}
	var spec map[string]json.RawMessage
	if len(w.Spec) == 0 || json.Unmarshal(w.Spec, &spec) != nil || spec == nil {
		return nil, fmt.Errorf("spec: is required and must be an object (e.g. {\"title\": \"Publier ?\"})")
	}
	return json.Marshal(w)
}
