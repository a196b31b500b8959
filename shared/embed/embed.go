// Package embed is the embedder port: text in, vector out. embed/local is
// the offline default (model-free); embed/bedrock (Amazon Titan Text
// Embeddings v2) and embed/openai (any OpenAI-compatible /v1/embeddings
// endpoint) call real models.
package embed

import "context"

// Embedder turns texts into vectors of a fixed dimension.
type Embedder interface {
	// Name identifies the model and dimension, e.g. "local-hash-v1/384";
	// vectors from different names are never compared.
	Name() string
	Dim() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
