package awsapp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/awsapp"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/search/opensearch/opensearchtest"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

const master = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigFromEnv(t *testing.T) {
	c, err := awsapp.ConfigFromEnv(env(map[string]string{awsenv.EnvTable: "t"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Region != "us-east-1" || c.Embedder != awsenv.EmbedderLocal || c.SearchService != "es" ||
		c.BedrockModel != awsenv.DefaultBedrockModel || c.OpenAIModel != awsenv.DefaultOpenAIModel {
		t.Errorf("defaults = %+v", c)
	}
	bad := []struct {
		env  map[string]string
		want string // the variable the error must name
	}{
		{map[string]string{}, awsenv.EnvTable},
		{map[string]string{awsenv.EnvTable: "t", awsenv.EnvEmbedder: "cohere"}, awsenv.EnvEmbedder},
		{map[string]string{awsenv.EnvTable: "t", awsenv.EnvEmbedder: "openai"}, awsenv.EnvOpenAIBaseURL},
		{map[string]string{awsenv.EnvTable: "t", awsenv.EnvSearchService: "solr"}, awsenv.EnvSearchService},
		{map[string]string{awsenv.EnvTable: "t", awsenv.EnvMasterHash: "abc"}, awsenv.EnvMasterHash},
		{map[string]string{awsenv.EnvTable: "t", awsenv.EnvCursorKey: strings.Repeat("z", 64)}, awsenv.EnvCursorKey},
		{map[string]string{awsenv.EnvTable: "t", awsenv.EnvLogLevel: "loud"}, awsenv.EnvLogLevel},
	}
	for _, b := range bad {
		_, err := awsapp.ConfigFromEnv(env(b.env))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%v: error %v, want one naming %s", b.env, err, b.want)
		}
	}
}

func TestParseKeys(t *testing.T) {
	k, err := awsapp.ParseKeys(`{"cursor":"` + master + `"}`)
	if err != nil || len(k.Cursor) != 32 {
		t.Fatalf("keys %v, %v", k, err)
	}
	for _, s := range []string{``, `{}`, `{"cursor":"abc"}`, `{"cursor":"` + master + `","oauth":"xyz"}`} {
		if _, err := awsapp.ParseKeys(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

// countingSecrets records which secrets were read (Load reads them
// concurrently).
type countingSecrets struct {
	awsapp.StaticSecrets
	mu   sync.Mutex
	read []string
}

func (c *countingSecrets) Secret(ctx context.Context, id string) (string, error) {
	c.mu.Lock()
	c.read = append(c.read, id)
	sort.Strings(c.read)
	c.mu.Unlock()
	return c.StaticSecrets.Secret(ctx, id)
}

func load(t *testing.T, fn string, e map[string]string, s awsapp.Secrets) (*awsapp.App, string, error) {
	t.Helper()
	e[awsenv.EnvTable] = "vp-test"
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("x", "y", "")}
	var logs bytes.Buffer
	o := awsapp.Options{Function: fn, Version: "test", Getenv: env(e), Secrets: s, AWS: &cfg, LogOutput: &logs}
	awsapp.ErrorMonitorSources(&o) // as the error monitor's main does; the other functions ignore it
	awsapp.ConceptEmbedder(&o)     // as the embedding functions' mains do
	a, err := awsapp.Load(context.Background(), o)
	return a, logs.String(), err
}

// TestLoadReadsOnlyWhatTheFunctionNeeds: the secrets are read once, at
// load, and only by the functions that use them.
func TestLoadReadsOnlyWhatTheFunctionNeeds(t *testing.T) {
	secrets := func() *countingSecrets {
		return &countingSecrets{StaticSecrets: awsapp.StaticSecrets{
			"master": master, "keys": `{"cursor":"` + strings.Repeat("11", 32) + `"}`,
		}}
	}
	e := func() map[string]string {
		return map[string]string{awsenv.EnvMasterSecret: "master", awsenv.EnvKeysSecret: "keys"}
	}
	cases := []struct {
		fn   string
		read []string
	}{
		{awsenv.FuncMCP, []string{"keys", "master"}},
		{awsenv.FuncOAuth, []string{"master"}},
		{awsenv.FuncScheduler, nil},
	}
	for _, c := range cases {
		s := secrets()
		a, logs, err := load(t, c.fn, e(), s)
		if err != nil {
			t.Fatalf("%s: %v", c.fn, err)
		}
		if !reflect.DeepEqual(s.read, c.read) {
			t.Errorf("%s read %v, want %v", c.fn, s.read, c.read)
		}
		if (a.Tokens != nil) != (c.fn != awsenv.FuncScheduler) || (a.Keyword != nil) != (c.fn != awsenv.FuncOAuth) {
			t.Errorf("%s: tokens %v, coord %v", c.fn, a.Tokens != nil, a.Keyword != nil)
		}
		if a.Tokens != nil {
			p, err := a.Tokens.Resolve(context.Background(), master)
			if err != nil || !p.Admin {
				t.Errorf("%s: the master token resolves to %+v, %v", c.fn, p, err)
			}
		}
		if !strings.Contains(logs, `"msg":"container ready"`) || strings.Contains(logs, master) {
			t.Errorf("%s logs: %s", c.fn, logs)
		}
	}
	// A secret that is not a token is refused at start, naming the variable.
	s := secrets()
	s.StaticSecrets["master"] = "hunter2"
	if _, _, err := load(t, awsenv.FuncMCP, e(), s); err == nil || !strings.Contains(err.Error(), "master") {
		t.Errorf("bad master secret: %v", err)
	}
	// The embedder cannot run without a search index.
	if _, _, err := load(t, awsenv.FuncEmbedder, map[string]string{}, secrets()); err == nil || !strings.Contains(err.Error(), awsenv.EnvSearchEndpoint) {
		t.Errorf("embedder without an index: %v", err)
	}
	// The mcp function serves without memory tools rather than not at all.
	a, logs, err := load(t, awsenv.FuncMCP, map[string]string{awsenv.EnvMasterHash: strings.Repeat("ab", 32), awsenv.EnvCursorKey: master}, secrets())
	if err != nil || a.Memory != nil || !strings.Contains(logs, "memory tools disabled") {
		t.Errorf("mcp without an index: %v, %s", err, logs)
	}
}

// TestSearchIndexAtLoad: with an OpenSearch endpoint the functions that
// use memory check (and create) the index at load, SigV4-signing for the
// configured service; an unreachable index does not stop the start.
func TestSearchIndexAtLoad(t *testing.T) {
	srv := opensearchtest.New(t, opensearchtest.Options{Service: "aoss"})
	e := func() map[string]string {
		return map[string]string{awsenv.EnvSearchEndpoint: srv.URL, awsenv.EnvSearchService: "aoss",
			awsenv.EnvQueueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/jobs", awsenv.EnvMasterHash: strings.Repeat("ab", 32), awsenv.EnvCursorKey: master}
	}
	for _, fn := range []string{awsenv.FuncMCP, awsenv.FuncEmbedder} {
		a, _, err := load(t, fn, e(), awsapp.StaticSecrets{})
		if err != nil || a.Memory == nil || a.Queue == nil {
			t.Fatalf("%s: %v (memory %v)", fn, err, a != nil && a.Memory != nil)
		}
	}
	// The offline embedders are there by name; the stack's default stays Bedrock (infra).
	for name, want := range map[string]string{awsenv.EmbedderConcept: "local-concept-v1/1024", awsenv.EmbedderLocal: "local-hash-v1/384"} {
		env := e()
		env[awsenv.EnvEmbedder] = name
		a, _, err := load(t, awsenv.FuncEmbedder, env, awsapp.StaticSecrets{})
		if err != nil || a.Memory == nil || a.Memory.EmbedderName() != want {
			t.Fatalf("%s=%s: %v, embedder %v", awsenv.EnvEmbedder, name, err, a != nil && a.Memory != nil && a.Memory.EmbedderName() == want)
		}
	}
	// A main that does not link the concept embedder says so at load.
	m := e()
	m[awsenv.EnvEmbedder] = awsenv.EmbedderConcept
	m[awsenv.EnvTable] = "vp-test"
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("x", "y", "")}
	if _, err := awsapp.Load(context.Background(), awsapp.Options{Function: awsenv.FuncMCP, Getenv: env(m), Secrets: awsapp.StaticSecrets{}, AWS: &cfg, LogOutput: io.Discard}); err == nil ||
		!strings.Contains(err.Error(), "awsapp.ConceptEmbedder") {
		t.Fatalf("concept without the main's option: %v, want the option named", err)
	}
	if seen, want := srv.Requests(), []string{"HEAD /vantagepeers-search", "PUT /_search/pipeline/vantagepeers-rrf"}; !reflect.DeepEqual(seen[:2], want) {
		t.Errorf("requests %v, want %v first", seen, want)
	}
	// Unreachable at start: the function starts anyway (search is a derived
	// view) and says so; its searches fail, and nothing is written to an
	// index that was never bootstrapped.
	srv.SetUnavailable(true)
	_ = srv.Requests()
	a, logs, err := load(t, awsenv.FuncMCP, e(), awsapp.StaticSecrets{})
	if err != nil || a.Memory == nil || a.Keyword == nil || !strings.Contains(logs, "the search index is unavailable at start") {
		t.Fatalf("unreachable index at start: %v; logs %s", err, logs)
	}
	if _, err := a.Keyword.SearchTasks(context.Background(), auth.MasterPrincipal("acme"), keyword.SearchTasksInput{Query: "logs"}); err == nil {
		t.Error("a keyword search succeeded while the index was unreachable")
	}
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r, "/_bulk") {
			t.Errorf("%s reached an index that was never bootstrapped", r)
		}
	}
}

// TestHTTPAdapter: an API Gateway v2 event reaches the handler as the
// request it stands for; the response and the log line carry what they
// should.
func TestHTTPAdapter(t *testing.T) {
	var logs bytes.Buffer
	a := &awsapp.App{Log: awsapp.NewLogger(&logs, slog.LevelInfo, "mcp")}
	var got *http.Request
	h := a.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		if r.URL.Path == "/silent" {
			return // writes nothing: net/http would answer 200
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-123"})
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "ANY /mcp", RawPath: "/mcp", RawQueryString: "profile=core",
		Headers: map[string]string{"authorization": "Bearer x", "accept": "application/json, text/event-stream", "x-forwarded-proto": "https"},
		Body:    `{"jsonrpc":"2.0"}`,
		RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: "abc.execute-api.eu-west-1.amazonaws.com",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/mcp", SourceIP: "203.0.113.7"}},
	}
	resp, err := h(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 201 || resp.Body != `{"ok":true}` || resp.Headers["Content-Type"] != "application/json" {
		t.Errorf("response = %+v", resp)
	}
	if got.Method != "POST" || got.URL.Path != "/mcp" || got.URL.Query().Get("profile") != "core" ||
		got.Host != "abc.execute-api.eu-west-1.amazonaws.com" || got.Header.Get("Authorization") != "Bearer x" {
		t.Errorf("request = %s %s host %s headers %v", got.Method, got.URL, got.Host, got.Header)
	}
	if !strings.Contains(logs.String(), `"requestId":"req-123"`) || !strings.Contains(logs.String(), `"status":201`) {
		t.Errorf("log = %s", logs.String())
	}
	ev.RawPath, ev.RequestContext.HTTP.Path = "/silent", "/silent"
	if resp, err := h(ctx, ev); err != nil || resp.StatusCode != 200 {
		t.Errorf("a handler that writes nothing: %+v, %v", resp, err)
	}
}

// job is an embedding job as the SQS adapter writes it (queue/sqs).
func jobBody(t *testing.T, id, kind, tenant string, payload any) string {
	t.Helper()
	p, _ := json.Marshal(payload)
	b, _ := json.Marshal(map[string]any{"id": id, "kind": kind, "tenant": tenant, "payload": p})
	return string(b)
}

func sqsRecord(id, body string, receiveCount string) events.SQSMessage {
	return events.SQSMessage{
		MessageId: id, ReceiptHandle: "AQEB" + id, Body: body, EventSource: "aws:sqs", AWSRegion: "us-east-1",
		EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:vp-acme-EmbedJobs",
		Attributes: map[string]string{"ApproximateReceiveCount": receiveCount, "SentTimestamp": "1767225600000",
			"SenderId": "AROAEXAMPLE:vp-acme-mcp", "ApproximateFirstReceiveTimestamp": "1767225600100"},
	}
}

// TestHandleEmbedBatch: in a batch, exactly the items that failed are
// reported; the others are embedded (and so deleted by the event source).
func TestHandleEmbedBatch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(dir, "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	signer, _ := listing.NewSigner(bytes.Repeat([]byte{7}, 32))
	mem := memory.New(memory.Options{Store: st, Index: idx, Embedder: embedlocal.New(embedlocal.Options{}),
		Queue: storequeue.New(storequeue.Options{Store: st, Name: "embed"}), Cursors: signer})
	p := auth.MasterPrincipal("acme")
	stored, err := mem.StoreMemory(ctx, p, memory.StoreInput{Namespace: "global", Type: "reference", Content: "Lambda functions start cold", CreatedBy: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	a := &awsapp.App{Log: awsapp.NewLogger(&logs, slog.LevelInfo, "embedder"), Services: &vpapp.Services{Memory: mem}}

	ev := events.SQSEvent{Records: []events.SQSMessage{
		sqsRecord("m-ok", jobBody(t, "job_1", memory.JobEmbed, "acme", memory.EmbedPayload{Ref: memory.RefMemory, ID: stored.MemoryID}), "1"),
		sqsRecord("m-poison", `{"not":"a job"`, "3"),
		sqsRecord("m-gone", jobBody(t, "job_2", memory.JobEmbed, "acme", memory.EmbedPayload{Ref: memory.RefMemory, ID: "mem_01jdzzzzzzzzzzzzzzzzzzzzzz"}), "1"),
	}}
	resp, err := a.HandleEmbedBatch(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	want := []events.SQSBatchItemFailure{{ItemIdentifier: "m-poison"}}
	if !reflect.DeepEqual(resp.BatchItemFailures, want) {
		t.Errorf("failures = %+v, want %+v", resp.BatchItemFailures, want)
	}
	got, err := mem.GetMemory(ctx, p, stored.MemoryID)
	if err != nil || got.Embedder == "" {
		t.Errorf("the memory was not embedded: %+v, %v", got, err)
	}
	if !strings.Contains(logs.String(), `"messageId":"m-poison"`) {
		t.Errorf("the rejected message is not logged: %s", logs.String())
	}

	// An unknown kind fails too, and only that item.
	resp, _ = a.HandleEmbedBatch(ctx, events.SQSEvent{Records: []events.SQSMessage{
		sqsRecord("m-kind", jobBody(t, "job_3", "transcode", "acme", map[string]string{}), "1"),
	}})
	if !reflect.DeepEqual(resp.BatchItemFailures, []events.SQSBatchItemFailure{{ItemIdentifier: "m-kind"}}) {
		t.Errorf("unknown kind: %+v", resp.BatchItemFailures)
	}
	// The response is the JSON the event source expects.
	b, _ := json.Marshal(resp)
	if string(b) != `{"batchItemFailures":[{"itemIdentifier":"m-kind"}]}` {
		t.Errorf("response JSON = %s", b)
	}
}

func TestStaticSecrets(t *testing.T) {
	s := awsapp.StaticSecrets{"a": "b"}
	if v, err := s.Secret(context.Background(), "a"); v != "b" || err != nil {
		t.Errorf("a = %q, %v", v, err)
	}
	if _, err := s.Secret(context.Background(), "nope"); err == nil {
		t.Error("missing secret: no error")
	}
}
