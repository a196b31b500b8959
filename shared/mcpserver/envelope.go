package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
)

// EnvelopeDepth is how deep a JSON-RPC request may nest: the arguments
// object of a tools/call is level 3 ({"params":{"arguments":{...}}}), and
// its own limit is MaxArgumentDepth. Past it the transports refuse the
// request themselves (httpapi over HTTP, GuardStdio over stdio): the SDK
// would refuse past 1,000 levels by closing a stdio session, and
// encoding/json past 10,000 as "not valid JSON".
const EnvelopeDepth = MaxArgumentDepth + 2

// DepthError words the refusal of a request nested past EnvelopeDepth
// (found by ScanJSON): a JSON-RPC error code and message naming the tool
// argument at fault when it is one (-32602), else the path (-32600).
func DepthError(p *JSONProblem) (code int, msg string) {
	path := p.Path
	if i := strings.Index(path, "params.arguments."); i >= 0 && (i == 0 || path[i-1] == '.') {
		arg := path[i+len("params.arguments."):]
		if j := strings.IndexAny(arg, ".["); j >= 0 {
			arg = arg[:j]
		}
		return -32602, "invalid params: argument " + strconv.Quote(arg) + " nests arrays or objects deeper than the limit of " +
			strconv.Itoa(MaxArgumentDepth) + " levels (the arguments object is level 1); flatten it"
	}
	if len(path) > 80 {
		path = path[:80] + "…"
	}
	return -32600, "invalid request: the request nests arrays or objects deeper than the limit of " + strconv.Itoa(EnvelopeDepth) +
		" levels, at " + strconv.Quote(path)
}

// RequestIDShallow returns the id of a request too deep to decode whole:
// the id member of its top-level object, or nil (there is none, or it
// comes after a member too deep to skip).
func RequestIDShallow(body []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil
		}
		if key == "id" {
			return v
		}
	}
	return nil
}

// DepthErrorResponse is the JSON-RPC error answering a request too deep
// to decode, echoing its id.
func DepthErrorResponse(body []byte, p *JSONProblem) []byte {
	code, msg := DepthError(p)
	var id any
	if raw := RequestIDShallow(body); raw != nil {
		id = raw
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return b
}

// GuardStdio sits between a stdio transport and its newline-delimited
// JSON-RPC: a message nested past EnvelopeDepth is answered on w with
// DepthErrorResponse and never reaches the SDK, whose decoder would end
// the whole session over it. Give the SDK the returned reader and writer;
// writes to the writer and the guard's answers do not interleave.
func GuardStdio(r io.Reader, w io.Writer) (io.Reader, io.Writer) {
	lw := &lockedWriter{w: w}
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				if p := ScanJSON(line, EnvelopeDepth, false); p != nil {
					_, _ = lw.Write(append(DepthErrorResponse(line, p), '\n'))
				} else if _, werr := pw.Write(line); werr != nil {
					return // the SDK stopped reading
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr, lw
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
