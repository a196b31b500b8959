package convex

import (
	"encoding/json"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon/internal/errtext"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// cursor is a Read's position: Convex's cursor (kept as the text it was
// given, so that a fractional ms survives the round trip) and the ids of
// the last events returned, oldest first.
type cursor struct {
	ms   string
	tail []string
}

func parseCursor(s string) (cursor, error) {
	if s == "" {
		return cursor{}, nil
	}
	ms, ids, _ := strings.Cut(s, "|")
	f, err := strconv.ParseFloat(ms, 64)
	if err != nil || f < 0 {
		return cursor{}, vp.Errorf(op, vp.KindInvalid, "cursor", "%q is not a Convex log cursor", errtext.Clip(s, 64))
	}
	c := cursor{ms: ms}
	if ids != "" {
		for _, id := range strings.Split(ids, ",") {
			if id, err := url.QueryUnescape(id); err == nil && id != "" {
				c.tail = append(c.tail, id)
			}
		}
	}
	return c, nil
}

func (c cursor) String() string {
	if len(c.tail) == 0 {
		return c.ms
	}
	var b strings.Builder
	b.WriteString(c.ms)
	for i, id := range c.tail {
		if i == 0 {
			b.WriteByte('|')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(url.QueryEscape(id))
	}
	return b.String()
}

// answer is stream_function_logs' answer. Entries are kept raw for
// Event.Raw.
type answer struct {
	Entries   []json.RawMessage `json:"entries"`
	NewCursor *float64          `json:"newCursor"`
}

// entry is the part of a FunctionExecutionJson that the monitor reads.
type entry struct {
	Kind        string  `json:"kind"`
	UdfType     string  `json:"udfType"`
	Identifier  string  `json:"identifier"`
	Timestamp   float64 `json:"timestamp"` // seconds
	Error       *string `json:"error"`
	RequestID   string  `json:"requestId"`
	ExecutionID string  `json:"executionId"`
	raw         []byte
}

// id identifies an execution: its executionId, or (from backends older
// than execution ids) its request and start.
func (e *entry) id() string {
	if e.ExecutionID != "" {
		return e.ExecutionID
	}
	ts := strconv.FormatFloat(e.Timestamp, 'f', -1, 64)
	if e.RequestID != "" {
		return e.RequestID + "@" + ts
	}
	return e.Identifier + "@" + ts
}

// failed: a completion with an error. Backends older than the "kind" tag
// sent completions only.
func (e *entry) failed() bool {
	return (e.Kind == "" || e.Kind == "Completion") && e.Error != nil && strings.TrimSpace(*e.Error) != ""
}

func (e *entry) event() source.Event {
	p := errtext.Split(*e.Error)
	if p.Message == "" {
		p.Message = errtext.Clip(errtext.FirstLine(*e.Error), errtext.MaxMessageBytes)
	}
	return source.Event{
		ID: e.id(),
		// Seconds as a float hold about a microsecond at today's epoch;
		// rounding there drops the float's noise.
		Time:     time.UnixMicro(int64(math.Round(e.Timestamp * 1e6))).UTC(),
		Function: e.Identifier,
		Type:     p.Type,
		Message:  p.Message,
		Stack:    p.Stack,
		Raw:      errtext.Clip(string(e.raw), source.MaxRawBytes),
	}
}

// page turns an answer into a Page. Convex answers every entry after the
// cursor in log order, so when the previous Read stopped inside this same
// answer (it stayed at the same Convex cursor), everything up to the last
// id it returned was already read: reading resumes after it. Ids of the
// tail and of this page are skipped besides, against overlaps.
func (s *Source) page(cur cursor, ans answer, max int) source.Page {
	entries := make([]entry, 0, len(ans.Entries))
	for _, raw := range ans.Entries {
		var e entry
		if json.Unmarshal(raw, &e) != nil {
			// An entry of a shape this reader does not know is not an
			// error it can report; the cursor moves past it.
			continue
		}
		e.raw = raw
		entries = append(entries, e)
	}
	start := 0
	if n := len(cur.tail); n > 0 {
		last := cur.tail[n-1]
		for i := range entries {
			if entries[i].failed() && entries[i].id() == last {
				start = i + 1
				break
			}
		}
	}
	seen := make(map[string]bool, len(cur.tail)+len(entries))
	for _, id := range cur.tail {
		seen[id] = true
	}
	var events []source.Event
	tail := cur.tail
	for i := start; i < len(entries); i++ {
		e := &entries[i]
		if !e.failed() {
			continue
		}
		id := e.id()
		if seen[id] {
			continue
		}
		if len(events) == max {
			// Stop inside the answer: stay at the same Convex cursor; the
			// next Read resumes after the last id returned.
			return source.Page{Events: events, Cursor: cursor{ms: cur.ms, tail: tail}.String(), More: true,
				Newest: events[len(events)-1].Time}
		}
		seen[id] = true
		events = append(events, e.event())
		tail = appendTail(tail, id)
	}
	next := cur.ms
	if ans.NewCursor != nil {
		if f := *ans.NewCursor; f >= 0 {
			if old, err := strconv.ParseFloat(cur.ms, 64); err != nil || f > old {
				next = strconv.FormatFloat(f, 'f', -1, 64)
			}
		}
	}
	// A chunk that moved the cursor may have more after it; one that did
	// not (an overlap answered again) would answer the same again.
	out := cursor{ms: next, tail: tail}
	return source.Page{Events: events, Cursor: out.String(), More: next != cur.ms, Newest: out.time()}
}

// time is the log time the cursor stands at; zero when it has none.
func (c cursor) time() time.Time {
	f, err := strconv.ParseFloat(c.ms, 64)
	if err != nil || f <= 0 {
		return time.Time{}
	}
	return time.UnixMicro(int64(math.Round(f * 1000))).UTC()
}

// appendTail appends id, keeping the last tailIDs. It copies, so that the
// cursor a Read was given is never changed under its caller.
func appendTail(tail []string, id string) []string {
	out := make([]string, 0, min(len(tail)+1, tailIDs))
	if drop := len(tail) + 1 - tailIDs; drop > 0 {
		tail = tail[drop:]
	}
	out = append(out, tail...)
	return append(out, id)
}
