package bedrock_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/vantagepeers/vantagepeers/shared/embed/bedrock"
)

// fakeBedrock speaks the Bedrock runtime wire protocol for InvokeModel:
// POST /model/{modelId}/invoke with a SigV4-signed JSON body. It checks
// what Titan Text Embeddings v2 requires and answers in its format.
type fakeBedrock struct {
	t       *testing.T
	mu      sync.Mutex
	texts   []string
	calls   atomic.Int32
	fail    func(text string) (status int, errType, msg string)
	models  map[string]bool
	maxSeen atomic.Int32
	inNow   atomic.Int32
}

func (f *fakeBedrock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	n := f.inNow.Add(1)
	defer f.inNow.Add(-1)
	for {
		m := f.maxSeen.Load()
		if n <= m || f.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	t := f.t
	if r.Method != http.MethodPost {
		t.Errorf("method %s, want POST", r.Method)
	}
	// The model id is one path segment, escaped (":" as %3A).
	path := r.URL.EscapedPath()
	if !strings.HasPrefix(path, "/model/") || !strings.HasSuffix(path, "/invoke") {
		t.Errorf("path %s, want /model/{modelId}/invoke", path)
		http.Error(w, "not found", 404)
		return
	}
	model := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/model/"), "/invoke")
	if !f.models[model] {
		w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
		w.WriteHeader(404)
		_, _ = io.WriteString(w, `{"message":"Could not resolve the foundation model from the provided model identifier."}`)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if a := r.Header.Get("Accept"); a != "application/json" {
		t.Errorf("Accept %q", a)
	}
	if auth := r.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(auth, "/bedrock/aws4_request") {
		t.Errorf("Authorization %q: want a SigV4 signature for service bedrock", auth)
	}
	var req map[string]any
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client gave up mid-body (the cancelled-context case): nothing to check
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Errorf("body %q: %v", raw, err)
		return
	}
	text, _ := req["inputText"].(string)
	dim, _ := req["dimensions"].(float64)
	if req["normalize"] != true {
		t.Errorf("normalize = %v, want true", req["normalize"])
	}
	if len(req) != 3 {
		t.Errorf("request fields %v, want inputText, dimensions, normalize", req)
	}
	if text == "" || len([]rune(text)) > 50_000 {
		w.Header().Set("X-Amzn-ErrorType", "ValidationException")
		w.WriteHeader(400)
		_, _ = io.WriteString(w, `{"message":"Malformed input request: expected minLength: 1, actual: 0"}`)
		return
	}
	if f.fail != nil {
		if status, et, msg := f.fail(text); status != 0 {
			w.Header().Set("X-Amzn-ErrorType", et)
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"message":%q}`, msg)
			return
		}
	}
	f.mu.Lock()
	f.texts = append(f.texts, text)
	f.mu.Unlock()
	// A deterministic "embedding": the text's length in the first slot.
	emb := make([]float64, int(dim))
	emb[0] = float64(len(text))
	if len(emb) > 1 {
		emb[1] = 1
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Bedrock-Input-Token-Count", "3")
	_ = json.NewEncoder(w).Encode(map[string]any{"embedding": emb, "inputTextTokenCount": 3})
}

func newFake(t *testing.T) (*fakeBedrock, *bedrockruntime.Client) {
	f := &fakeBedrock{t: t, models: map[string]bool{bedrock.DefaultModel: true}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c := bedrockruntime.New(bedrockruntime.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		RetryMaxAttempts: 3,
	})
	return f, c
}

func TestBedrockProtocolFakeEmbed(t *testing.T) {
	f, c := newFake(t)
	e, err := bedrock.New(bedrock.Options{Client: c, Dim: 256, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "bedrock/amazon.titan-embed-text-v2:0/256" || e.Dim() != 256 {
		t.Fatalf("name %s dim %d", e.Name(), e.Dim())
	}
	texts := []string{"one", "", "three three", "  ", strings.Repeat("x", 60_000)}
	for i := 0; i < 20; i++ {
		texts = append(texts, fmt.Sprintf("text number %d", i))
	}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) != 256 {
			t.Fatalf("vector %d: %d dims", i, len(v))
		}
		want := float32(len(texts[i]))
		if strings.TrimSpace(texts[i]) == "" {
			want = 0
		}
		if i == 4 {
			want = 50_000 // cut to Titan's limit
		}
		if v[0] != want {
			t.Errorf("vector %d belongs to another text: v[0] = %v, want %v", i, v[0], want)
		}
	}
	if got := int(f.calls.Load()); got != len(texts)-2 {
		t.Errorf("%d calls, want %d (blank texts are not sent)", got, len(texts)-2)
	}
	if m := f.maxSeen.Load(); m > 3 {
		t.Errorf("%d requests in flight, want ≤ 3", m)
	}
}

func TestBedrockProtocolFakeErrors(t *testing.T) {
	f, c := newFake(t)
	var throttled atomic.Int32
	f.fail = func(text string) (int, string, string) {
		switch {
		case text == "bad":
			return 400, "ValidationException", "Malformed input request"
		case text == "throttle-once" && throttled.Add(1) == 1:
			return 429, "ThrottlingException", "Too many requests, please wait before trying again."
		}
		return 0, "", ""
	}
	e, _ := bedrock.New(bedrock.Options{Client: c})
	// Throttling is retried by the SDK.
	vs, err := e.Embed(context.Background(), []string{"throttle-once"})
	if err != nil || len(vs) != 1 || len(vs[0]) != 1024 {
		t.Fatalf("after one throttle: %v %v", len(vs), err)
	}
	if throttled.Load() != 2 {
		t.Errorf("throttled request sent %d times, want 2", throttled.Load())
	}
	// A validation error surfaces with its message.
	_, err = e.Embed(context.Background(), []string{"fine", "bad"})
	if err == nil || !strings.Contains(err.Error(), "ValidationException") || !strings.Contains(err.Error(), "text 1") {
		t.Errorf("validation error: %v", err)
	}
	// An unknown model.
	e2, _ := bedrock.New(bedrock.Options{Client: c, Model: "amazon.nope-v9:0"})
	if _, err := e2.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "ResourceNotFound") {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := bedrock.New(bedrock.Options{Client: c, Dim: 300}); err == nil {
		t.Error("dimension 300 accepted")
	}
	if _, err := bedrock.New(bedrock.Options{}); err == nil {
		t.Error("no client accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []string{"a", "b"}); err == nil {
		t.Error("cancelled context: want an error")
	}
}
