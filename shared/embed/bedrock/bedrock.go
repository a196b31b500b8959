// Package bedrock embeds text with Amazon Titan Text Embeddings v2 on
// Amazon Bedrock (bedrockruntime InvokeModel), the default embedder on AWS.
//
// Titan v2 takes one text per request: {"inputText", "dimensions",
// "normalize": true} and answers {"embedding": [...],
// "inputTextTokenCount": n}. Embed sends the texts of a batch concurrently
// (Options.Concurrency); the SDK's retryer handles throttling.
package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/vantagepeers/vantagepeers/shared/embed"
)

// DefaultModel is Titan Text Embeddings v2.
const DefaultModel = "amazon.titan-embed-text-v2:0"

// MaxInputChars is the longest text Titan v2 accepts (50,000 characters);
// longer texts are cut to it.
const MaxInputChars = 50_000

// Invoker is the part of *bedrockruntime.Client the embedder uses.
type Invoker interface {
	InvokeModel(ctx context.Context, in *bedrockruntime.InvokeModelInput, opts ...func(*bedrockruntime.Options)) (*bedrockruntime.InvokeModelOutput, error)
}

// Options configures New.
type Options struct {
	// Client calls Bedrock, usually bedrockruntime.NewFromConfig(cfg).
	Client Invoker
	// Model is the model id (default DefaultModel).
	Model string
	// Dim is 256, 512 or 1024 (default 1024).
	Dim int
	// Concurrency bounds the requests in flight for one Embed call
	// (default 8).
	Concurrency int
}

// Embedder calls Titan Text Embeddings v2.
type Embedder struct {
	c     Invoker
	model string
	dim   int
	conc  int
}

var _ embed.Embedder = (*Embedder)(nil)

// New returns a Titan v2 embedder.
func New(o Options) (*Embedder, error) {
	if o.Client == nil {
		return nil, errors.New("embed/bedrock: a Bedrock runtime client is required")
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	switch o.Dim {
	case 0:
		o.Dim = 1024
	case 256, 512, 1024:
	default:
		return nil, fmt.Errorf("embed/bedrock: dimension %d: Titan v2 supports 256, 512 or 1024", o.Dim)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	return &Embedder{c: o.Client, model: o.Model, dim: o.Dim, conc: o.Concurrency}, nil
}

// Name is "bedrock/<model>/<dim>".
func (e *Embedder) Name() string { return fmt.Sprintf("bedrock/%s/%d", e.model, e.dim) }

// Dim is the vector length.
func (e *Embedder) Dim() int { return e.dim }

type request struct {
	InputText  string `json:"inputText"`
	Dimensions int    `json:"dimensions"`
	Normalize  bool   `json:"normalize"`
}

type response struct {
	Embedding           []float32 `json:"embedding"`
	InputTextTokenCount int       `json:"inputTextTokenCount"`
}

// Embed returns one vector per text, in order. A text without any
// non-space character gets the zero vector without a call (Titan refuses
// empty input). The first error cancels the remaining calls.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		once sync.Once
		ferr error
		sem  = make(chan struct{}, e.conc)
	)
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			out[i] = make([]float32, e.dim)
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			v, err := e.one(ctx, t)
			if err != nil {
				once.Do(func() { ferr = fmt.Errorf("embed/bedrock: text %d: %w", i, err); cancel() })
				return
			}
			out[i] = v
		}()
	}
	wg.Wait()
	if ferr != nil {
		return nil, ferr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func (e *Embedder) one(ctx context.Context, text string) ([]float32, error) {
	body, err := json.Marshal(request{InputText: truncate(text, MaxInputChars), Dimensions: e.dim, Normalize: true})
	if err != nil {
		return nil, err
	}
	res, err := e.c.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId:     aws.String(e.model),
		ContentType: aws.String("application/json"),
		Accept:      aws.String("application/json"),
		Body:        body,
	})
	if err != nil {
		return nil, err
	}
	var r response
	if err := json.Unmarshal(res.Body, &r); err != nil {
		return nil, fmt.Errorf("decoding the response: %w", err)
	}
	if len(r.Embedding) != e.dim {
		return nil, fmt.Errorf("the model returned %d dimensions, want %d", len(r.Embedding), e.dim)
	}
	return r.Embedding, nil
}

// truncate cuts s to at most n characters (runes).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
