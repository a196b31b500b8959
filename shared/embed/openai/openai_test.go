package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/embed/openai"
)

// server fakes POST /v1/embeddings the way OpenAI answers it: data in
// shuffled order (clients must use "index"), usage, model.
type server struct {
	t      *testing.T
	dim    int
	calls  atomic.Int32
	inputs atomic.Int32
	// before may answer instead (status != 0).
	before func(call int32, r *http.Request, input []string) (status int, body string, hdr map[string]string)
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call := s.calls.Add(1)
	t := s.t
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		t.Errorf("%s %s, want POST /v1/embeddings", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization %q", got)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var req struct {
		Model          string   `json:"model"`
		Input          []string `json:"input"`
		EncodingFormat string   `json:"encoding_format"`
		Dimensions     *int     `json:"dimensions"`
	}
	raw, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Errorf("body %s: %v", raw, err)
	}
	if req.Model != "text-embedding-3-small" || req.EncodingFormat != "float" {
		t.Errorf("model %q encoding %q", req.Model, req.EncodingFormat)
	}
	if req.Dimensions != nil && *req.Dimensions != s.dim {
		t.Errorf("dimensions %d, want %d", *req.Dimensions, s.dim)
	}
	if s.before != nil {
		if status, body, hdr := s.before(call, r, req.Input); status != 0 {
			for k, v := range hdr {
				w.Header().Set(k, v)
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
			return
		}
	}
	s.inputs.Add(int32(len(req.Input)))
	type item struct {
		Object    string    `json:"object"`
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	var data []item
	for i := len(req.Input) - 1; i >= 0; i-- { // reversed on purpose
		v := make([]float32, s.dim)
		v[0] = float32(len(req.Input[i]))
		data = append(data, item{"embedding", v, i})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": 5, "total_tokens": 5}})
}

func setup(t *testing.T, s *server, o openai.Options) *openai.Embedder {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	o.BaseURL = srv.URL
	o.APIKey = "sk-test"
	o.Model = "text-embedding-3-small"
	if o.MinBackoff == 0 {
		o.MinBackoff = time.Millisecond
	}
	e, err := openai.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestOpenAIProtocolBatches(t *testing.T) {
	s := &server{t: t, dim: 1536}
	e := setup(t, s, openai.Options{BatchSize: 4})
	if e.Name() != "openai/text-embedding-3-small/1536" || e.Dim() != 1536 {
		t.Fatalf("name %s dim %d", e.Name(), e.Dim())
	}
	texts := []string{"a", "bb", "", "dddd", "eeeee", "  ", "ggggggg", "hhhhhhhh", "iiiiiiiii", "jjjjjjjjjj"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		want := float32(len(texts[i]))
		if strings.TrimSpace(texts[i]) == "" {
			want = 0
		}
		if len(v) != 1536 || v[0] != want {
			t.Errorf("vector %d: len %d v[0] %v, want %v", i, len(v), v[0], want)
		}
	}
	if c := s.calls.Load(); c != 2 {
		t.Errorf("%d requests for 8 texts in batches of 4, want 2", c)
	}
	if n := s.inputs.Load(); n != 8 {
		t.Errorf("%d texts sent, want 8 (blank ones are not)", n)
	}
}

func TestOpenAIProtocolDimensionsAndBaseV1(t *testing.T) {
	s := &server{t: t, dim: 256}
	srv := httptest.NewServer(s)
	defer srv.Close()
	e, err := openai.New(openai.Options{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Model: "text-embedding-3-small", Dim: 256, SendDimensions: true})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := e.Embed(context.Background(), []string{"x"})
	if err != nil || len(vs[0]) != 256 {
		t.Fatalf("%v %v", vs, err)
	}
}

func TestOpenAIProtocolRetries(t *testing.T) {
	s := &server{t: t, dim: 1536}
	s.before = func(call int32, _ *http.Request, _ []string) (int, string, map[string]string) {
		switch call {
		case 1:
			return 429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, nil
		case 2:
			return 503, `upstream unavailable`, nil
		case 3:
			return 500, `{"error":{"message":"The server had an error"}}`, map[string]string{"Retry-After": "0"}
		}
		return 0, "", nil
	}
	e := setup(t, s, openai.Options{})
	vs, err := e.Embed(context.Background(), []string{"hello"})
	if err != nil || len(vs) != 1 || vs[0][0] != 5 {
		t.Fatalf("after 3 transient failures: %v %v", vs, err)
	}
	if c := s.calls.Load(); c != 4 {
		t.Errorf("%d calls, want 4", c)
	}
}

func TestOpenAIProtocolErrors(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		body    string
		calls   int32
		wantErr string
	}{
		{"unauthorized is not retried", 401, `{"error":{"message":"Incorrect API key provided"}}`, 1, "Incorrect API key"},
		{"bad request is not retried", 400, `{"error":{"message":"input too long"}}`, 1, "input too long"},
		{"retries run out", 503, `busy`, 3, "HTTP 503"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &server{t: t, dim: 1536}
			s.before = func(int32, *http.Request, []string) (int, string, map[string]string) { return tc.status, tc.body, nil }
			e := setup(t, s, openai.Options{MaxRetries: 2})
			_, err := e.Embed(context.Background(), []string{"x"})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			if c := s.calls.Load(); c != tc.calls {
				t.Errorf("%d calls, want %d", c, tc.calls)
			}
		})
	}
	t.Run("wrong dimension", func(t *testing.T) {
		s := &server{t: t, dim: 8}
		e := setup(t, s, openai.Options{})
		if _, err := e.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "dimensions") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("wrong count", func(t *testing.T) {
		s := &server{t: t, dim: 1536}
		s.before = func(int32, *http.Request, []string) (int, string, map[string]string) {
			return 200, `{"data":[{"embedding":[1],"index":0}]}`, nil
		}
		e := setup(t, s, openai.Options{})
		if _, err := e.Embed(context.Background(), []string{"x", "y"}); err == nil || !strings.Contains(err.Error(), "2 texts") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("attempt timeout then success", func(t *testing.T) {
		s := &server{t: t, dim: 1536}
		s.before = func(call int32, r *http.Request, _ []string) (int, string, map[string]string) {
			if call == 1 {
				<-r.Context().Done() // hang until the client gives up
				return 0, "", nil
			}
			return 0, "", nil
		}
		e := setup(t, s, openai.Options{Timeout: 100 * time.Millisecond})
		if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("options", func(t *testing.T) {
		if _, err := openai.New(openai.Options{Model: "m", Dim: 3}); err == nil {
			t.Error("no BaseURL accepted")
		}
		if _, err := openai.New(openai.Options{BaseURL: "http://x", Model: "nomic-embed-text"}); err == nil {
			t.Error("unknown model without Dim accepted")
		}
	})
}
