package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// The measured conversation: alice sends to bob; bob checks his inbox.
const (
	sender    = "alice"
	recipient = "bob"
)

// target is one way of reaching the product.
type target interface {
	// send sends one small message from alice to bob and returns the
	// call's latency and bob's receipt id.
	send(ctx context.Context) (time.Duration, string, error)
	// check reads bob's unread messages and returns the call's latency and
	// how many came back.
	check(ctx context.Context) (time.Duration, int, error)
	// markRead marks receipts read (not measured; it keeps bob's inbox
	// bounded between the phases).
	markRead(ctx context.Context, ids []string) error
	// cpu returns the CPU time used so far by whatever serves the calls: the
	// server process, or this whole process (client included) for the
	// in-process transports.
	cpu() (time.Duration, bool)
	close() error
}

// Transport names, in the order the table lists them.
const (
	trHTTP   = "http"   // the binary's `serve`, Streamable HTTP on loopback
	trStdio  = "stdio"  // the binary's `stdio`, a child process on pipes (Go SDK client)
	trInmem  = "inmem"  // the same MCP server in this process, in-memory transport
	trDomain = "domain" // coord.Service called directly: no MCP, no transport
)

var allTransports = []string{trHTTP, trStdio, trStdioTS, trInmem, trDomain}

// inProcess reports whether a transport runs the product inside the
// benchmark process (and can therefore be CPU-profiled).
func inProcess(tr string) bool { return tr != trHTTP && tr != trStdio && tr != trStdioTS }

// ---- MCP client (http, stdio, inmem) ----

type mcpTarget struct {
	cs      *mcp.ClientSession
	pid     int // server process; 0 when it runs in this process
	cleanup func() error
}

func (t *mcpTarget) cpu() (time.Duration, bool) {
	if t.pid == 0 {
		return selfCPU()
	}
	return processCPU(t.pid)
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "vantagepeers-bench", Version: "0"}, nil)
}

// call makes one tool call and returns its latency: the SDK's CallTool,
// from request to decoded result. Checking the result and decoding it into
// out happen after the clock stops.
func (t *mcpTarget) call(ctx context.Context, tool string, args map[string]any, out any) (time.Duration, error) {
	t0 := time.Now()
	res, err := t.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	d := time.Since(t0)
	if err != nil {
		return d, fmt.Errorf("%s: %w", tool, err)
	}
	return d, decodeResult(tool, res, out)
}

func decodeResult(tool string, res *mcp.CallToolResult, out any) error {
	if res.IsError {
		var msg []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				msg = append(msg, tc.Text)
			}
		}
		return fmt.Errorf("%s: tool error: %s", tool, strings.Join(msg, "; "))
	}
	if out == nil {
		return nil
	}
	// The client decodes structuredContent into generic JSON values.
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s: decoding result: %w", tool, err)
	}
	return nil
}

// sendArgs and checkArgs are what an agent would pass. The servers act as
// an admin (master token / local owner), so from and recipient are named.
func sendArgs() map[string]any {
	return map[string]any{"from": sender, "fromInstanceId": sender + "-main", "channel": recipient,
		"content": "API schema merged, you can rebase onto main now."}
}

func checkArgs() map[string]any { return map[string]any{"recipient": recipient} }

// caller makes one tool call through an MCP client and returns its latency,
// decoding structuredContent into out.
type caller interface {
	call(ctx context.Context, tool string, args map[string]any, out any) (time.Duration, error)
}

func sendVia(ctx context.Context, c caller) (time.Duration, string, error) {
	var res message.SendResult
	d, err := c.call(ctx, "send_message", sendArgs(), &res)
	if err != nil {
		return d, "", err
	}
	id, err := receiptOf(res)
	return d, id, err
}

func checkVia(ctx context.Context, c caller) (time.Duration, int, error) {
	var in message.Inbox
	d, err := c.call(ctx, "check_messages", checkArgs(), &in)
	return d, in.Count, err
}

func markReadVia(ctx context.Context, c caller, ids []string) error {
	_, err := c.call(ctx, "mark_as_read", map[string]any{"receiptIds": ids}, nil)
	return err
}

func (t *mcpTarget) send(ctx context.Context) (time.Duration, string, error) { return sendVia(ctx, t) }

func (t *mcpTarget) check(ctx context.Context) (time.Duration, int, error) { return checkVia(ctx, t) }

// checkSize returns the size of one check_messages result as JSON, and how
// much of it is structuredContent and the text copy the SDK adds.
func (t *mcpTarget) checkSize(ctx context.Context) (total, structured, text int, err error) {
	res, err := t.cs.CallTool(ctx, &mcp.CallToolParams{Name: "check_messages", Arguments: checkArgs()})
	if err != nil {
		return 0, 0, 0, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return 0, 0, 0, err
	}
	sc, _ := json.Marshal(res.StructuredContent)
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			tb, _ := json.Marshal(tc.Text)
			text += len(tb)
		}
	}
	return len(b), len(sc), text, nil
}

func (t *mcpTarget) markRead(ctx context.Context, ids []string) error {
	return markReadVia(ctx, t, ids)
}

func (t *mcpTarget) close() error {
	err := t.cs.Close()
	if t.cleanup != nil {
		err = errors.Join(err, t.cleanup())
	}
	return err
}

func receiptOf(res message.SendResult) (string, error) {
	if len(res.Recipients) != 1 || res.Recipients[0].Orchestrator != recipient || res.Recipients[0].ReceiptID == "" {
		return "", fmt.Errorf("send_message: unexpected recipients %+v", res.Recipients)
	}
	return res.Recipients[0].ReceiptID, nil
}

