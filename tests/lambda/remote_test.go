package lambda_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/tests/nodeclient"
)

// TestRemoteConnectThroughTheLambdaFunctions: on a deployment, `vantagepeers
// connect --remote --url` with the master token on stdin mints an agent
// token through the oauth function's admin API and prints the host's
// configuration; the official TypeScript MCP client, configured with it as
// printed, acts as that agent through the mcp function at once. token
// list|revoke --url see and end it. Both functions run under the emulator on
// DynamoDB Local, behind a stand-in for API Gateway that routes by the
// stack's own route table.
func TestRemoteConnectThroughTheLambdaFunctions(t *testing.T) {
	env := mcpEnv(t)
	gw := startGateway(t, map[string]*rie{"oauth": startRIE(t, "oauth", env), "mcp": startRIE(t, "mcp", env)})
	binaries(t, "vantagepeers")
	mcpURL := gw + "/mcp"
	local := filepath.Join(t.TempDir(), "never")
	cli := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "vantagepeers"), append(args, "--data-dir", local)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		// as `aws secretsmanager get-secret-value … --output text |` gives it
		cmd.Stdin = strings.NewReader(masterToken + "\n")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return out.String(), fmt.Errorf("vantagepeers %s: %v: %s", strings.Join(args, " "), err, errb.String())
		}
		return out.String(), nil
	}

	out, err := cli("connect", "claude-code", "--as", "alice", "--remote", "--url", mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(out), &cfg); err != nil || cfg.MCPServers["vantagepeers"] == nil {
		t.Fatalf("connect --remote printed no .mcp.json entry (%v):\n%s", err, out)
	}
	entry := cfg.MCPServers["vantagepeers"]
	if !strings.Contains(string(entry), `"url":"`+mcpURL+`"`) && !strings.Contains(string(entry), `"url": "`+mcpURL+`"`) {
		t.Fatalf("the entry does not name the deployment's URL:\n%s", entry)
	}
	nodeClient(t, "remote", map[string]any{"as": "alice", "agent": entry})

	var e struct{ Headers map[string]string }
	if err := json.Unmarshal(entry, &e); err != nil || !strings.HasPrefix(e.Headers["Authorization"], "Bearer ") {
		t.Fatalf("the entry carries no bearer token (%v):\n%s", err, entry)
	}
	whoami := func() (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest("POST", mcpURL, bytes.NewReader(rpc(1, "tools/call", map[string]any{"name": "whoami", "arguments": map[string]any{}})))
		for k, v := range mcpHeaders() {
			req.Header.Set(k, v)
		}
		req.Header.Set("Authorization", e.Headers["Authorization"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	if status, body := whoami(); status != http.StatusOK || !bytes.Contains(body, []byte(`alice`)) {
		t.Fatalf("whoami with the minted token before its revocation: HTTP %d %s", status, body)
	}

	list, err := cli("token", "list", "--url", mcpURL)
	var id string
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.Contains(l, "alice") && strings.Contains(l, "active") {
			id = f[0]
		}
	}
	if err != nil || id == "" {
		t.Fatalf("token list --url: %v\n%s", err, list)
	}
	if out, err := cli("token", "revoke", id, "--url", mcpURL); err != nil || out != "revoked "+id+"\n" {
		t.Fatalf("token revoke --url: %v %q", err, out)
	}
	if status, body := whoami(); status != http.StatusUnauthorized {
		t.Fatalf("the revoked token on /mcp: HTTP %d %s", status, body)
	}
	if _, err := os.Stat(local); !os.IsNotExist(err) {
		t.Errorf("a remote command touched the local data dir: %v", err)
	}
}

// startGateway serves HTTP on a free port the way API Gateway's HTTP API
// fronts the stack: each request goes to the function its route names
// (awsenv.Routes, the table the CDK stack declares its routes from) as a
// payload format 2.0 event, and the function's answer goes back as HTTP.
// It returns the base URL.
func startGateway(t *testing.T, fns map[string]*rie) string {
	t.Helper()
	var mu sync.Mutex // the emulator runs one invocation at a time, as one Lambda instance does
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, ok := routeOf(r.Method, r.URL.Path)
		fn := fns[route.Function]
		if !ok || fn == nil {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		key := "ANY " + route.Path
		if len(route.Methods) > 0 {
			key = r.Method + " " + route.Path
		}
		hdr := map[string]string{}
		for k, vs := range r.Header {
			if k != "Host" && k != "Content-Length" {
				hdr[strings.ToLower(k)] = strings.Join(vs, ",")
			}
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if len(body) == 0 {
			body = nil
		}
		path := r.URL.Path
		if r.URL.RawQuery != "" {
			path += "?" + r.URL.RawQuery
		}
		mu.Lock()
		status, payload, err := fn.post(httpEvent(r.Method, path, key, hdr, body))
		mu.Unlock()
		var res httpResponse
		if err == nil && status == http.StatusOK {
			err = json.Unmarshal(payload, &res)
		}
		if err != nil || status != http.StatusOK {
			http.Error(w, fmt.Sprintf(`{"message":"Internal Server Error"} (%v, emulator HTTP %d: %s)`, err, status, payload), http.StatusInternalServerError)
			return
		}
		for k, v := range res.Headers {
			w.Header().Set(k, v)
		}
		out := []byte(res.Body)
		if res.IsBase64Encoded {
			out, _ = base64.StdEncoding.DecodeString(res.Body)
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(out)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	// The first invocation of each function waits for its emulator.
	for name, fn := range fns {
		if status, b := fn.invokeRaw(t, httpEvent("GET", "/health", "GET /health", nil, nil)); status != http.StatusOK {
			t.Fatalf("%s under the emulator: HTTP %d %s", name, status, b)
		}
	}
	return "http://" + ln.Addr().String()
}

// routeOf is the route API Gateway picks for a request: of those whose
// method and path match, the one with the most literal segments.
func routeOf(method, path string) (awsenv.Route, bool) {
	var best awsenv.Route
	bestLiterals := -1
	for _, r := range awsenv.Routes() {
		if len(r.Methods) > 0 && !slices.ContainsFunc(r.Methods, func(m string) bool { return strings.EqualFold(m, method) }) {
			continue
		}
		if n, ok := matchRoute(r.Path, path); ok && n > bestLiterals {
			best, bestLiterals = r, n
		}
	}
	return best, bestLiterals >= 0
}

// matchRoute matches an API Gateway route path ({name} one segment,
// {proxy+} one or more) and counts its literal segments.
func matchRoute(pattern, path string) (int, bool) {
	ps, ss := strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(strings.Trim(path, "/"), "/")
	literals := 0
	for i, seg := range ps {
		switch {
		case seg == "{proxy+}":
			return literals, len(ss) > i && ss[i] != ""
		case i >= len(ss):
			return 0, false
		case strings.HasPrefix(seg, "{"):
		case seg != ss[i]:
			return 0, false
		default:
			literals++
		}
	}
	return literals, len(ss) == len(ps)
}

// nodeClient runs tests/clients/firsthour.mjs's scenario with cfg and fails
// t unless every check of its summary passed.
func nodeClient(t *testing.T, scenario string, cfg any) {
	t.Helper()
	dir := filepath.Join(repoRoot, "tests")
	nodeclient.Run{Node: nodeclient.Require(t, dir, "@modelcontextprotocol/sdk"), Dir: dir, Script: "firsthour.mjs", Scenario: scenario, Config: cfg}.Do(t)
}
