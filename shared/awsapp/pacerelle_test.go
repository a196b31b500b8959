package awsapp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/awsapp"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relay"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relayclient"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/seal"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/wire"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
)

// connectionsFake is API Gateway's @connections management API as
// documented: POST /{stage}/@connections/{id} with the data as the body,
// SigV4-signed for execute-api; 200, or 410 GoneException for a connection
// that is gone. A connection named "flaky" answers 500 to its first
// failures requests.
type connectionsFake struct {
	*httptest.Server
	t        *testing.T
	mu       sync.Mutex
	got      map[string][]int64 // connection -> the seqs rung, in order
	gone     map[string]bool
	failures int
	maxBody  int
	unsigned []string
}

func newConnectionsFake(t *testing.T) *connectionsFake {
	f := &connectionsFake{t: t, got: map[string][]int64{}, gone: map[string]bool{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := strings.CutPrefix(r.URL.Path, "/prod/@connections/")
		if r.Method != http.MethodPost || !ok {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		auth := r.Header.Get("Authorization")
		var body bytes.Buffer
		_, _ = body.ReadFrom(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(auth, "/us-east-1/execute-api/aws4_request") ||
			!strings.Contains(auth, "SignedHeaders=") || r.Header.Get("X-Amz-Date") == "" {
			f.unsigned = append(f.unsigned, id+": "+auth)
			http.Error(w, `{"message":"Missing Authentication Token"}`, http.StatusForbidden)
			return
		}
		f.maxBody = max(f.maxBody, body.Len())
		switch {
		case f.gone[id]:
			w.WriteHeader(http.StatusGone)
			_, _ = w.Write([]byte(`{"message":"GoneException"}`))
			return
		case id == "flaky" && f.failures > 0:
			f.failures--
			http.Error(w, `{"message":"Internal server error"}`, http.StatusInternalServerError)
			return
		}
		var ring wire.Ring
		if err := json.Unmarshal(body.Bytes(), &ring); err != nil {
			http.Error(w, `{"message":"bad body"}`, http.StatusBadRequest)
			return
		}
		f.got[id] = append(f.got[id], ring.Seq)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *connectionsFake) rings(id string) []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.got[id]...)
}

func (f *connectionsFake) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.got {
		n += len(s)
	}
	return n
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// crashingJobs runs a ring's effect (the POSTs) after the commit and then
// "crashes": the job's removal is never written, as when a Lambda dies
// between its push and the outbox commit.
type crashingJobs struct {
	ob   *outbox.Outbox
	ring func(context.Context, outbox.Job) error
	last outbox.Job
}

func (c *crashingJobs) EnqueueInline(ctx context.Context, tenant, topic string, payload []byte) (outbox.Pending, error) {
	c.last = outbox.Job{Tenant: tenant, Topic: topic, Payload: payload}
	return c.ob.EnqueueInline(ctx, tenant, topic, payload)
}

func (c *crashingJobs) RunInline(ctx context.Context, _ ...outbox.Pending) { _ = c.ring(ctx, c.last) }

// TestPushViaConnectionsFake: on AWS a send commits its ring with the
// message and pushes it right after, SigV4-signed, to every connection of
// the inbox recorded by $connect (on SQLite and DynamoDB Local): a gone connection
// (410) loses its rows, a failing one (500) is retried by the outbox with
// backoff, a crash between the push and the outbox commit rings again
// without a second message, and N sends ring each inbox N times, every
// push far under the 32 KB frame limit.
func TestPushViaConnectionsFake(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) { pushViaConnectionsFake(t, b) })
}

