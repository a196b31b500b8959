package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// listener is a deployment URL an agent controls: it records every
// request (method, URL, every header, body) and answers as Convex does
// when nothing was logged.
type listener struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
	auth []string
}

func newListener(t *testing.T) *listener {
	t.Helper()
	l := &listener{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL)
		_ = r.Header.Write(&b)
		b.Write(body)
		l.mu.Lock()
		l.seen = append(l.seen, b.String())
		l.auth = append(l.auth, r.Header.Get("Authorization"))
		l.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"entries":[],"newCursor":0}`)
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *listener) received() (all string, auths []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.seen, "\n"), append([]string(nil), l.auth...)
}

// callAs calls one tool through the MCP server as p; the text of a refusal
// is returned as the error.
func callAs(t *testing.T, a *app, p vp.Principal, tool string, args map[string]any) (json.RawMessage, error) {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := a.mcpServer(&p).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		var msg []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				msg = append(msg, tc.Text)
			}
		}
		return nil, fmt.Errorf("%s", strings.Join(msg, " "))
	}
	b, _ := json.Marshal(res.StructuredContent)
	return b, nil
}

// agentOf is an ordinary agent of tenant: a token that is not the admin's,
// resolved as the server resolves a bearer.
func agentOf(t *testing.T, a *app, tenant string) vp.Principal {
	t.Helper()
	ctx := context.Background()
	secret, _, err := a.Tokens.Create(ctx, auth.Spec{Tenant: tenant, ActsAs: []string{"alice"}, ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Tokens.Resolve(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if p.Admin || p.Tenant != tenant {
		t.Fatalf("the agent's principal %+v is not an ordinary agent of %s", p, tenant)
	}
	return p
}

// The master token, the GitHub token, the AWS secret key and a canary
// variable of the server never reach a listener that an ordinary agent
// names as a deployment's URL, whatever name it gives as deployKeyEnvVar;
// the refusal names the rule. The control deployment, with a valid key
// name, reaches the same listener with its key: the listener is reachable
// by the source (also under an egress policy that allows 127.0.0.1), so
// what keeps the secrets home is the naming rule.
func TestAgentCannotSendServerSecretsToItsListener(t *testing.T) {
	ctx := context.Background()
	secrets := map[string]string{
		"VP_MASTER_TOKEN":       auth.NewSecret(),
		"VP_GITHUB_TOKEN":       "ghp_" + auth.NewSecret()[:36],
		"AWS_SECRET_ACCESS_KEY": "aws/" + auth.NewSecret()[:36],
		"VP_TEST_CANARY_SECRET": "canary-" + auth.NewSecret(),
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	const control = "prod:control|the-control-deploy-key"
	t.Setenv("VP_EGRESS_ALLOW_HOSTS", "127.0.0.1")
	t.Setenv("VP_GITHUB_API_URL", "")
	l := newListener(t)
	dir := filepath.Join(t.TempDir(), "data")
	// The control key is bound to the listener: the key rule, not the
	// binding, is what this test is about.
	var setOut bytes.Buffer
	if err := run(ctx, []string{"deploykey", "set", "--url", l.URL, "VP_DEPLOY_KEY_CONTROL", "--data-dir", dir}, strings.NewReader(control+"\n"), &setOut, &setOut); err != nil {
		t.Fatalf("deploykey set: %v\n%s", err, setOut.String())
	}
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	agent := agentOf(t, a, vp.DefaultTenant)
	add := func(name, keyVar string) error {
		_, err := callAs(t, a, agent, "add_deployment", map[string]any{"name": name, "deploymentUrl": l.URL,
			"deployKeyEnvVar": keyVar, "githubRepo": "acme/app", "orchestrator": "alice"})
		return err
	}
	refusals := map[string]error{}
	for name := range secrets {
		refusals[name] = add(strings.ToLower(strings.ReplaceAll(name, "_", "-")), name)
	}
	if err := add("control", "VP_DEPLOY_KEY_CONTROL"); err != nil {
		t.Fatalf("the control deployment was refused: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	jobErr := run(ctx, []string{"jobs", "run", "error-monitor", "--tenant", vp.DefaultTenant, "--data-dir", dir}, nil, &out, &errb)
	all, auths := l.received()
	for name, v := range secrets {
		if strings.Contains(all, v) {
			t.Errorf("the listener received the value of %s", name)
		}
		if strings.Contains(out.String()+errb.String(), v) {
			t.Errorf("the job's output shows the value of %s", name)
		}
	}
	if !strings.Contains(strings.Join(auths, "\n"), "Convex "+control) {
		t.Fatalf("the control deployment's key never reached the listener (job: %v; %d requests): the test proves nothing\n%s%s",
			jobErr, len(auths), out.String(), errb.String())
	}
	for name, err := range refusals {
		if err == nil {
			t.Errorf("add_deployment naming %s was accepted", name)
			continue
		}
		for _, want := range []string{"deployKeyEnvVar", `^VP_DEPLOY_KEY_[A-Z0-9_]{1,64}$`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal of %s does not name %q: %v", name, want, err)
			}
		}
	}
}

// A tenant-acme deployment whose key is VP_DEPLOY_KEY_X reads acme's
// stored key only: never the environment variable of that name, never
// the default tenant's key; the default tenant reads its stored key
// first, then the environment variable (a Convex key, bound by its own
// prefix to its deployment: not sent to the listener, which says so).
func TestDeployKeysAreTheTenants(t *testing.T) {
	ctx := context.Background()
	const name = "VP_DEPLOY_KEY_X"
	const fromEnv, ofDefault, ofAcme = "prod:happy-otter-123|key-from-the-environment", "key-of-default", "key-of-acme"
	t.Setenv(name, fromEnv)
	t.Setenv("VP_EGRESS_ALLOW_HOSTS", "127.0.0.1")
	dir := filepath.Join(t.TempDir(), "data")
	cli := func(stdin string, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(ctx, append(args, "--data-dir", dir), strings.NewReader(stdin), &out, &errb); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	acmeL, defL := newListener(t), newListener(t)
	urls := map[string]string{"acme": acmeL.URL, vp.DefaultTenant: defL.URL}
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for tenant, u := range urls {
		if _, err := callAs(t, a, agentOf(t, a, tenant), "add_deployment", map[string]any{"name": "app", "deploymentUrl": u,
			"deployKeyEnvVar": name, "githubRepo": "acme/app", "orchestrator": "alice"}); err != nil {
			t.Fatalf("%s: %v", tenant, err)
		}
	}
	scan := func(tenant string) errormon.DeploymentStatus {
		t.Helper()
		// A fresh add_deployment makes it due again (the cursor is kept).
		if _, err := a.Errors.AddDeployment(ctx, auth.MasterPrincipal(tenant), errormon.DeploymentInput{Name: "app",
			DeploymentURL: urls[tenant], DeployKeyEnvVar: name, GitHubRepo: "acme/app", Orchestrator: "alice"}); err != nil {
			t.Fatal(err)
		}
		_, _ = a.Errors.Scan(ctx, tenant, "app")
		l, err := a.Errors.ListErrors(ctx, auth.MasterPrincipal(tenant), errormon.ListInput{})
		if err != nil || len(l.Deployments) != 1 {
			t.Fatalf("%s: %+v, %v", tenant, l.Deployments, err)
		}
		return l.Deployments[0]
	}
	last := func(l *listener) string {
		_, auths := l.received()
		if len(auths) == 0 {
			return ""
		}
		return strings.TrimPrefix(auths[len(auths)-1], "Convex ")
	}
	count := func(l *listener) int { _, auths := l.received(); return len(auths) }

	// Nothing stored: acme has no key (the environment is not its), the
	// default tenant falls back on the environment's, which is bound to
	// its own deployment, not to this listener.
	if st := scan("acme"); st.Status != errormon.StatusNeedsKey {
		t.Errorf("acme without a stored key: %+v", st)
	}
	if st := scan(vp.DefaultTenant); st.Status != errormon.StatusKeyElsewhere || !strings.Contains(st.LastError, "https://happy-otter-123.convex.cloud") {
		t.Errorf("default with the environment's key: %+v, want it bound to happy-otter-123", st)
	}
	if n := count(acmeL) + count(defL); n != 0 {
		t.Errorf("without a key bound to the listeners, %d requests were sent (last keys %q, %q)", n, last(acmeL), last(defL))
	}

	cli(ofDefault+"\n", "deploykey", "set", "--tenant", vp.DefaultTenant, "--url", defL.URL, name)
	scan("acme")
	scan(vp.DefaultTenant)
	if n := count(acmeL); n != 0 {
		t.Errorf("acme read the default tenant's key (%d requests, key %q)", n, last(acmeL))
	}
	if got := last(defL); got != ofDefault {
		t.Errorf("default with a stored key sent %q, want the stored one", got)
	}

	cli(ofAcme+"\n", "deploykey", "set", "--tenant", "acme", "--url", acmeL.URL, name)
	if st := scan("acme"); st.Status != "ok" {
		t.Errorf("acme's deployment after its key was set: %+v", st)
	}
	if got := last(acmeL); got != ofAcme {
		t.Errorf("acme sent %q, want its stored key", got)
	}
}
