package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// Experimental transports, not part of the default set: the same domain
// service behind an MCP server whose tools are registered with the SDK's
// low-level Server.AddTool instead of the generic mcp.AddTool that
// shared/mcpserver uses. They measure what a change to shared/mcpserver
// would save; they do not measure the product.
//
//   - inmem-raw: arguments decoded straight into the input struct, the
//     output marshalled once and sent as structuredContent plus the same
//     JSON as a text block (what the SDK sends today, minus the per-call
//     unmarshal / schema validation / re-marshal of the tool's own output).
//   - inmem-raw-notext: as inmem-raw, without the text copy.
const (
	trInmemRaw       = "inmem-raw"
	trInmemRawNoText = "inmem-raw-notext"
)

var experimentalTransports = []string{trInmemRaw, trInmemRawNoText, trHTTPInproc}

// addRaw registers fn as a tool with a low-level handler.
func addRaw[In, Out any](m *mcp.Server, name string, textCopy bool, fn func(context.Context, In) (Out, error)) {
	m.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in In
			if len(req.Params.Arguments) > 0 {
				if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
					res := &mcp.CallToolResult{}
					res.SetError(err)
					return res, nil
				}
			}
			out, err := fn(ctx, in)
			if err != nil {
				res := &mcp.CallToolResult{}
				res.SetError(err)
				return res, nil
			}
			b, err := json.Marshal(out)
			if err != nil {
				return nil, err
			}
			res := &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{}}
			if textCopy {
				res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
			}
			return res, nil
		})
}

func startInmemRaw(ctx context.Context, dataDir string, textCopy bool) (target, error) {
	svc, err := openServices(ctx, dataDir, sqlite.Options{}, nil)
	if err != nil {
		return nil, err
	}
	c, p := svc.messages, localAdmin()
	m := mcp.NewServer(&mcp.Implementation{Name: "vantagepeers-raw", Version: "bench"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	type sendIn struct {
		From           string `json:"from"`
		FromInstanceID string `json:"fromInstanceId"`
		Channel        string `json:"channel"`
		Content        string `json:"content"`
	}
	addRaw(m, "send_message", textCopy, func(ctx context.Context, in sendIn) (message.SendResult, error) {
		return c.Send(ctx, p, message.SendInput{From: in.From, FromInstanceID: in.FromInstanceID, Channel: in.Channel, Content: in.Content})
	})
	type checkIn struct {
		Recipient string `json:"recipient"`
	}
	addRaw(m, "check_messages", textCopy, func(ctx context.Context, in checkIn) (message.Inbox, error) {
		return c.Check(ctx, p, message.CheckInput{Recipient: in.Recipient})
	})
	type markIn struct {
		ReceiptIDs []string `json:"receiptIds"`
	}
	addRaw(m, "mark_as_read", textCopy, func(ctx context.Context, in markIn) (map[string]int, error) {
		n, err := c.MarkRead(ctx, p, in.ReceiptIDs)
		return map[string]int{"marked": n}, err
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := m.Connect(ctx, st, nil)
	if err != nil {
		_ = svc.Close()
		return nil, err
	}
	cs, err := newClient().Connect(ctx, ct, nil)
	if err != nil {
		_ = ss.Close()
		_ = svc.Close()
		return nil, err
	}
	return &mcpTarget{cs: cs, cleanup: func() error { return errors.Join(ss.Wait(), svc.Close()) }}, nil
}

// trHTTPInproc serves the product's HTTP handler (shared/httpapi around
// shared/mcpserver, wired as `vantagepeers serve` wires them) from this
// process on loopback, so that -profile-dir can profile the HTTP path.
const trHTTPInproc = "http-inproc"

func startHTTPInproc(ctx context.Context, dataDir, master string) (target, error) {
	svc, err := openServices(ctx, dataDir, sqlite.Options{}, nil)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = svc.Close()
		return nil, err
	}
	srv := &http.Server{Handler: httpapi.New(httpapi.Options{
		MCP:     mcpserver.New(svc.mcpOptions(mcpserver.Options{Version: "bench"})),
		Tokens:  auth.New(auth.Options{Store: svc.store, MasterHash: auth.Hash(master)}),
		Version: "bench", Started: time.Now(), Storage: "sqlite",
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop := func() error {
		err := srv.Shutdown(context.Background())
		return errors.Join(err, svc.Close())
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	hc := &http.Client{Transport: &bearerTransport{base: tr, token: master}}
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: "http://" + ln.Addr().String() + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		_ = stop()
		return nil, err
	}
	return &mcpTarget{cs: cs, cleanup: func() error { tr.CloseIdleConnections(); return stop() }}, nil
}