func pushViaConnectionsFake(t *testing.T, b teststores.Backend) {
	ctx := context.Background()
	clk := &testClock{t: time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)}
	st := b.Open(t, clk.Now)
	fake := newConnectionsFake(t)
	var logs bytes.Buffer
	log := awsapp.NewLogger(&logs, 0, awsenv.FuncMCP)
	cfg := awsapp.Config{Region: "us-east-1", PacerelleConnections: fake.URL + "/prod"}
	creds := credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")
	svc, err := vpapp.Build(ctx, vpapp.Ports{Groups: vpapp.Relay, Store: st, Logger: log, Now: clk.Now, MasterHash: &[32]byte{},
		OutboxJitter: func() float64 { return 1 },
		RelayPusher:  &awsapp.Connections{Endpoint: cfg.PacerelleConnections, Region: cfg.Region, Credentials: creds}})
	if err != nil {
		t.Fatal(err)
	}
	ob, toks := svc.Outbox, svc.Tokens
	agentTok, _, err := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"bot"}})
	if err != nil {
		t.Fatal(err)
	}
	personTok, _, _ := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"ann"}})
	a := &awsapp.App{Function: awsenv.FuncMCP, Log: log, Services: svc, Config: cfg,
		AWS: aws.Config{Region: "us-east-1", Credentials: creds}}
	srv := httptest.NewServer(a.Relay.Handler())
	t.Cleanup(srv.Close)

	// Pairing, as the bridge and a person's device do it.
	agent, _ := seal.NewIdentity(wire.AgentParty("bot"), "bridge-1")
	ac := &relayclient.Client{BaseURL: srv.URL, Token: agentTok, Agent: "bot"}
	if err := ac.RegisterAgent(ctx, agent.Device, seal.SignList(agent, 1, []seal.Device{agent.Device})); err != nil {
		t.Fatal(err)
	}
	person, _ := seal.NewIdentity(wire.PersonParty("ann"), "phone")
	// Pairing v2: commit, answer, reveal, confirm.
	nonce, agentNonce := seal.NewPairingNonce(), seal.NewPairingNonce()
	commit := seal.Commitment(person.Device, nonce)
	started, err := (&relayclient.Client{BaseURL: srv.URL, Token: personTok}).StartPairing(ctx, "bot", "", person.Device, seal.SignList(person, 1, []seal.Device{person.Device}), commit)
	if err != nil {
		t.Fatal(err)
	}
	if err := ac.Answer(ctx, wire.AnswerBody{Person: started.Party, Commit: commit, Nonce: agentNonce, Sig: agent.Sign(seal.AnswerLabel, seal.AnswerBytes(commit, agentNonce))}); err != nil {
		t.Fatal(err)
	}
	pc := &relayclient.Client{BaseURL: srv.URL, Token: started.Credential}
	if err := pc.Reveal(ctx, started.Agent, nonce); err != nil {
		t.Fatal(err)
	}
	tr, _ := seal.PairingTranscript(person.Device, nonce, agent.Device, agentNonce)
	if err := pc.Confirm(ctx, started.Agent, person.Sign(seal.ConfirmLabel, tr)); err != nil {
		t.Fatal(err)
	}
	send := func(c *relayclient.Client, from *seal.Identity, to seal.Device, id string) wire.SendResult {
		t.Helper()
		env, err := seal.Seal(from, seal.Header{Suite: seal.SuiteHPKE, To: []string{to.Party}, Conversation: "c1", MessageID: id, ListVersion: 1}, []seal.Device{to}, []byte("hi"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Send(ctx, wire.SendBody{ID: id, Conversation: "c1", To: env.To, Envelope: env.Encode()})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	// The HTTP doorbell cannot work in a Lambda: it is refused (naming
	// the WebSocket API) before any upgrade.
	var ae *relayclient.APIError
	if err := ac.Doorbell(ctx, func() { t.Error("the HTTP doorbell connected") }, func(int64) {}); !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
		t.Fatalf("HTTP doorbell with a pusher: %v", err)
	}

	// The WebSocket routes, through the doorbell function's handler.
	ws := a.DoorbellHandler()
	route := func(key, conn string, headers, query map[string]string) events.APIGatewayProxyResponse {
		t.Helper()
		resp, err := ws(ctx, events.APIGatewayWebsocketProxyRequest{Headers: headers, QueryStringParameters: query,
			RequestContext: events.APIGatewayWebsocketProxyRequestContext{RouteKey: key, ConnectionID: conn, Stage: "prod"}})
		if err != nil {
			t.Fatalf("%s %s: %v", key, conn, err)
		}
		return resp
	}
	agentHdr := map[string]string{"authorization": "Bearer " + agentTok, "x-pacerelle-agent": "bot"}
	for _, c := range []string{"agent-1", "gone", "flaky"} {
		if r := route("$connect", c, agentHdr, nil); r.StatusCode != 200 {
			t.Fatalf("$connect %s: %+v", c, r)
		}
	}
	// A browser cannot set headers: the device credential in the query.
	if r := route("$connect", "phone-1", nil, map[string]string{"access_token": started.Credential}); r.StatusCode != 200 {
		t.Fatalf("$connect by query: %+v", r)
	}
	for _, c := range []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"no credential", nil, 401},
		{"bad token", map[string]string{"authorization": "Bearer nope"}, 401},
		{"no agent named", map[string]string{"authorization": "Bearer " + agentTok}, 403},
		{"another agent", map[string]string{"authorization": "Bearer " + agentTok, "x-pacerelle-agent": "eve"}, 403},
	} {
		if r := route("$connect", "x-"+c.name, c.headers, nil); r.StatusCode != c.want {
			t.Errorf("$connect %s: %d, want %d", c.name, r.StatusCode, c.want)
		}
		if r := route("$default", "x-"+c.name, nil, nil); r.StatusCode != http.StatusGone {
			t.Errorf("a refused connection %s has a row: ping answered %d", c.name, r.StatusCode)
		}
	}
	if r := route("$default", "agent-1", nil, nil); r.StatusCode != 200 || r.Body != `{"seq":0}` {
		t.Fatalf("ping: %+v", r)
	}

	// One send: pushed inline; 410 deletes the gone connection's rows; 500
	// leaves the ring to the outbox, retried after the backoff.
	fake.mu.Lock()
	fake.gone["gone"], fake.failures = true, 2
	fake.mu.Unlock()
	send(pc, person, agent.Device, "m-1")
	if got := fake.rings("agent-1"); len(got) != 1 || got[0] != 1 {
		t.Fatalf("agent-1 rung %v, want [1] inline", got)
	}
	if r := route("$default", "gone", nil, nil); r.StatusCode != http.StatusGone {
		t.Errorf("a 410 connection still has its row: %+v", r)
	}
	if n, _ := ob.Drain(ctx); n != 0 || len(fake.rings("flaky")) != 0 {
		t.Fatalf("the failed ring ran before its backoff: %d jobs, flaky %v", n, fake.rings("flaky"))
	}
	clk.Advance(1100 * time.Millisecond) // the first backoff: 1 s
	_, _ = ob.Drain(ctx)                 // attempt 2: 500 again
	if len(fake.rings("flaky")) != 0 {
		t.Fatal("flaky answered before its failures ran out")
	}
	clk.Advance(2100 * time.Millisecond) // the second: 2 s
	if n, _ := ob.Drain(ctx); n != 1 {
		t.Fatalf("third attempt: %d jobs run", n)
	}
	if got := fake.rings("flaky"); len(got) != 1 || got[0] != 1 {
		t.Fatalf("flaky rung %v after its retries, want [1]", got)
	}
	// The retries rang agent-1 again: rings are idempotent (a client
	// fetches after its cursor), and the repeats are bounded by the job's
	// attempts.
	if got := fake.rings("agent-1"); len(got) != 3 {
		t.Errorf("agent-1 rung %v: one ring per attempt (3)", got)
	}

	// A crash between the push and the outbox commit: the ring runs again
	// once the lease ends; the message is never duplicated, and a resend
	// of the same id (the client did not see the answer) neither appends
	// nor rings.
	before := len(fake.rings("agent-1"))
	crash := &crashingJobs{ob: ob, ring: a.Relay.RingJob}
	crashed := relay.New(relay.Options{Store: st, Tokens: toks, Now: clk.Now, Jobs: crash, Pusher: a.Relay.Pusher()})
	csrv := httptest.NewServer(crashed.Handler())
	t.Cleanup(csrv.Close)
	cpc := &relayclient.Client{BaseURL: csrv.URL, Token: started.Credential}
	if res := send(cpc, person, agent.Device, "m-2"); res.Seq[agent.Party] != 2 || res.Duplicate {
		t.Fatalf("send m-2: %+v", res)
	}
	if got := fake.rings("agent-1"); len(got) != before+1 || got[len(got)-1] != 2 {
		t.Fatalf("agent-1 rung %v, want 2 pushed before the crash", got)
	}
	clk.Advance(61 * time.Second) // the lease (1 min) of the orphaned job
	if n, _ := ob.Drain(ctx); n != 1 {
		t.Fatalf("orphaned ring: %d jobs run after the lease", n)
	}
	if got := fake.rings("agent-1"); len(got) != before+2 || got[len(got)-1] != 2 {
		t.Fatalf("agent-1 rung %v: the orphaned ring runs once more", got)
	}
	if res := send(pc, person, agent.Device, "m-2"); !res.Duplicate || res.Seq[agent.Party] != 2 {
		t.Fatalf("resend of m-2: %+v", res)
	}
	page, err := ac.Inbox(ctx, 0, 100)
	if err != nil || len(page.Messages) != 2 || page.Head != 2 {
		t.Fatalf("inbox after the crash: %d messages, head %d, %v", len(page.Messages), page.Head, err)
	}
	if got := fake.rings("agent-1"); len(got) != before+2 {
		t.Fatalf("the resend rang: %v", got)
	}
	if n, _ := ob.Drain(ctx); n != 0 {
		t.Fatalf("%d ring jobs left", n)
	}

	// N sends each way: every inbox rung with every sequence, in order.
	const n = 100 // each way: 200 sends
	a1, f1, p1 := len(fake.rings("agent-1")), len(fake.rings("flaky")), len(fake.rings("phone-1"))
	began := time.Now()
	for i := range n {
		send(pc, person, agent.Device, fmt.Sprintf("n-%03d", i))
		send(ac, agent, person.Device, fmt.Sprintf("r-%03d", i))
	}
	perSend := time.Since(began) / (2 * n)
	for conn, want := range map[string]struct {
		from  int
		first int64
	}{"agent-1": {a1, 3}, "flaky": {f1, 3}, "phone-1": {p1, 1}} {
		got := fake.rings(conn)[want.from:]
		if len(got) != n {
			t.Fatalf("%s rung %d times for %d sends", conn, len(got), n)
		}
		for i, s := range got {
			if s != want.first+int64(i) {
				t.Fatalf("%s: ring %d is seq %d, want %d", conn, i, s, want.first+int64(i))
			}
		}
	}
	if fake.maxBody > relay.MaxPushBytes || fake.maxBody > 64 {
		t.Errorf("largest push %d bytes (frame limit %d)", fake.maxBody, relay.MaxPushBytes)
	}
	if len(fake.unsigned) > 0 {
		t.Errorf("unsigned pushes: %v", fake.unsigned)
	}
	t.Logf("%s: %d pushes; send + inline ring: %v a send; largest push %d bytes", b.Name, fake.total(), perSend, fake.maxBody)

	// $disconnect deletes the rows: no more pushes there.
	if r := route("$disconnect", "agent-1", nil, nil); r.StatusCode != 200 {
		t.Fatalf("$disconnect: %+v", r)
	}
	before = len(fake.rings("agent-1"))
	send(pc, person, agent.Device, "after-disconnect")
	if got := fake.rings("agent-1"); len(got) != before {
		t.Errorf("a disconnected connection was rung: %v", got[before:])
	}
	if r := route("$default", "agent-1", nil, nil); r.StatusCode != http.StatusGone {
		t.Errorf("ping after $disconnect: %+v", r)
	}
}