// serverEnv is the environment of a product subprocess: the parent's,
// without VP_* settings that would change what is measured, plus the
// master token.
func serverEnv(master string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VP_") {
			env = append(env, kv)
		}
	}
	return append(env, "VP_MASTER_TOKEN="+master)
}

// bearerTransport adds the Authorization header to every request.
type bearerTransport struct {
	base  http.RoundTripper
	token string
}

func (b *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// startHTTP runs `vantagepeers serve` on the data dir and connects to it.
func startHTTP(ctx context.Context, bin, dataDir, master, logPath string) (target, error) {
	port, err := testproc.FreePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--data-dir", dataDir, "--addr", addr)
	cmd.Env = serverEnv(master)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() error {
		_ = cmd.Process.Signal(os.Interrupt)
		var err error
		select {
		case err = <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			err = fmt.Errorf("serve did not stop within 15s: %v", <-exited)
		}
		logf.Close()
		return err
	}
	base := "http://" + addr
	if err := waitHealthy(ctx, base+"/health", exited); err != nil {
		_ = stop()
		return nil, fmt.Errorf("%w (log: %s)", err, logPath)
	}
	if err := waitWarm(ctx, logPath); err != nil {
		_ = stop()
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	hc := &http.Client{Transport: &bearerTransport{base: tr, token: master}}
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: base + "/mcp", HTTPClient: hc,
		// The server is stateless: it never pushes, so no standalone stream.
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		_ = stop()
		return nil, fmt.Errorf("connecting over HTTP: %w (log: %s)", err, logPath)
	}
	return &mcpTarget{cs: cs, pid: cmd.Process.Pid, cleanup: func() error { tr.CloseIdleConnections(); return stop() }}, nil
}

func waitHealthy(ctx context.Context, url string, exited <-chan error) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("serve exited early: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("serve did not become healthy within 30s")
}

// waitWarm waits until the server's log says its search index is loaded:
// at 100k messages that takes seconds of CPU in the background, which
// would otherwise be charged to the first calls measured.
func waitWarm(ctx context.Context, logPath string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(logPath); err == nil && bytes.Contains(b, []byte("search index warm")) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("the server did not log \"search index warm\" within 2 minutes (log: %s)", logPath)
}

// startStdio runs `vantagepeers stdio` as a child process, as an MCP host
// such as Claude Code does, and connects over its stdin/stdout.
func startStdio(ctx context.Context, bin, dataDir, master, logPath string) (target, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "stdio", "--data-dir", dataDir)
	cmd.Env = serverEnv(master)
	cmd.Stderr = logf
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting stdio: %w (log: %s)", err, logPath)
	}
	if err := waitWarm(ctx, logPath); err != nil {
		_ = cs.Close()
		logf.Close()
		return nil, err
	}
	return &mcpTarget{cs: cs, pid: cmd.Process.Pid, cleanup: logf.Close}, nil
}

// startInmem serves the product's MCP server (shared/mcpserver, wired as the
// binary's stdio command wires it) inside this process over the SDK's
// in-memory transport: MCP and JSON included, pipes and process hop not.
func startInmem(ctx context.Context, dataDir string) (target, error) {
	svc, err := openServices(ctx, dataDir, sqlite.Options{}, nil)
	if err != nil {
		return nil, err
	}
	p := localAdmin()
	server := mcpserver.New(svc.mcpOptions(mcpserver.Options{Version: "bench", LocalPrincipal: &p}))
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
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

// ---- domain (no MCP) ----

type domainTarget struct{ svc *services }

func startDomain(ctx context.Context, dataDir string) (target, error) {
	svc, err := openServices(ctx, dataDir, sqlite.Options{}, nil)
	if err != nil {
		return nil, err
	}
	return &domainTarget{svc: svc}, nil
}

func (t *domainTarget) send(ctx context.Context) (time.Duration, string, error) {
	t0 := time.Now()
	res, err := t.svc.messages.Send(ctx, localAdmin(), message.SendInput{From: sender, FromInstanceID: sender + "-main",
		Channel: recipient, Content: "API schema merged, you can rebase onto main now."})
	d := time.Since(t0)
	if err != nil {
		return d, "", err
	}
	id, err := receiptOf(res)
	return d, id, err
}

func (t *domainTarget) check(ctx context.Context) (time.Duration, int, error) {
	t0 := time.Now()
	in, err := t.svc.messages.Check(ctx, localAdmin(), message.CheckInput{Recipient: recipient})
	return time.Since(t0), in.Count, err
}

func (t *domainTarget) markRead(ctx context.Context, ids []string) error {
	_, err := t.svc.messages.MarkRead(ctx, localAdmin(), ids)
	return err
}

func (t *domainTarget) cpu() (time.Duration, bool) { return selfCPU() }

func (t *domainTarget) close() error { return t.svc.Close() }

// start opens a target of the given transport on dataDir.
func start(ctx context.Context, tr, bin, dataDir, master, logDir string) (target, error) {
	switch tr {
	case trHTTP:
		return startHTTP(ctx, bin, dataDir, master, filepath.Join(logDir, "serve.log"))
	case trStdio:
		return startStdio(ctx, bin, dataDir, master, filepath.Join(logDir, "stdio.log"))
	case trStdioTS:
		return startStdioTS(ctx, bin, dataDir, master, filepath.Join(logDir, "stdio-ts.log"))
	case trInmem:
		return startInmem(ctx, dataDir)
	case trDomain:
		return startDomain(ctx, dataDir)
	case trHTTPInproc:
		return startHTTPInproc(ctx, dataDir, master)
	case trInmemRaw, trInmemRawNoText:
		return startInmemRaw(ctx, dataDir, tr == trInmemRaw)
	}
	return nil, fmt.Errorf("unknown transport %q (want %s)", tr, strings.Join(allTransports, ", "))
}
