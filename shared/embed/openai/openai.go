// Package openai embeds text through any OpenAI-compatible embeddings
// endpoint: POST {base}/v1/embeddings with {"model", "input": [...]} and
// a bearer API key, answered by {"data": [{"embedding", "index"}]}.
// OpenAI itself (the seed's text-embedding-3-small), Azure-style gateways,
// vLLM, LiteLLM and a local Ollama all speak it.
//
// Texts go in batches (Options.BatchSize); a batch answered 429 or 5xx, or
// lost to a network error, is retried with exponential backoff and jitter
// (honouring Retry-After), each attempt bounded by Options.Timeout.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/embed"
)

// Options configures New.
type Options struct {
	// BaseURL is the server, e.g. "https://api.openai.com" or
	// "http://127.0.0.1:11434" (Ollama); "/v1/embeddings" is appended (a
	// base already ending in "/v1" gets "/embeddings").
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" (omitted when empty).
	APIKey string
	// Model is the model name, e.g. "text-embedding-3-small".
	Model string
	// Dim is the vector length. It defaults to the model's native length
	// for OpenAI's models and is required for any other model.
	Dim int
	// SendDimensions asks the server for Dim dimensions ("dimensions" in
	// the request; text-embedding-3-* shorten their vectors this way).
	SendDimensions bool
	// BatchSize is the number of texts per request (default 64).
	BatchSize int
	// MaxRetries is the number of retries of a failed request (default 4).
	MaxRetries int
	// Timeout bounds one HTTP attempt (default 30 s).
	Timeout time.Duration
	// HTTPClient defaults to a client with no overall timeout (attempts
	// are bounded by Timeout).
	HTTPClient *http.Client
	// MinBackoff is the first retry's delay before jitter (default 500 ms);
	// each retry doubles it, up to 20 s.
	MinBackoff time.Duration
}

var nativeDims = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
}

// Embedder calls an OpenAI-compatible embeddings endpoint.
type Embedder struct {
	url     string
	o       Options
	client  *http.Client
	backoff time.Duration
}

var _ embed.Embedder = (*Embedder)(nil)

// New returns an embedder for o.
func New(o Options) (*Embedder, error) {
	if o.BaseURL == "" {
		return nil, errors.New("embed/openai: BaseURL is required (e.g. https://api.openai.com)")
	}
	if o.Model == "" {
		return nil, errors.New("embed/openai: Model is required (e.g. text-embedding-3-small)")
	}
	if o.Dim <= 0 {
		o.Dim = nativeDims[o.Model]
		if o.Dim == 0 {
			return nil, fmt.Errorf("embed/openai: Dim is required for model %q", o.Model)
		}
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 64
	}
	if o.MaxRetries < 0 {
		o.MaxRetries = 0
	} else if o.MaxRetries == 0 {
		o.MaxRetries = 4
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	c := o.HTTPClient
	if c == nil {
		c = &http.Client{}
	}
	base := strings.TrimRight(o.BaseURL, "/")
	url := base + "/v1/embeddings"
	if strings.HasSuffix(base, "/v1") {
		url = base + "/embeddings"
	}
	return &Embedder{url: url, o: o, client: c, backoff: o.MinBackoff}, nil
}

// Name is "openai/<model>/<dim>".
func (e *Embedder) Name() string { return fmt.Sprintf("openai/%s/%d", e.o.Model, e.o.Dim) }

// Dim is the vector length.
func (e *Embedder) Dim() int { return e.o.Dim }

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type response struct {
	Data []struct {
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	} `json:"data"`
}

type apiError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	} `json:"error"`
}

// Embed returns one vector per text, in order. Blank texts get the zero
// vector without being sent (servers refuse empty input).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var idx []int
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		vs, err := e.post(ctx, batch)
		if err != nil {
			return err
		}
		for j, v := range vs {
			out[idx[j]] = v
		}
		idx, batch = idx[:0], batch[:0]
		return nil
	}
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			out[i] = make([]float32, e.o.Dim)
			continue
		}
		idx = append(idx, i)
		batch = append(batch, t)
		if len(batch) == e.o.BatchSize {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// post sends one batch, retrying what can succeed later.
func (e *Embedder) post(ctx context.Context, input []string) ([][]float32, error) {
	req := request{Model: e.o.Model, Input: input, EncodingFormat: "float"}
	if e.o.SendDimensions {
		req.Dimensions = e.o.Dim
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	delay := e.backoff
	for attempt := 0; ; attempt++ {
		vs, retryAfter, err := e.attempt(ctx, body, len(input))
		if err == nil {
			return vs, nil
		}
		var perm *permanent
		if errors.As(err, &perm) || attempt >= e.o.MaxRetries || ctx.Err() != nil {
			return nil, fmt.Errorf("embed/openai: %w", err)
		}
		wait := delay/2 + rand.N(delay/2+1) // jitter in [delay/2, delay]
		if retryAfter > wait {
			wait = retryAfter
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, fmt.Errorf("embed/openai: %w (last error: %v)", ctx.Err(), err)
		}
		delay = min(delay*2, 20*time.Second)
	}
}

// permanent marks an error that a retry cannot fix (4xx but 429, a
// malformed answer).
type permanent struct{ err error }

func (p *permanent) Error() string { return p.err.Error() }
func (p *permanent) Unwrap() error { return p.err }

func (e *Embedder) attempt(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, &permanent{err}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if e.o.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+e.o.APIKey)
	}
	res, err := e.client.Do(hr)
	if err != nil {
		return nil, 0, err // network error or attempt timeout: retry
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 256<<20))
	if err != nil {
		return nil, 0, err
	}
	if res.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(raw))
		var ae apiError
		if json.Unmarshal(raw, &ae) == nil && ae.Error.Message != "" {
			msg = ae.Error.Message
		}
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		err := fmt.Errorf("%s: HTTP %d: %s", e.url, res.StatusCode, msg)
		if res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500 {
			return nil, retryAfter(res.Header.Get("Retry-After")), err
		}
		return nil, 0, &permanent{err}
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, 0, &permanent{fmt.Errorf("decoding the response: %w", err)}
	}
	if len(r.Data) != n {
		return nil, 0, &permanent{fmt.Errorf("the server returned %d embeddings for %d texts", len(r.Data), n)}
	}
	sort.Slice(r.Data, func(i, j int) bool { return r.Data[i].Index < r.Data[j].Index })
	out := make([][]float32, n)
	for i, d := range r.Data {
		if d.Index != i {
			return nil, 0, &permanent{fmt.Errorf("the server returned embedding indexes out of range or repeated")}
		}
		if len(d.Embedding) != e.o.Dim {
			return nil, 0, &permanent{fmt.Errorf("the server returned %d dimensions, want %d (set Dim to the model's length, or SendDimensions)", len(d.Embedding), e.o.Dim)}
		}
		out[i] = d.Embedding
	}
	return out, 0, nil
}

// retryAfter reads a Retry-After header in seconds (capped at one minute).
func retryAfter(h string) time.Duration {
	s, err := strconv.Atoi(strings.TrimSpace(h))
	if err != nil || s <= 0 {
		return 0
	}
	return min(time.Duration(s)*time.Second, time.Minute)
}