// TestPushRefusesOversizedFrames: a push over the 32 KB frame limit is a
// permanent failure, never sent.
func TestPushRefusesOversizedFrames(t *testing.T) {
	fake := newConnectionsFake(t)
	c := &awsapp.Connections{Endpoint: fake.URL + "/prod", Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "s", "")}
	err := c.Push(context.Background(), "agent-1", bytes.Repeat([]byte("x"), relay.MaxPushBytes+1))
	if !outbox.IsPermanent(err) || fake.total() != 0 {
		t.Fatalf("oversized push: %v, %d sent", err, fake.total())
	}
	if err := c.Push(context.Background(), "agent-1", []byte(`{"seq":7}`)); err != nil || fake.rings("agent-1")[0] != 7 {
		t.Fatalf("push: %v %v", err, fake.rings("agent-1"))
	}
}

// TestMCPFunctionServesPacerelle: the mcp function mounts the relay's
// HTTP API: /pacerelle/ answers the relay's own refusal, not a 404.
func TestMCPFunctionServesPacerelle(t *testing.T) {
	a, _, err := load(t, awsenv.FuncMCP, map[string]string{awsenv.EnvMasterHash: strings.Repeat("ab", 32), awsenv.EnvCursorKey: master,
		awsenv.EnvPacerelleConnections: "https://abc.execute-api.us-east-1.amazonaws.com/prod"}, awsapp.StaticSecrets{})
	if err != nil || a.Relay == nil || a.Relay.Pusher() == nil {
		t.Fatalf("load: %v (relay %v)", err, a != nil && a.Relay != nil)
	}
	h := a.HTTP(a.MCPHandler())
	resp, err := h(context.Background(), events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "ANY /pacerelle/{proxy+}", RawPath: "/pacerelle/v1/inbox",
		RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: "abc.execute-api.us-east-1.amazonaws.com",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/pacerelle/v1/inbox"}}})
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Headers["Www-Authenticate"], "pacerelle") {
		t.Fatalf("GET /pacerelle/v1/inbox without a bearer: %d %v %s, %v", resp.StatusCode, resp.Headers, resp.Body, err)
	}
	// The scheduler retries the rings: it has the pusher and the handler.
	a, _, err = load(t, awsenv.FuncScheduler, map[string]string{awsenv.EnvPacerelleConnections: "https://abc.execute-api.us-east-1.amazonaws.com/prod"}, awsapp.StaticSecrets{})
	if err != nil || a.Relay == nil || a.Relay.Pusher() == nil {
		t.Fatalf("scheduler with the WebSocket API: %v", err)
	}
	// Without the WebSocket API configured, sends ring nothing.
	a, _, err = load(t, awsenv.FuncScheduler, map[string]string{}, awsapp.StaticSecrets{})
	if err != nil || a.Relay == nil || a.Relay.Pusher() != nil {
		t.Fatalf("scheduler without the WebSocket API: %v", err)
	}
}
