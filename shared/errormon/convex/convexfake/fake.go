// Package convexfake is a fake of a Convex deployment's log endpoint,
// GET /api/stream_function_logs?cursor=<ms>, on httptest: deploy-key
// authentication (Authorization: Convex <key>), the {entries, newCursor}
// answer with Completion and Progress entries shaped as the backend
// serialises them (crates/local_backend/src/logs.rs), the cursor's
// semantics (entries logged strictly after it; newCursor is the last one's
// log time) and the long poll (a request with nothing new is held until
// something is logged or the hold ends, then answered empty with the same
// cursor). Scripted answers make it fail or stall. It is a fake, not
// Convex: tests that use it say so in their names.
package convexfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"
)

// DefaultHold is how long Convex holds a long poll with nothing new.
const DefaultHold = 60 * time.Second

// Entry is one function execution part in the fake's log.
type Entry struct {
	// Kind is "Completion" (the default) or "Progress".
	Kind string
	// UdfType is "Query", "Mutation" (the default), "Action" or "HttpAction".
	UdfType    string
	Identifier string
	// Error is the failure's text; "" for a success (serialised as null).
	Error       string
	ExecutionID string
	RequestID   string
	// Time is the execution's start, serialised as "timestamp" in seconds;
	// zero: now.
	Time     time.Time
	LogLines []string
	// LogMs is the entry's place in the log (the cursor unit, ms); zero:
	// Time's, or just after the last entry when that is not later.
	LogMs float64
}

// Answer is a scripted answer: after Delay, Status with Body, or with
// Status 0 the normal answer.
type Answer struct {
	Status int
	Header http.Header
	Body   string
	Delay  time.Duration
}

// Request is one request as the fake saw it.
type Request struct {
	Cursor     string
	Authorized bool
	Status     int
	// Entries is the number of entries answered.
	Entries  int
	Received time.Time
	Answered time.Time
}

// Options configure the fake.
type Options struct {
	// Key is the deploy key the fake accepts.
	Key string
	// Hold is how long a request with nothing new is held; zero: DefaultHold.
	Hold time.Duration
	// Inclusive makes the fake also return the entries logged at the
	// cursor itself, as a server whose cursor overlapped would: a client
	// must deduplicate them.
	Inclusive bool
	// Chunk is the most entries one answer holds (zero: all of them);
	// newCursor is then the last answered entry's log time, and the client
	// asks again from there, as Convex's own CLI does.
	Chunk int
	// Latency delays every answer, as a remote deployment's round trip.
	Latency time.Duration
}

// Server is the fake. It is safe for concurrent use.
type Server struct {
	srv  *httptest.Server
	opts Options

	mu      sync.Mutex
	log     []item
	changed chan struct{} // closed and replaced on every Append
	script  []Answer
	reqs    []Request
}

type item struct {
	ms float64
	e  Entry
}

// New starts a fake; t's cleanup closes it.
func New(t testing.TB, o Options) *Server {
	if o.Hold == 0 {
		o.Hold = DefaultHold
	}
	s := &Server{opts: o, changed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// URL is the deployment URL.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the fake; held requests are answered first.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Append logs entries and wakes held requests. It returns the log time
// (ms) of the last one.
func (s *Server) Append(es ...Entry) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range es {
		if e.Kind == "" {
			e.Kind = "Completion"
		}
		if e.UdfType == "" {
			e.UdfType = "Mutation"
		}
		if e.Time.IsZero() {
			e.Time = time.Now()
		}
		ms := e.LogMs
		if ms == 0 {
			ms = float64(e.Time.UnixMicro()) / 1000
		}
		if n := len(s.log); n > 0 && ms <= s.log[n-1].ms {
			ms = s.log[n-1].ms + 1
		}
		s.log = append(s.log, item{ms: ms, e: e})
	}
	close(s.changed)
	s.changed = make(chan struct{})
	if len(s.log) == 0 {
		return 0
	}
	return s.log[len(s.log)-1].ms
}

// Script queues answers for the next requests, in order.
func (s *Server) Script(as ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, as...)
}

// Requests returns the requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/stream_function_logs" || r.Method != http.MethodGet {
		writeJSON(w, http.StatusNotFound, map[string]string{"code": "NotFound", "message": "no such route"})
		return
	}
	// The request is recorded before it is served, so that a client that
	// has an answer always finds its request.
	s.mu.Lock()
	idx := len(s.reqs)
	authorized := s.opts.Key != "" && r.Header.Get("Authorization") == "Convex "+s.opts.Key
	s.reqs = append(s.reqs, Request{Cursor: r.URL.Query().Get("cursor"), Authorized: authorized, Received: time.Now()})
	var scripted *Answer
	if len(s.script) > 0 {
		scripted = &s.script[0]
		s.script = s.script[1:]
	}
	s.mu.Unlock()
	status := http.StatusOK
	defer func() {
		s.mu.Lock()
		s.reqs[idx].Status, s.reqs[idx].Answered = status, time.Now()
		s.mu.Unlock()
	}()

	if scripted != nil {
		if !sleep(r, scripted.Delay) {
			status = 0
			return
		}
		if scripted.Status != 0 {
			status = scripted.Status
			for k, v := range scripted.Header {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(scripted.Body))
			return
		}
	}
	if !authorized {
		// The key's text is never echoed, as Convex does not.
		status = http.StatusUnauthorized
		writeJSON(w, status, map[string]string{"code": "BadDeployKey", "message": "The provided deploy key was invalid for this deployment."})
		return
	}
	raw := r.URL.Query().Get("cursor")
	cursor, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		status = http.StatusBadRequest
		writeJSON(w, status, map[string]string{"code": "BadRequest", "message": "invalid cursor"})
		return
	}
	if !sleep(r, s.opts.Latency) {
		status = 0
		return
	}
	entries, next, changed := s.after(cursor)
	if len(entries) == 0 {
		t := time.NewTimer(s.opts.Hold)
		defer t.Stop()
		select {
		case <-changed:
			entries, next, _ = s.after(cursor)
		case <-t.C:
		case <-r.Context().Done():
			status = 0
			return
		}
	}
	s.mu.Lock()
	s.reqs[idx].Entries = len(entries)
	s.mu.Unlock()
	out := make([]map[string]any, 0, len(entries))
	for _, e := range entries {
		out = append(out, entryJSON(e))
	}
	writeJSON(w, status, map[string]any{"entries": out, "newCursor": next})
}

// after returns the entries logged after cursor (at or after it when
// Inclusive; the first Chunk of them when set), the new cursor, and the channel that the next Append closes.
func (s *Server) after(cursor float64) ([]Entry, float64, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Entry
	next := cursor
	// The log is in increasing log time (Append keeps it so).
	from := sort.Search(len(s.log), func(i int) bool {
		return s.log[i].ms > cursor || (s.opts.Inclusive && s.log[i].ms == cursor)
	})
	for _, it := range s.log[from:] {
		if s.opts.Chunk > 0 && len(out) == s.opts.Chunk {
			break
		}
		out = append(out, it.e)
		next = max(next, it.ms)
	}
	return out, next, s.changed
}

// entryJSON is the entry as FunctionExecutionJson serialises it.
func entryJSON(e Entry) map[string]any {
	ts := float64(e.Time.UnixMicro()) / 1e6
	lines := e.LogLines
	if lines == nil {
		lines = []string{}
	}
	m := map[string]any{
		"kind":          e.Kind,
		"udfType":       e.UdfType,
		"componentPath": nil,
		"identifier":    e.Identifier,
		"logLines":      lines,
		"timestamp":     ts,
		"requestId":     e.RequestID,
		"executionId":   e.ExecutionID,
	}
	if e.Kind == "Completion" {
		var errText any
		if e.Error != "" {
			errText = e.Error
		}
		m["cachedResult"] = false
		m["executionTime"] = 0.012
		m["success"] = nil
		m["error"] = errText
		m["usageStats"] = map[string]any{"databaseReadBytes": 0, "databaseWriteBytes": 0}
		m["occInfo"] = nil
		m["executionTimestamp"] = ts
		m["identityType"] = "user"
		m["environment"] = "isolate"
	}
	return m
}

func sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// BurstCauses are the functions that fail in a Burst, one cause each.
var BurstCauses = []string{"messages:send", "orders:get", "ai:run", "cart:add"}

// Burst is n failed completions of four functions (four causes, the item
// number varying), spread evenly over span from from: the burst the
// monitor must read to the end in one run.
func Burst(n int, from time.Time, span time.Duration) []Entry {
	causes := BurstCauses
	step := span / time.Duration(max(n, 1))
	es := make([]Entry, 0, n)
	for k := range n {
		fn := causes[k%len(causes)]
		es = append(es, Entry{Identifier: fn, ExecutionID: fmt.Sprint("burst-", k), Time: from.Add(time.Duration(k) * step),
			Error: fmt.Sprintf("Uncaught Error: %s failed for item %d\n    at handler (../convex/%s.ts:%d:9)", fn, k, fn[:3], 10+k%7)})
	}
	return es
}
